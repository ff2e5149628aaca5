"""The real-farm experiments: the sweep, emulated clusters, plots and report (tools/reproduce,
tools/sweep). A package of tools/: see tools/farmtools/__init__.py for how the tools import."""
