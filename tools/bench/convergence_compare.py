"""--compare-rev of tools/bench/convergence.py --adaptive: the same report as committed at an earlier
commit, read back from git (its measured points, results/..._points.csv, and its targets, the
.csv), so that the ratios of that run can be given at this run's targets beside this run's.
Imported by convergence_adaptive.py.

The earlier ratios are interpolated again from its points with this run's code
(convergence_equal_quality.py): at the earlier run's own targets they are the numbers its report
printed.
"""
import csv
import io
import os
import subprocess

from bench.convergence_equal_quality import equal_quality
from farmtools import ROOT
from farmtools.sweep_data import num as _num  # a CSV cell's float, None when empty or not finite


def _git_show(rev, path):
    rel = os.path.relpath(path, ROOT)
    r = subprocess.run(["git", "-C", ROOT, "show", f"{rev}:{rel}"], capture_output=True, text=True)
    if r.returncode != 0:
        raise OSError(f"--compare-rev: git show {rev}:{rel} failed: {r.stderr.strip()}")
    return list(csv.DictReader(io.StringIO(r.stdout)))


def load(rev, out_csv):
    """-> {scene: {'rows': rows as convergence_equal_quality wants them, 'targets': [...]}} of the
    report at `rev` whose equal-quality CSV is `out_csv` (a path in the repository)."""
    points = _git_show(rev, os.path.splitext(out_csv)[0] + "_points.csv")
    table = _git_show(rev, out_csv)
    out = {}
    for p in points:
        s = out.setdefault(p["scene"], {"rows": [], "targets": []})
        r = {"seconds": _num(p["seconds"]), "pt_seconds": _num(p["cycles_pt_seconds"]), "rmse": _num(p["rmse"]),
             "spp": int(p["spp_or_max_spp"]), "threshold": _num(p["threshold"]),
             "counts": {k: _num(p[f"samples_{k}"]) for k in ("mean", "p10", "p50", "p90")}
             | {k: _num(p[k]) for k in ("share_at_min", "share_at_max")}}
        s["rows"].append({"series": p["series"], p["renderer"]: r})
    for t in table:
        out.setdefault(t["scene"], {"rows": [], "targets": []})["targets"].append(float(t["target_rmse"]))
    return out


def compare(prev, targets):
    """The earlier run's equal-quality table at `targets` (None if that run had no such scene)."""
    if not prev or not prev["rows"]:
        return None
    return equal_quality(prev["rows"], targets)


def ours_adaptive(prev):
    """The earlier run's adaptive renders of ours: {threshold: point}."""
    if not prev:
        return {}
    return {r["ours"]["threshold"]: r["ours"] for r in prev["rows"] if r["series"] == "adaptive" and "ours" in r}
