"""The scale study's grid and its pure parts (tools/sim/scale_study.py runs it): the named
constants of the setup, the cluster files, how big a job is at each N, a flat cost map, and the
aggregation of runs to medians, worst cases and the best fixed block size.

Standard library only, so tests/tools can check it without numpy or a farm binary.
"""
import csv
import math
import statistics

from farmtools.sim_cluster import cluster_text
from farmtools.sweep_data import num

# ----------------------------------------------------------------------------- setup
SIZES = (2, 10, 100, 1000, 10000)        # workers N
IDEAL_S = 60.0             # ideal length, work / total speed, at every N (weak scaling)
WIDTH, HEIGHT = 1920, 1080  # every frame; more frames as N grows
BLOCKS_PER_WORKER = 10     # at least this many S0=32 blocks per worker (frames chosen to match)
STARTUP_S = (0.2, 2.0)     # every worker: join -> first request (process start, scene load)
LATE_SHARE = 0.05          # 5% of the workers join during the first LATE_WINDOW of the ideal length
LATE_WINDOW = 0.2
FAIL_SHARE = 0.02          # 2% go silent at a time uniform in FAIL_WINDOW of the ideal length
FAIL_WINDOW = (0.1, 0.9)
PER_BLOCK_OVERHEAD_MS = 0.15  # the farm's own cost per block on a worker (results/bench_farm.md)
WAIT_S, MAX_COPIES = 2, 2
SEEDS = (1, 2)             # seeds at N <= 1000
SEEDS_LARGEST = (1,)       # seeds at N = 10000 (one run there costs as much as all the rest)

# Clusters: speed of every worker, a number or a uniform [lo, hi] range (relative to the thread
# that made the cost map), drawn per worker from the seed.
CLUSTERS = {"homo": (1.0, 1.0), "hetero": (0.1, 1.0)}
# Networks: one-way latency (ms, number or range) and bandwidth per direction per worker.
NETWORKS = {"lan": ((0.1, 0.1), 1000), "wan": ((0.0, 100.0), 100)}


class Policy:
    """One column of the study: a label, `farm sim --policy`, its S0 and extra arguments."""

    def __init__(self, label, policy, block, extra=()):
        self.label, self.policy, self.block, self.extra = label, policy, block, tuple(extra)

    @property
    def fixed(self):
        return self.policy == "fixed"

    def args(self):
        return ["--policy", self.policy, "--block", str(self.block)] + list(self.extra)


# Extend here: a new Policy gets its own column in every table, CSV row and plot.
FIXED_BLOCKS = (8, 16, 32, 64, 128)
POLICIES = [Policy(f"fixed-{b}", "fixed", b) for b in FIXED_BLOCKS] + [
    Policy("seed", "seed", 64),
    Policy("adaptive", "adaptive", 64),
    Policy("factoring", "factoring", 128),
    Policy("factoring+cm", "factoring", 128, ["--cost-model"]),
    # The cost model a real master has: a preview's map (a quarter of the size, 1 spp), not the
    # map the run costs. PREVIEW_MAP is replaced by the map's preview (scale_study.PREVIEW_MAPS).
    Policy("factoring+preview", "factoring", 128, ["--cost-model-map", "PREVIEW_MAP"]),
]
PREVIEW_MAP = "PREVIEW_MAP"
BEST_FIXED = "best fixed"


# ----------------------------------------------------------------------------- clusters, jobs
def _round_half_up(x):
    return int(math.floor(x + 0.5))


def group_counts(n):
    """(steady, late, failing) workers out of n: 5% late, 2% failing, rounded half up."""
    late, failing = _round_half_up(n * LATE_SHARE), _round_half_up(n * FAIL_SHARE)
    return n - late - failing, late, failing


def cluster_toml(n, cluster, network, ideal_s=IDEAL_S):
    """The cluster file (farm/sim/cluster_spec.h) of n workers of `cluster` on `network`."""
    speed = CLUSTERS[cluster]
    latency, bandwidth = NETWORKS[network]
    steady, late, failing = group_counts(n)
    groups = [("steady", steady, {}), ("late", late, {"join": (0.0, LATE_WINDOW * ideal_s)}),
              ("failing", failing, {"fail": tuple(f * ideal_s for f in FAIL_WINDOW)})]
    return cluster_text([dict(name=name, count=count, speed=speed, startup=STARTUP_S, **extra)
                         for name, count, extra in groups if count > 0],
                        network={"latency_ms": latency, "bandwidth_mbit": float(bandwidth)},
                        per_block_overhead_ms=PER_BLOCK_OVERHEAD_MS,
                        comment=f"scale study: {n} workers, {cluster} speeds, {network} network")


def blocks_per_frame(width, height, block):
    return math.ceil(width / block) * math.ceil(height / block)


def job_size(n, total_speed, frame_cost, map_pixels, width=WIDTH, height=HEIGHT, ideal_s=IDEAL_S,
             blocks_per_worker=BLOCKS_PER_WORKER):
    """(frames, work_factor) so that the job has at least `blocks_per_worker` S0=32 blocks per
    worker and work / total_speed = ideal_s. `total_speed`: the drawn cluster's (farm sim prints
    it; a few workers' draws are far from the mean); `frame_cost`: seconds of one frame of the
    cost map as it is; `map_pixels`: its width x height (the sim rescales per pixel)."""
    frames = max(1, math.ceil(n * blocks_per_worker / blocks_per_frame(width, height, 32)))
    scaled_frame = frame_cost * width * height / map_pixels
    work_factor = ideal_s * total_speed / (frames * scaled_frame)
    return frames, work_factor


