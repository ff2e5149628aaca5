"""Equal-quality time for tools/bench/convergence.py --adaptive: the time each renderer needs to
reach a given RMSE, interpolated on its measured (time, RMSE) points, and the ratio Cycles / ours.
Pure numbers, no files. Imported by convergence.py.

A series is one renderer's renders of one kind (fixed spp, or adaptive at several thresholds), with
one time kind (ours: render phase; Cycles: render call, or path tracing only). Its points are
reduced to their Pareto front (sorted by time, each point kept only if its RMSE is below every
faster one's: a slower render that is no better is never the way to a target), and the time for a
target RMSE is interpolated linearly in log(time) against log(RMSE) between the two front points
that bracket the target. No extrapolation: a target outside a series' measured RMSEs has no time.
"Best" is the lowest of the fixed time, the adaptive time and the time on the Pareto front of both
series' points together (which fills the gaps where neither series alone brackets the target:
between two points of different series it is a guess that tuning either series, spp or threshold,
would reach; it is named "fixed+adaptive" then).
"""
import math

# The time kinds: (renderer, key in the render's meta, label).
TIME_KINDS = (("ours", "seconds", "ours"), ("cycles", "seconds", "Cycles render call"),
              ("cycles", "pt_seconds", "Cycles path tracing"))
SERIES = ("fixed", "adaptive")


def front(points):
    """points [(time, rmse)] -> the Pareto front, sorted by time (finite, positive values only)."""
    pts = sorted((t, e) for t, e in points if t and e and t > 0 and e > 0 and math.isfinite(t) and math.isfinite(e))
    out = []
    for t, e in pts:
        if not out or e < out[-1][1]:
            out.append((t, e))
    return out


def time_at(points, target, with_pair=False):
    """The time at which the series' front reaches RMSE `target` (log-log interpolation); None if
    the target is outside its measured range. Points may carry a third item (a label); with_pair
    also returns the labels of the two bracketing points."""
    pts = [tuple(p) + (None,) * (3 - len(p)) for p in points]
    f = front([p[:2] for p in pts])
    lab = {p[:2]: p[2] for p in pts}
    hit = None
    for (t0, e0), (t1, e1) in zip(f, f[1:]):
        if e0 >= target >= e1:
            w = (math.log(e0) - math.log(target)) / (math.log(e0) - math.log(e1))
            hit = (math.exp(math.log(t0) + w * (math.log(t1) - math.log(t0))),
                   (lab[(t0, e0)], lab[(t1, e1)]) if w not in (0, 1) else ((lab[(t0, e0)],) if w == 0 else (lab[(t1, e1)],)))
            break
    if hit is None and len(f) == 1 and f[0][1] == target:
        hit = (f[0][0], (lab[f[0]],))
    if with_pair:
        return hit if hit else (None, ())
    return hit[0] if hit else None


def rmse_range(points):
    f = front(points)
    return (f[-1][1], f[0][1]) if f else None


def nice_targets(lo, hi, count=3):
    """Up to `count` round RMSE values (1, 1.5, 2, 3, 5, 7 x 10^k) inside [lo, hi], spread evenly
    in log scale; [] if the range holds none."""
    if not (lo and hi and lo < hi):
        return []
    cands = []
    k = math.floor(math.log10(lo)) - 1
    while 10 ** k <= hi * 10:
        for m in (1, 1.5, 2, 3, 5, 7):
            v = round(m * 10 ** k, 12)
            if lo <= v <= hi:
                cands.append(v)
        k += 1
    if len(cands) <= count:
        return cands
    # Spread: the candidates nearest to count points evenly spaced in log between the extremes.
    want = [math.log(cands[0]) + i * (math.log(cands[-1]) - math.log(cands[0])) / (count - 1) for i in range(count)]
    picked = []
    for w in want:
        c = min((c for c in cands if c not in picked), key=lambda c: abs(math.log(c) - w))
        picked.append(c)
    return sorted(set(picked), reverse=True)


def series_points(rows, who, key):
    """rows: [{'series', 'ours': r, 'cycles': r}] (r with 'rmse' and times) -> {series: [(t, rmse)]}."""
    out = {s: [] for s in SERIES}
    for row in rows:
        r = row.get(who)
        if r is not None:
            out[row["series"]].append((r.get(key), r.get("rmse")))
    return out


def choose_targets(rows, count=3):
    """Targets every series of both renderers reaches (all four ranges overlap); failing two such,
    those of the overlap of the two renderers' best (fixed and adaptive together) ranges as well."""
    ranges, best = [], []
    for who, key, _label in TIME_KINDS:
        pts = series_points(rows, who, key)
        ranges += [rmse_range(p) for p in pts.values()]
        best.append(rmse_range([p for s in SERIES for p in pts[s]]))
    common = []
    if all(ranges):
        common = nice_targets(max(r[0] for r in ranges), min(r[1] for r in ranges), count)
        if len(common) >= 2:
            return common
    if all(best):
        # Keep the one target every series reaches, if there is one, with the best curves' ones.
        return sorted(set(common + nice_targets(max(b[0] for b in best), min(b[1] for b in best), count)),
                      reverse=True)
    return common


def equal_quality(rows, targets):
    """-> one dict per target: times per (renderer, time key, series or 'best') and the ratios
    Cycles / ours (best against best, fixed against fixed, adaptive against adaptive), with the
    series each 'best' came from."""
    table = []
    for target in targets:
        row = {"target": target, "times": {}, "best_from": {}, "ratios": {}}
        for who, key, _label in TIME_KINDS:
            pts = series_points(rows, who, key)
            times = {s: time_at(pts[s], target) for s in SERIES}
            t, labels = time_at([p + (s,) for s in SERIES for p in pts[s]], target, with_pair=True)
            cands = {s: times[s] for s in SERIES if times[s] is not None}
            if t is not None:
                cands.setdefault("+".join(s for s in SERIES if s in labels), t)
                cands["+".join(s for s in SERIES if s in labels)] = min(t, cands["+".join(s for s in SERIES if s in labels)])
            best = min(cands, key=cands.get) if cands else None
            times["best"] = cands[best] if best else None
            row["best_from"][(who, key)] = best
            for s, t in times.items():
                row["times"][(who, key, s)] = t
        for key in ("seconds", "pt_seconds"):
            for s in SERIES + ("best",):
                c, o = row["times"][("cycles", key, s)], row["times"][("ours", "seconds", s)]
                row["ratios"][(key, s)] = c / o if c and o else None
        # What adaptivity buys each renderer: its fixed time / its adaptive time.
        for who, key, _label in TIME_KINDS:
            f, a = row["times"][(who, key, "fixed")], row["times"][(who, key, "adaptive")]
            row["ratios"][("adaptive_gain", who, key)] = f / a if f and a else None
        table.append(row)
    return table
