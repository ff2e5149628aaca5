"""Code shared by the Python tools, and the one place that knows where the repository is.

How the tools import each other. tools/ is the import root: its folders are packages
(experiments, sim, bench, net, compare, farmtools), and a module of tools/ imports
another one by its package path from there (`from experiments import cluster`,
`from sim.validate import link_of`, `from farmtools.run_window import run_window`), never by a
bare sibling name, so each module is loaded once under one name whoever imports it.

Scripts stay runnable by path, exactly as README.md, docs/ and results/ write them
(`tools/sweep`, `tools/sim/validate.py --quick`, `python3 tools/bench/convergence.py`). Python
puts the script's own folder first on sys.path, so:
  - a script directly in tools/ (tools/reproduce, tools/sweep, tools/cpu_quota, tools/chaos.py,
    tools/check_*.py) needs nothing: tools/ is already there;
  - a script one folder down that imports anything of tools/ (if only ROOT) starts with the one
    bootstrap line, the same in every such script (grep for it; in a script that is imported too,
    sim/compare_runs.py, sim/validate.py, net/delay_proxy.py, it repeats what is there, harmlessly):

        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: farmtools/__init__.py

  - a module that is only imported (tools/experiments/sweep.py, tools/sim/scale_grid.py, ...)
    has no bootstrap: whoever imported it already has tools/ on sys.path;
  - tests/tools/toolbox.py does the same for the unit tests (`import toolbox` first).
Why not `python3 -m sim.validate`: every documented command runs scripts by path, and a module
run with -m needs the working directory at tools/; a .pth file or PYTHONPATH would need setting
up on every machine the tools run on. Self-contained on purpose, outside this scheme: the scripts
run inside Blender (tools/compare/cycles_render.py, tools/blender/) and the root-run test-cluster
harness tools/cluster/ (standard library only, its modules found beside its two commands).

ROOT is the repository root, TOOLS the tools/ folder; scripts take them from here.

  bounds      lower bounds on a run's length (farm/control/makespan_bound.h's definitions)
  cost_map    reading a `--cost-map` file, a block's cost as CostMap::cost computes it
  local_farm  the one harness for farm runs on this machine: master, proxies, relays, workers,
              where each listens, the master's stats JSON (bench/, experiments/, chaos.py)
  networks    the named emulated networks (lab, dorm, <N>ms[/<M>mbit]): delays, bandwidths,
              delay_proxy.py arguments
  run_window  a run's render window from its stats JSON (first assignment to last accepted
              block, the simulator's definition), for real and simulated runs alike
  sim_cluster the one writer of `farm sim` / `farm plan` cluster files (docs/cli.md's format)
  sweep_data  reading the sweep CSV and aggregating its repetitions (medians, spreads, the
              best configuration), for plots.py and report.py
"""
import os

TOOLS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TOOLS)
