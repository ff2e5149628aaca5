"""The simulator studies and checks (`farm sim`, `farm plan`). A package of tools/: see
tools/farmtools/__init__.py for how the tools import."""
