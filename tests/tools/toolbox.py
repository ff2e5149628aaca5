"""Puts tools/ on sys.path for the unit tests of tests/tools, which then import the tools as the
tools import each other (tools/farmtools/__init__.py): `import toolbox` first, then
`from farmtools import ROOT`, `from sim import compare_runs`, `from experiments.sweep import Sweep`.
One file alone: `python3 -m unittest discover -s tests/tools -p test_run_window.py`, or
`python3 tests/tools/test_run_window.py` (either way this folder is on sys.path)."""
import os
import sys

_TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tools")
if _TOOLS not in sys.path:
    sys.path.insert(0, _TOOLS)
