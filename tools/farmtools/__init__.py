"""Code shared by the Python tools (tools/experiments, tools/sim, tools/net, tools/bench).

Scripts stay runnable by path (`tools/sweep`, `tools/experiments/plots.py`, ...): each puts the
tools/ folder on sys.path and imports `farmtools.<module>`, so a table or a computation that
several scripts need lives here once instead of being copied into each of them.

  networks    the named emulated networks (lab, dorm, <N>ms[/<M>mbit]): delays, bandwidths,
              delay_proxy.py arguments
  run_window  a run's render window from its stats JSON (first assignment to last accepted
              block, the simulator's definition), for real and simulated runs alike
  sim_cluster the one writer of `farm sim` / `farm plan` cluster files (docs/cli.md's format)
  sweep_data  reading the sweep CSV and aggregating its repetitions (medians, spreads, the
              best configuration), for plots.py and report.py
"""
