"""Reading the sweep CSV (tools/sweep, tools/reproduce -> sweep.csv) and aggregating it: the one
place that decides which rows are repetitions of one configuration, and that a configuration's
figure is the MEDIAN of its repetitions (min..max as the spread). plots.py and report.py both use
it, so a table and the plot beside it cannot aggregate the same rows differently.

Standard library only: report.py and the tests run without numpy.

Two ways to read a value, on purpose:
  column(row, name)  the CSV cell as a number (what report.py tabulates);
  metric(row, name)  the same, except 'speedup' and 'ideal', derived from the unrounded times
                     (single_s / window_s, single_s / lower_bound_s) for the plots.
"""
import csv
import math
import os
import statistics
import sys

# Setting columns: rows equal in all of these (and in width x height, "res") are repetitions.
SETTINGS = ("experiment", "scene", "res", "spp", "mode", "policy", "block", "min_block", "wait", "max_copies",
            "cluster", "workers", "speeds", "network", "threads")
NUMERIC = {"spp", "block", "min_block", "wait", "max_copies", "workers", "threads"}
POLICY_ORDER = ("fixed", "seed", "adaptive")


# ----------------------------------------------------------------------------- cells
def num(text):
    """Float of a CSV cell, None when empty or not a finite number."""
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def fmt(v):
    """Short text of a number: 4.0 -> '4', 0.25 -> '0.25'."""
    return f"{v:g}" if isinstance(v, (int, float)) else str(v)


def setting(row, col):
    """Canonical text of a setting ('res' is WxH; numbers normalised so '4' == '4.0')."""
    if col == "res":
        w, h = num(row.get("width")), num(row.get("height"))
        return f"{w:g}x{h:g}" if w is not None and h is not None else ""
    text = (row.get(col) or "").strip()
    if col in NUMERIC and num(text) is not None:
        return fmt(num(text))
    return text


def column(row, name):
    """A numeric cell as written, None when empty."""
    return num(row.get(name))


def metric(row, name):
    """A measured value; 'speedup' and 'ideal' are derived from the times when they are there."""
    if name == "speedup":
        single, window = num(row.get("single_s")), num(row.get("window_s"))
        if single and window and window > 0:
            return single / window
        return num(row.get("speedup"))
    if name == "ideal":
        single, lower = num(row.get("single_s")), num(row.get("lower_bound_s"))
        if single and lower and lower > 0:
            return single / lower
        return num(row.get("ideal_speedup"))
    return num(row.get(name))


# ----------------------------------------------------------------------------- rows
def read_rows(path):
    """Every data row of a sweep CSV, as dicts of text."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def select(rows, **eq):
    """Rows whose cells equal the given values exactly as text (report.py's table lookups)."""
    return [r for r in rows if all(r[k] == str(v) for k, v in eq.items())]


def experiment_rows(path, experiment, func, need=("window_s",), modes=("farm",)):
    """Rows of one experiment (and mode) that have every metric in `need`. Raises
    ValueError("<func>: no rows for experiment X in FILE ...") when none are left, so a plot
    without data is skipped with the reason."""
    if not os.path.exists(path):
        raise ValueError(f"{func}: no rows for experiment {experiment!r} in {path} (the file does not exist)")
    rows = read_rows(path)
    if not rows:
        raise ValueError(f"{func}: no rows for experiment {experiment!r} in {path} (the file has no data rows)")
    rows = [r for r in rows if (r.get("experiment") or "").strip() == experiment]
    if modes:
        rows = [r for r in rows if (r.get("mode") or "").strip() in modes]
    where = f" (mode {'/'.join(modes)})" if modes else ""
    if not rows:
        raise ValueError(f"{func}: no rows for experiment {experiment!r} in {path}{where}")
    good = [r for r in rows if all(metric(r, n) is not None for n in need)]
    if not good:
        raise ValueError(f"{func}: no rows for experiment {experiment!r} in {path}{where} with a value for "
                         f"{', '.join(need)} ({len(rows)} rows without: failed runs?)")
    if len(good) < len(rows):
        print(f"plots: {func}: ignored {len(rows) - len(good)} rows of experiment {experiment!r} without "
              f"{', '.join(need)}", file=sys.stderr)
    return good


# ----------------------------------------------------------------------------- grouping
def group(rows, cols):
    """{tuple of setting texts: [rows]} in first-seen order."""
    out = {}
    for r in rows:
        out.setdefault(tuple(setting(r, c) for c in cols), []).append(r)
    return out


def configs(rows):
    """Repetitions grouped: {settings tuple: [rows]}."""
    return group(rows, SETTINGS)


def varying(rows, cols):
    """The settings among `cols` that take more than one value in `rows`."""
    return [c for c in cols if len({setting(r, c) for r in rows}) > 1]


def varying_within(rows, cols, by):
    """Settings that vary among rows with the same `by` values (the rtt sweep's image size
    follows the block size: that is no separate series)."""
    groups = group(rows, by).values()
    return [c for c in cols if c not in by and any(len({setting(r, c) for r in g}) > 1 for g in groups)]


def policies(rows):
    """The policies present, fixed / seed / adaptive first, others after in name order."""
    present = {setting(r, "policy") for r in rows}
    return [p for p in POLICY_ORDER if p in present] + sorted(present - set(POLICY_ORDER))


# ----------------------------------------------------------------------------- aggregates
def median(rows, name, read=column):
    """Median of a value over the rows that have it, None when none has."""
    vals = [v for v in (read(r, name) for r in rows) if v is not None]
    return statistics.median(vals) if vals else None


def spread(rows, name, read=metric):
    """(median, min, max) of a value over the rows that have it; (None, None, None) when none has."""
    vals = [v for v in (read(r, name) for r in rows) if v is not None]
    if not vals:
        return None, None, None
    return statistics.median(vals), min(vals), max(vals)


def best_config(rows, cols=SETTINGS, name="window_s"):
    """(key, rows, median) of the configuration (rows equal in `cols`) with the lowest median
    `name`; the first such configuration on a tie; (None, [], None) without rows."""
    groups = group(rows, cols)
    if not groups:
        return None, [], None
    key = min(groups, key=lambda k: median(groups[k], name))
    return key, groups[key], median(groups[key], name)
