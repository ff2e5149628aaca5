"""The sweep: one CSV row per real run, resumable (a row whose run_key is already in the CSV is
not run again), baselines and worker-speed calibration shared by every experiment in the file.

Timing: `window_s` is the farm's render window, from the master's first assignment to its last
accepted block (tools/farmtools/run_window.py, the simulator's definition too). Like the paper
(section 3.2), the sequential start (process start, scene parse and load, image write) is left out
of both sides: `single_s` is `farm single`'s render time with one thread on a speed-1.0 node.
`makespan_s` (the master's wall clock, start to image written) is reported too.

Lower bound of a run: total work / total worker speed = single_s / sum(measured speeds), and never
below the longest accepted block moved to the fastest node. Efficiency = lower bound / window.
`lower_bound_join_s` counts each worker only from its join; `honest_bound_s` only from its first
assignment (after its start-up, scene load and first request), until it died or left, with the
longest block on the worker that could end it first (tools/farmtools/bounds.py, the definitions of
farm/control/makespan_bound.h).
"""
import csv
import datetime
import itertools
import math
import os
import statistics
import time

from experiments import real_scenes, service_runner
from experiments.cluster import Cluster, Node, RunFailed
from farmtools import bounds
from farmtools.run_window import accepted_blocks, run_window, window_bounds

COLUMNS = ["experiment", "run_key", "rep", "scene", "width", "height", "spp", "mode", "policy", "block", "min_block",
           "wait", "max_copies", "cluster", "workers", "speeds", "network", "threads", "makespan_s", "window_s",
           "single_s", "speedup", "ideal_speedup", "lower_bound_s", "efficiency", "blocks", "halvings", "regrowths",
           "reassignments", "late_results", "bytes_in", "bytes_out", "idle_frac", "rtt_us", "identical",
           "measured_speed", "lower_bound_join_s", "date", "honest_bound_s"]

CALIBRATION_SCENE = ("chess2", 160, 120, 8)


def fmt(v):
    if isinstance(v, float):
        return f"{v:.6g}"
    return "" if v is None else str(v)


