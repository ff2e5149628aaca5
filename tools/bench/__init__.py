"""Benchmarks of the farm, its renderer and its backends. A package of tools/: see
tools/farmtools/__init__.py for how the tools import."""
