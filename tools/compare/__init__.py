"""Comparisons with Blender Cycles. A package of tools/: see tools/farmtools/__init__.py for how
the tools import (cycles_render.py runs inside Blender and imports nothing of tools/)."""