class Sweep:
    def __init__(self, csv_path, runner, scenes_dir, clusters, calibration=CALIBRATION_SCENE, log=print):
        self.csv_path = csv_path
        self.runner = runner
        self.scenes_dir = scenes_dir
        self.clusters = clusters
        self.calibration = calibration
        self.log = log
        self.rows = {}
        if os.path.exists(csv_path) and os.path.getsize(csv_path) > 0:
            with open(csv_path, newline="") as f:
                reader = csv.DictReader(f)
                names = reader.fieldnames or []
                if names and len(names) < len(COLUMNS) and names == COLUMNS[:len(names)]:
                    self._upgrade(list(reader), csv_path)  # an older sweep: new columns left empty
                    return self.__init__(csv_path, runner, scenes_dir, clusters, calibration, log)
                if reader.fieldnames != COLUMNS:
                    raise SystemExit(f"{csv_path}: columns differ from this version of the sweep "
                                     f"(move the file away to start a new one)")
                for row in reader:
                    self.rows[row["run_key"]] = row
        else:
            os.makedirs(os.path.dirname(os.path.abspath(csv_path)), exist_ok=True)
            with open(csv_path, "w", newline="") as f:
                csv.writer(f).writerow(COLUMNS)
        self.done_this_session = 0
        self.started = time.monotonic()

    # ---------------------------------------------------------------- bookkeeping
    @staticmethod
    def _upgrade(rows, csv_path):
        """Rewrites a CSV of an earlier version (a prefix of COLUMNS) with today's header."""
        tmp = csv_path + ".upgrade"
        with open(tmp, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            for row in rows:
                w.writerow({k: row.get(k, "") for k in COLUMNS})
        os.replace(tmp, csv_path)

    def _append(self, row):
        row = {k: fmt(row.get(k)) for k in COLUMNS}
        row["date"] = datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S")
        with open(self.csv_path, "a", newline="") as f:
            csv.DictWriter(f, fieldnames=COLUMNS).writerow(row)
        self.rows[row["run_key"]] = row
        self.done_this_session += 1
        return row

    def scene_path(self, scene):
        if real_scenes.is_real(scene):
            return real_scenes.path(scene)
        return os.path.join(self.scenes_dir, scene + ".toml")

    def _tmp(self, name):
        return os.path.join(self.runner.tmp, name)

    def _image_key(self, scene, w, h, spp):
        return f"{scene}_{w}x{h}_spp{spp}"

    # ---------------------------------------------------------------- calibration and baselines
    def measured_speed(self, speed):
        """Relative speed of a node of nominal `speed`, measured as t(1.0)/t(speed) with `farm single`."""
        if not self.runner.use_quota:
            return 1.0
        times = {}
        for s in sorted({1.0, speed}):
            key = f"calibration|speed{s:g}|ref{self.runner.reference_cores:g}"
            if key not in self.rows:
                scene, w, h, spp = self.calibration
                reps = []
                for _ in range(2):
                    st = self.runner.single(self.scene_path(scene), ["--width", str(w), "--height", str(h), "--spp", str(spp)],
                                            self._tmp("calibration.png"), self._tmp("calibration.json"), speed=s)
                    reps.append(st["seconds"]["render"])
                self._append({"experiment": "calibration", "run_key": key, "rep": 0, "scene": scene, "width": w, "height": h,
                              "spp": spp, "mode": "single", "speeds": f"{s:g}", "workers": 1, "threads": 1,
                              "window_s": statistics.median(reps)})
                self.log(f"  calibration: speed {s:g} -> render {statistics.median(reps):.3f} s")
            times[s] = float(self.rows[key]["window_s"])
        return times[1.0] / times[speed]

    def baseline(self, scene, w, h, spp):
        """Median `farm single` render seconds on a speed-1.0 node, and the path of its image."""
        image = self._tmp(self._image_key(scene, w, h, spp) + "_single.png")
        key = f"baseline|{scene}|{w}x{h}|spp{spp}|ref{self.runner.reference_cores:g}"
        if key not in self.rows or not os.path.exists(image):
            args = size_args(w, h, spp) + real_scenes.farm_args(scene)
            t0 = time.monotonic()
            st = self.runner.single(self.scene_path(scene), args, image, self._tmp("single.json"))
            if key not in self.rows:
                self._append({"experiment": "baseline", "run_key": key, "rep": 0, "scene": scene, "width": w, "height": h,
                              "spp": spp, "mode": "single", "speeds": "1", "workers": 1, "threads": 1,
                              "makespan_s": time.monotonic() - t0, "window_s": st["seconds"]["render"],
                              "single_s": st["seconds"]["render"], "speedup": 1.0, "ideal_speedup": 1.0})
                self.log(f"  baseline {scene} {w}x{h} spp {spp}: {st['seconds']['render']:.2f} s render")
        return float(self.rows[key]["single_s"]), image

    # ---------------------------------------------------------------- one farm run
    def point(self, experiment, scene, w, h, spp, policy, block, wait, cluster_name, network, rep,
              min_block=4, max_copies=2, threads=1, prefetch=1, keep_stats=None):
        """Runs (or finds in the CSV) one farm run and returns its row. On a farm service
        (service_runner.py) its workers are the cluster: the row's cluster and network read
        "service", so runs that differ only in those are one run."""
        shared = getattr(self.runner, "shared", False)
        if shared:
            cluster_name = network = service_runner.SERVICE
        wait_key = "" if policy == "fixed" else f"{wait:g}"
        workers_key = "tservice" if shared else f"t{threads}p{prefetch}"
        key = "|".join([experiment, scene, f"{w}x{h}", f"spp{spp}", policy, f"b{block}", f"w{wait_key}",
                        f"m{min_block}", f"c{max_copies}", cluster_name, network, workers_key, f"r{rep}"])
        if key in self.rows and (not keep_stats or os.path.exists(keep_stats)):
            return self.rows[key]
        cluster = None if shared else self.clusters[cluster_name].with_network(network)
        single_s, single_image = self.baseline(scene, w, h, spp)
        speeds = None if shared else [self.measured_speed(n.speed) for n in cluster.nodes]
        out = self._tmp(self._image_key(scene, w, h, spp) + "_farm.png")
        stats_path = keep_stats or self._tmp("farm.json")
        args = size_args(w, h, spp) + real_scenes.farm_args(scene) + ["--policy", policy, "--block", str(block),
                "--min-block", str(min_block), "--wait", f"{wait:g}", "--max-copies", str(max_copies)]
        t0 = time.monotonic()
        st = self.runner.farm_run(self.scene_path(scene), args, out, stats_path, cluster, threads, prefetch)
        wall = time.monotonic() - t0
        if shared:  # the workers that served it, each as fast as its threads
            cluster = service_runner.service_cluster(st)
            speeds = [n.speed for n in cluster.nodes]
            threads = ",".join(sorted({f"{n.speed:g}" for n in cluster.nodes}))
        row = summarise(st, single_s, speeds, cluster, threads)
        with open(out, "rb") as a, open(single_image, "rb") as b:
            row["identical"] = int(a.read() == b.read())
        if not row["identical"]:
            known = "" if real_scenes.exact(scene) else f" (expected: {real_scenes.NOT_EXACT[scene]})"
            self.log(f"  !! farm image differs from farm single's for {key}{known}")
        row.update({"experiment": experiment, "run_key": key, "rep": rep, "scene": scene, "width": w, "height": h,
                    "spp": spp, "mode": "farm", "policy": policy, "block": block, "min_block": min_block,
                    "wait": "" if policy == "fixed" else wait, "max_copies": max_copies, "cluster": cluster_name,
                    "workers": len(cluster.nodes), "speeds": cluster.speeds_text(), "network": cluster.network_text(),
                    "threads": threads})
        if key in self.rows:  # re-run only to keep the stats file
            return self.rows[key]
        row = self._append(row)
        self.log(f"  {key}: window {float(row['window_s']):.2f} s, speedup {float(row['speedup']):.2f} "
                 f"(ideal {float(row['ideal_speedup']):.2f}), eff {float(row['efficiency']):.2f}, "
                 f"{row['blocks']} blocks, {row['halvings']} halvings  [{wall:.1f} s]")
        return row

    def null_point(self, experiment, block, network, rep, side_blocks=None):
        """Round trip per block with a null renderer: 1 worker, 1 thread, no prefetch, fixed blocks."""
        side_blocks = side_blocks or (12 if block <= 64 else 6)
        key = f"{experiment}|null|b{block}|{network}|n{side_blocks}|r{rep}"
        if key in self.rows:
            return self.rows[key]
        side = block * side_blocks
        cluster = self.clusters["homo1"].with_network(network)
        args = ["--width", str(side), "--height", str(side), "--spp", "1", "--policy", "fixed", "--block", str(block),
                "--max-copies", "1", "--no-compress"]  # raw bytes, as the paper's Table 1
        saved = self.runner.use_quota
        self.runner.use_quota = False  # the round trip is measured at full speed
        try:
            st = self.runner.farm_run(self.scene_path("wg6"), args, self._tmp("null.png"), self._tmp("null.json"),
                                      cluster, threads=1, prefetch=0, null_render=True)
        finally:
            self.runner.use_quota = saved
        acc, window = accepted_blocks(st), run_window(st)
        row = self._append({"experiment": experiment, "run_key": key, "rep": rep, "scene": "wg6", "width": side,
                            "height": side, "spp": 1, "mode": "null", "policy": "fixed", "block": block,
                            "max_copies": 1, "cluster": "homo1", "workers": 1, "network": network, "threads": 1,
                            "window_s": window, "blocks": len(acc), "rtt_us": window / len(acc) * 1e6,
                            "bytes_in": sum(w["bytes_in"] for w in st["workers"]),
                            "bytes_out": sum(w["bytes_out"] for w in st["workers"]),
                            "makespan_s": st["makespan_seconds"]})
        self.log(f"  {key}: {float(row['rtt_us']):.0f} us/block over {len(acc)} blocks")
        return row

    def block_cost_point(self, experiment, scene, w, h, block, rep):
        """What a block costs beyond its pixels: one worker on one whole core (a CPU quota of 1),
        one thread, fixed blocks, against `farm single` on the same core. For the real scenes,
        where every block is a renderer process (the paper's Table 1 with the renderer in it)."""
        key = f"{experiment}|{scene}|{w}x{h}|b{block}|r{rep}"
        if key in self.rows:
            return self.rows[key]
        core = 1.0 / self.runner.reference_cores if self.runner.use_quota else 1.0
        args = size_args(w, h, 0) + real_scenes.farm_args(scene)
        image = self._tmp(self._image_key(scene, w, h, 0) + "_single_core.png")
        base_key = f"baseline-core|{scene}|{w}x{h}"
        if base_key not in self.rows or not os.path.exists(image):
            st = self.runner.single(self.scene_path(scene), args, image, self._tmp("single.json"), speed=core)
            if base_key not in self.rows:
                self._append({"experiment": "baseline-core", "run_key": base_key, "rep": 0, "scene": scene, "width": w,
                              "height": h, "spp": 0, "mode": "single", "speeds": f"{core:g}", "workers": 1,
                              "threads": 1, "window_s": st["seconds"]["render"], "single_s": st["seconds"]["render"]})
        single_s = float(self.rows[base_key]["single_s"])
        out = self._tmp(self._image_key(scene, w, h, 0) + "_farm_core.png")
        st = self.runner.farm_run(self.scene_path(scene), args + ["--policy", "fixed", "--block", str(block)], out,
                                  self._tmp("farm.json"), Cluster("core1", [Node(core)]), threads=1, prefetch=1)
        acc, window = accepted_blocks(st), run_window(st)
        with open(out, "rb") as a, open(image, "rb") as b:
            identical = int(a.read() == b.read())
        row = self._append({"experiment": experiment, "run_key": key, "rep": rep, "scene": scene, "width": w,
                            "height": h, "spp": 0, "mode": "farm", "policy": "fixed", "block": block, "cluster": "core1",
                            "workers": 1, "speeds": f"{core:g}", "network": "loopback", "threads": 1,
                            "window_s": window, "single_s": single_s, "speedup": single_s / window, "blocks": len(acc),
                            # rtt_us holds, for these rows, the median renderer time of one block (microseconds)
                            "rtt_us": statistics.median(b["render_seconds"] for b in acc) * 1e6,
                            "makespan_s": st["makespan_seconds"], "identical": identical})
        self.log(f"  {key}: window {window:.2f} s against single {single_s:.2f} s, {len(acc)} blocks, "
                 f"median {float(row['rtt_us']) / 1000:.0f} ms per block")
        return row

    def progress(self, i, n, what):
        elapsed = time.monotonic() - self.started
        self.log(f"[{i}/{n}] {what}  ({elapsed / 60:.1f} min elapsed)")


def summarise(st, single_s, speeds, cluster, threads):
    acc = accepted_blocks(st)
    if not acc:
        raise RunFailed("no accepted blocks in the stats")
    first, last = window_bounds(st)
    window = last - first
    total_speed = sum(speeds)
    by_id = {}
    for i, w in enumerate(sorted(st["workers"], key=lambda w: w["id"])):
        # A service's workers are named by their owners: the cluster lists them in id order.
        by_id[w["id"]] = speeds[i] if getattr(cluster, "name", None) == service_runner.SERVICE else speed_of(w["name"], cluster, speeds)
    fastest = max(speeds)
    longest = max(b["render_seconds"] * by_id.get(b["worker"], 1.0) / fastest for b in acc)
    lower = max(single_s / total_speed, longest)
    # The same bound with each worker counted only from its join (slow nodes start slowly too),
    # and the honest one: from its first assignment, until it died or left.
    ws = sorted(st["workers"], key=lambda w: w["id"])
    joins = [bounds.Worker(max(0.0, w["joined"] - first), by_id[w["id"]]) for w in ws]
    lower_join = max(bounds.fluid(joins, single_s), longest)
    first_lease = {}
    for b in st["blocks"]:
        first_lease[b["worker"]] = min(first_lease.get(b["worker"], b["assigned"]), b["assigned"])
    honest_workers = [bounds.Worker(max(0.0, first_lease.get(w["id"], w["joined"]) - first), by_id[w["id"]],
                                    end=(w["left"] - first) if w["left"] >= 0 else math.inf) for w in ws]
    # Not the longest accepted block (a policy choosing big blocks would raise its own bound):
    # the densest accepted block's cost per pixel times a min-block's pixels. Some min-block
    # inside that block is at least as dense, so some block of any run costs at least this.
    side = st.get("min_block", 4)
    densest = max(b["render_seconds"] * by_id.get(b["worker"], 1.0) / max(1, b["width"] * b["height"]) for b in acc)
    honest = bounds.honest(honest_workers, single_s, densest * side * side)
    busy = sum(w["busy_seconds"] for w in st["workers"])
    alive = sum(max(0.0, ((w["left"] if w["left"] >= 0 else st["makespan_seconds"]) - w["joined"])) * w["threads"]
                for w in st["workers"])
    return {"makespan_s": st["makespan_seconds"], "window_s": window, "single_s": single_s,
            "speedup": single_s / window, "ideal_speedup": single_s / lower, "lower_bound_s": lower,
            "efficiency": lower / window, "lower_bound_join_s": lower_join, "honest_bound_s": honest,
            "blocks": len(acc),
            "halvings": sum(1 for d in st["decisions"] if d["to"] < d["from"]),
            "regrowths": sum(1 for d in st["decisions"] if d["to"] > d["from"]),
            "reassignments": st["reassignments"], "late_results": st["late_results"],
            "bytes_in": sum(w["bytes_in"] for w in st["workers"]), "bytes_out": sum(w["bytes_out"] for w in st["workers"]),
            "idle_frac": 1.0 - busy / alive if alive > 0 else None}


def size_args(w, h, spp):
    """Farm arguments for a resolution and samples per pixel (spp 0 = the scene's own)."""
    return ["--width", str(w), "--height", str(h)] + (["--spp", str(spp)] if spp else [])


def speed_of(worker_name, cluster, speeds):
    """Measured speed of a worker from the name the runner gave it (n<i>-x<speed>-<network>)."""
    try:
        i = int(worker_name.split("-")[0][1:]) - 1
        return speeds[i]
    except (ValueError, IndexError):
        return 1.0


def grid(**axes):
    """Cartesian product of named axes, as dicts, in a stable order."""
    names = list(axes)
    for values in itertools.product(*(axes[n] for n in names)):
        yield dict(zip(names, values))