# ----------------------------------------------------------------------------- cost maps
def flat_cost_map(width=320, height=240, tile=4, seconds_per_tile=1e-4):
    """Text of a cost map (format of farm/costs/cost_map.cpp) whose every tile costs the same."""
    columns, rows = math.ceil(width / tile), math.ceil(height / tile)
    line = " ".join([f"{seconds_per_tile:.9g}"] * columns)
    return (f"farm-cost-map 1\nwidth {width} height {height} tile {tile} frames 1\n"
            f"note flat: every {tile}x{tile} tile {seconds_per_tile:g} s (tools/sim/scale_grid.py)\n"
            + "\n".join([line] * rows) + "\n")


def cost_map_summary(path):
    """(width, height, first frame's total seconds) of a cost map file."""
    with open(path) as f:
        if f.readline().strip() != "farm-cost-map 1":
            raise ValueError(f"{path}: not a cost map")
        h = f.readline().split()
        width, height, tile = int(h[1]), int(h[3]), int(h[5])
        f.readline()
        rows, total = math.ceil(height / tile), 0.0
        for _ in range(rows):
            total += sum(float(v) for v in f.readline().split())
    return width, height, total


# ----------------------------------------------------------------------------- the CSV
FIELDS = ["map", "cluster", "network", "workers", "policy", "sched_policy", "block", "cost_model", "seed", "width",
          "height", "frames", "work_factor", "ideal_s", "total_speed", "completed", "makespan_s", "bound_plain_s", "bound_honest_s",
          "work_s", "ratio_honest", "ratio_plain", "vs_best_fixed", "best_fixed_label", "blocks", "reassignments",
          "late", "halvings", "lost", "events", "sim_seconds", "process_seconds", "error"]
TEXT = {"map", "cluster", "network", "policy", "sched_policy", "best_fixed_label", "error"}
BOOL = {"cost_model", "completed"}


def read_rows(path):
    """The CSV's rows with numbers as numbers (int where whole), flags as bools, empty cells None."""
    rows = []
    with open(path, newline="") as f:
        for raw in csv.DictReader(f):
            row = {}
            for k, v in raw.items():
                if k in TEXT:
                    row[k] = v
                elif k in BOOL:
                    row[k] = _truthy(v)
                elif v in ("", None):
                    row[k] = None
                else:
                    x = float(v)
                    row[k] = int(x) if x.is_integer() and "." not in v and "e" not in v.lower() else x
            rows.append(row)
    return rows


# ----------------------------------------------------------------------------- aggregation
def scenario(row):
    return (row["map"], row["cluster"], row["network"], int(row["workers"]))


def best_fixed(rows, fixed_labels=None):
    """{scenario: the fixed policy label with the lowest median makespan over the scenario's seeds}
    (one S0 a user could have chosen, not the best per seed). Makespan, not makespan / bound: the
    bound counts the per-block overhead of the policy's own S0 tiles, so at small N it differs
    between S0s. A run that did not complete counts as infinitely long."""
    fixed_labels = fixed_labels or [p.label for p in POLICIES if p.fixed]
    out = {}
    for key, cells in summarise(rows, fixed_labels, metric="makespan_s", with_best=False).items():
        ok = [(c["median"], label) for label, c in cells.items() if c["median"] is not None]
        out[key] = min(ok)[1] if ok else None
    return out


def add_vs_best_fixed(rows, fixed_labels=None):
    """Sets row['best_fixed_label'] and row['vs_best_fixed'] = makespan / the makespan of the best
    fixed S0's run (best_fixed()) of the same scenario and seed; None where either did not complete."""
    best = best_fixed(rows, fixed_labels)
    by_seed = {(scenario(r), r["seed"], r["policy"]): r for r in rows}
    for r in rows:
        label = best.get(scenario(r))
        ref = by_seed.get((scenario(r), r["seed"], label)) if label else None
        ms, ref_ms = num(r.get("makespan_s")), num(ref.get("makespan_s")) if ref else None
        ok = ref and _truthy(ref.get("completed")) and _truthy(r.get("completed"))
        r["best_fixed_label"] = label or ""
        r["vs_best_fixed"] = ms / ref_ms if ok and ms and ref_ms else None
    return rows


def _truthy(v):
    return v is True or str(v).lower() in ("true", "1", "yes")


def summarise(rows, labels=None, metric="ratio_honest", with_best=True):
    """{scenario: {policy label: {"median", "worst", "runs", "failed"}}} of `metric` over seeds.
    A run that did not complete counts as infinitely bad: it makes "worst" None (shown as DNF) and
    the median None once half the runs failed. With with_best, a BEST_FIXED entry is the cell of
    the best fixed S0 (best_fixed(): lowest median makespan), plus its "label"."""
    labels = labels or [p.label for p in POLICIES]
    best = best_fixed(rows) if with_best else {}
    groups = {}
    for r in rows:
        if r["policy"] in labels:
            groups.setdefault(scenario(r), {}).setdefault(r["policy"], []).append(r)
    out = {}
    for key, by_label in groups.items():
        cells = {}
        for label, runs in by_label.items():
            vals = [num(r.get(metric)) if _truthy(r.get("completed")) else None for r in runs]
            done = sorted(v for v in vals if v is not None)
            failed = len(vals) - len(done)
            padded = done + [math.inf] * failed
            med = statistics.median(padded) if padded else None
            cells[label] = {"median": med if med is not None and math.isfinite(med) else None,
                            "worst": max(done) if done and not failed else None, "runs": len(vals), "failed": failed}
        label = best.get(key)
        if label in cells:
            cells[BEST_FIXED] = dict(cells[label], label=label)
        out[key] = cells
    return out
