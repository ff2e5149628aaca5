"""Runs the real `farm` on an emulated cluster: one master, workers capped by CPU quotas, each
behind its own delaying proxy when its network is not loopback; and `farm single` baselines.

Nothing here simulates: every figure comes from real processes on this machine. The emulation is
of the machines (CPU quota per worker, cpu_quota.py) and of the links (tools/net/delay_proxy.py).
"""
import dataclasses
import json
import os
import subprocess
import tomllib

from experiments.cpu_quota import CpuQuota
from farmtools.local_farm import FarmRunError, LocalFarm
# proxy_args is also tools/sweep's check of --networks (as cluster.proxy_args).
from farmtools.networks import proxy_args

CLUSTERS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "clusters.toml")


class RunFailed(RuntimeError):
    pass


@dataclasses.dataclass
class Node:
    speed: float
    network: str = "loopback"


@dataclasses.dataclass
class Cluster:
    name: str
    nodes: list

    def with_network(self, network):
        if network in ("", "cluster"):
            return self
        return Cluster(self.name, [Node(n.speed, network) for n in self.nodes])

    def speeds_text(self):
        return " ".join(f"{n.speed:g}" for n in self.nodes)

    def network_text(self):
        names = [n.network for n in self.nodes]
        if len(set(names)) == 1:
            return names[0]
        counts = {}
        for n in names:
            counts[n] = counts.get(n, 0) + 1
        return ",".join(f"{k}:{v}" for k, v in counts.items())


def load_clusters(path=CLUSTERS_FILE):
    """Returns (reference_cores, {name: Cluster}); errors name the file and the cluster."""
    with open(path, "rb") as f:
        try:
            doc = tomllib.load(f)
        except tomllib.TOMLDecodeError as e:
            raise SystemExit(f"{path}: {e}")
    ref = doc.get("reference_cores")
    if not isinstance(ref, (int, float)) or not 0 < ref <= 64:
        raise SystemExit(f"{path}: reference_cores must be a number in (0, 64], got {ref!r}")
    clusters = {}
    for name, body in doc.get("cluster", {}).items():
        nodes = []
        for i, g in enumerate(body.get("workers", [])):
            speed, count = g.get("speed"), g.get("count", 1)
            if not isinstance(speed, (int, float)) or speed <= 0:
                raise SystemExit(f"{path}: cluster.{name}.workers[{i}].speed must be > 0, got {speed!r}")
            if not isinstance(count, int) or count < 1:
                raise SystemExit(f"{path}: cluster.{name}.workers[{i}].count must be an integer >= 1, got {count!r}")
            network = g.get("network", "loopback")
            proxy_args(network, where=f"{path}: cluster.{name}.workers[{i}].network")
            nodes += [Node(float(speed), network) for _ in range(count)]
        if not nodes:
            raise SystemExit(f"{path}: cluster.{name} has no workers")
        clusters[name] = Cluster(name, nodes)
    return float(ref), clusters


class Runner:
    """Starts and cleans up the processes of one run. `use_quota=False` runs every worker at full
    speed (for machines without cgroup CPU control; heterogeneity is then lost, and said so)."""

    def __init__(self, farm, tmp, reference_cores, use_quota=True, timeout=900):
        self.farm = farm
        self.tmp = tmp
        self.reference_cores = reference_cores
        self.use_quota = use_quota
        self.timeout = timeout
        self.cache = os.path.join(tmp, "worker-cache")
        os.makedirs(self.cache, exist_ok=True)

    def _quota(self, name, speed, threads=1):
        if not self.use_quota:
            return None
        return CpuQuota(name, speed * self.reference_cores * threads)

    def single(self, scene, args, out, stats, speed=1.0):
        """`farm single` with one thread on a node of `speed`; returns its stats JSON."""
        cmd = [self.farm, "single", scene, "-o", out, "--threads", "1", "--stats", stats] + args
        quota = self._quota("single", speed)
        try:
            if quota:
                quota.__enter__()
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               preexec_fn=quota.enter if quota else None, timeout=self.timeout)
        finally:
            if quota:
                quota.close()
        if r.returncode != 0:
            raise RunFailed(f"farm single failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout[-2000:]}")
        with open(stats) as f:
            return json.load(f)

    def farm_run(self, scene, args, out, stats, cluster, threads=1, prefetch=1, null_render=False):
        """One `farm master` job on `cluster` (farmtools.local_farm); returns the master's stats JSON."""
        quotas = []
        try:
            with LocalFarm(self.farm) as lf:
                endpoint = lf.master(scene, out, stats, args)
                for i, node in enumerate(cluster.nodes):
                    extra = proxy_args(node.network)
                    connect = endpoint if extra is None else lf.proxy(endpoint, extra, seed=i + 1)
                    quota = self._quota(f"w{i + 1}", node.speed, threads)
                    if quota:
                        quota.__enter__()
                        quotas.append(quota)
                    name = f"n{i + 1}-x{node.speed:g}-{node.network}"
                    lf.worker(connect, ["--cache", self.cache, "--name", name, "--threads", str(threads),
                                        "--prefetch", str(prefetch), "--give-up-after", "30"]
                              + (["--null-render"] if null_render else []),
                              log=os.path.join(self.tmp, f"worker{i + 1}.log"), preexec_fn=quota.enter if quota else None)
                # Workers get JobDone and exit; one still starting when the job ended never will, so
                # it is killed after a short grace.
                return lf.finish(stats, timeout=self.timeout, grace=0.5)
        except FarmRunError as e:
            raise RunFailed(str(e)) from e
        finally:
            for q in quotas:
                q.close()
