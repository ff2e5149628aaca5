"""The delaying proxy (emulated networks) and its check. A package of tools/: see
tools/farmtools/__init__.py for how the tools import."""
