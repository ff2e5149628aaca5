"""8. Space-time chart of one run's stats JSON (`farm master/render --stats`): the view the
paper's authors had from XPVM.
"""
import json
import math
import os

from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .common import BLOCK_SIDES, _save, plt


def _load_stats(path):
    if not os.path.exists(path):
        raise ValueError(f"plot_gantt: no blocks in {path} (the file does not exist)")
    try:
        with open(path) as f:
            data = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"plot_gantt: no blocks in {path} (not JSON: {e})") from None
    if not isinstance(data, dict) or not data.get("blocks"):
        raise ValueError(f"plot_gantt: no blocks in {path}")
    return data


def _lease_intervals(data, end):
    """{worker id: [(t0, t1, kind, size)]}; kind is accepted | wasted | open (never received)."""
    left = {w["id"]: w.get("left", -1.0) for w in data.get("workers", [])}
    out = {}
    for b in data["blocks"]:
        start, finish, outcome = b.get("start", -1.0), b.get("finish", -1.0), b.get("outcome", "")
        if start < 0 or finish < 0:
            stop = left.get(b["worker"], -1.0) if outcome == "lost" else -1.0
            t0, t1, kind = b.get("assigned", 0.0), stop if stop >= 0 else end, "open"
        else:
            t0, t1, kind = start, finish, "accepted" if outcome == "accepted" else "wasted"
        out.setdefault(b["worker"], []).append((t0, max(t1, t0), kind, b.get("size", 0)))
    return out


def _partition(intervals, slack):
    """Greedy interval partitioning: [(interval, sub-lane)], no overlap inside a sub-lane beyond
    `slack` seconds (start/finish are estimated back from the receipt, so back-to-back leases of
    one thread can overlap by a few milliseconds). Leases never received go last, so the real
    work stays on the top sub-lanes."""
    ends, placed = [], []
    for iv in sorted(intervals, key=lambda iv: (iv[2] == "open", iv[0], iv[1])):
        lane = next((i for i, e in enumerate(ends) if e <= iv[0] + slack), None)
        if lane is None:
            ends.append(iv[1])
            lane = len(ends) - 1
        ends[lane] = iv[1]
        placed.append((iv, lane))
    return placed, max(1, len(ends))


def _size_colours(data):
    sizes = sorted(set(BLOCK_SIDES) | {b.get("size", 0) for b in data["blocks"]})
    cmap = plt.get_cmap("viridis", len(sizes))
    return {s: cmap(i) for i, s in enumerate(sizes)}


def _decision_ticks(ax, decisions, layout, end):
    """Red tick per policy decision across its worker's band; 'from→to' labels (when few) go
    above the band, or below when the previous label of that worker is too close."""
    last = {}
    for d in sorted(decisions, key=lambda d: d.get("time", 0)):
        if d.get("worker") not in layout:
            continue
        y0, n, _ = layout[d["worker"]]
        ax.vlines(d["time"], y0 - 0.05, y0 + n + 0.05, colors="red", lw=1.4, zorder=4)
        if len(decisions) <= 40:
            prev_t, prev_above = last.get(d["worker"], (-math.inf, False))
            above = not (prev_above and d["time"] - prev_t < 0.04 * end)
            ax.text(d["time"], y0 - 0.05 if above else y0 + n + 0.05, f"{d.get('from')}→{d.get('to')}", fontsize=6,
                    color="red", ha="center", va="bottom" if above else "top")
            last[d["worker"]] = (d["time"], above)


def plot_gantt(stats_json, out, title=None):
    """Space-time chart of one run: lanes per worker, leases coloured by block side (XPVM's view)."""
    data = _load_stats(stats_json)
    times = [t for b in data["blocks"] for t in (b.get("finish", -1), b.get("assigned", -1))]
    end = float(data.get("makespan_seconds") or 0) or max(times)
    workers = {w["id"]: w for w in data.get("workers", [])}
    lanes = _lease_intervals(data, end)
    for wid in lanes:
        workers.setdefault(wid, {"id": wid, "name": "worker", "threads": 1, "joined": -1, "left": -1})
    colours = _size_colours(data)
    layout, y = {}, 0.0
    for wid in sorted(workers):
        placed, n = _partition(lanes.get(wid, []), slack=max(0.02, 0.002 * end))
        layout[wid] = (y, n, placed)
        y += n + 0.5
    fig, ax = plt.subplots(figsize=(12, min(30.0, 1.6 + 0.38 * y)))
    edge = dict(edgecolor="white", linewidth=0.3) if len(data["blocks"]) < 1500 else dict(edgecolor="none")
    for wid, (y0, n, placed) in layout.items():
        groups = {}
        for (t0, t1, kind, size), lane in placed:
            groups.setdefault((kind, size, lane), []).append((t0, t1 - t0))
        for (kind, size, lane), spans in groups.items():
            yr = (y0 + lane + 0.1, 0.8)
            if kind == "accepted":
                ax.broken_barh(spans, yr, facecolors=colours[size], **edge)
            elif kind == "wasted":
                ax.broken_barh(spans, yr, facecolors="none", edgecolor="grey", hatch="////", linewidth=0.8)
            else:
                ax.broken_barh(spans, yr, facecolors="none", edgecolor="dimgrey", linestyle="--", linewidth=0.9)
        if y0 > 0:
            ax.axhline(y0 - 0.25, color="lightgrey", lw=0.8)
        w = workers[wid]
        mid = y0 + n / 2
        if w.get("joined", -1) >= 0:
            ax.plot(w["joined"], mid, marker=">", color="black", markersize=7, zorder=4)
        if w.get("left", -1) >= 0:
            died = w.get("died")
            ax.plot(w["left"], mid, marker="X" if died else "s", color="firebrick" if died else "black", markersize=7,
                    zorder=4)
    decisions = data.get("decisions") or []
    _decision_ticks(ax, decisions, layout, end)
    ax.set_yticks([y0 + n / 2 for y0, n, _ in layout.values()],
                  [f"{workers[w].get('name', 'worker')} ({w})" + (f"\n{workers[w]['threads']} threads"
                   if workers[w].get("threads", 1) > 1 else "") for w in layout])
    ax.set_ylim(y - 0.4, -0.3)
    ax.set_xlim(0, end)
    ax.set_xlabel("time since master start (s)")
    ax.set_ylabel("worker (sub-lanes: overlapping leases)")
    ax.grid(True, axis="x", alpha=0.35)
    used = sorted({b.get("size", 0) for b in data["blocks"] if b.get("outcome") == "accepted"})
    handles = [Patch(facecolor=colours[s], label=f"{s}") for s in used]
    handles += [Patch(facecolor="none", edgecolor="grey", hatch="////", label="cancelled / late"),
                Patch(facecolor="none", edgecolor="dimgrey", linestyle="--",
                      label="never received\n(assigned → end)"),
                Line2D([], [], color="red", lw=1.4, label="policy decision"),
                Line2D([], [], ls="", marker=">", color="black", label="joined"),
                Line2D([], [], ls="", marker="s", color="black", label="left"),
                Line2D([], [], ls="", marker="X", color="firebrick", label="died")]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="block side", fontsize=8)
    if title is None:
        scene = os.path.splitext(os.path.basename(str(data.get("scene", ""))))[0]
        title = (f"{scene} {data.get('width')}x{data.get('height')}, policy {data.get('policy')}, "
                 f"block {data.get('block_size')}: {len(data['blocks'])} leases on {len(workers)} workers, "
                 f"{len(decisions)} decisions, makespan {end:.2f} s")
    ax.set_title(title, fontsize=11)
    return _save(fig, out)
