"""The plots behind tools/experiments/plots.py (its docstring describes each), one module per
figure family; common.py holds what they share."""
