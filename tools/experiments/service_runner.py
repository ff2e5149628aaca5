"""Runs a sweep's farm runs as jobs on a running farm service (`tools/sweep --server`,
`tools/reproduce --server`): each run is `farm submit --wait --stats`, served by the workers
the service already has, instead of a master and workers started for the run.

The service's workers are the cluster: a run cannot choose them, so the emulated clusters and
networks of the experiments do not apply (Sweep.point files such rows under the cluster and
network "service", and runs that differ only in those collapse into one). What needs a machine of
its own stays local: `farm single` baselines (for the byte comparison and the speedup), and
null-renderer round trips (a service's workers render for real).

Speeds: a service worker's thread is taken to be as fast as one thread of `farm single` here
(each worker counts its threads), which is what the lower bound and the efficiency then assume.
"""
import json
import os
import subprocess

from experiments.cluster import Cluster, Node, RunFailed, Runner

SERVICE = "service"  # the cluster and network name of rows run on a service


class ServiceRunner:
    """The interface of cluster.Runner (single, farm_run), with farm runs as service jobs."""

    shared = True

    def __init__(self, farm, tmp, server, priority=0, client_args=(), timeout=900):
        self.farm = farm
        self.tmp = tmp
        self.server = server
        self.priority = priority
        self.client_args = list(client_args)  # --key, --server-key, --insecure
        self.timeout = timeout
        self.local = Runner(farm, tmp, reference_cores=1.0, use_quota=False, timeout=timeout)
        self.reference_cores = self.local.reference_cores
        self.use_quota = False  # no CPU quotas: speeds are not emulated
        self.cache = self.local.cache
        self.jobs = []  # ids submitted, in order

    def single(self, scene, args, out, stats, speed=1.0):
        return self.local.single(scene, args, out, stats, speed)

    def client(self, command, *args):
        return [self.farm, command, *args, "--server", self.server] + self.client_args

    def farm_run(self, scene, args, out, stats, cluster, threads=1, prefetch=1, null_render=False):
        """One job on the service; returns its stats JSON. `cluster`, `threads` and `prefetch` are
        the service's workers' own (only a null-renderer run, which they cannot do, runs locally)."""
        if null_render:
            return self.local.farm_run(scene, args, out, stats, cluster, threads, prefetch, null_render=True)
        cmd = self.client("submit", scene, "-o", out, *submit_args(args), "--priority", str(self.priority),
                          "--name", os.path.basename(out), "--json", "--wait", "--stats", stats)
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        job = None
        try:
            first = p.stdout.readline()  # {"id": N} once submitted
            try:
                job = json.loads(first)["id"]
                self.jobs.append(job)
            except (ValueError, KeyError, TypeError):
                pass
            _, err = p.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            if job is not None:  # the job must not go on taking the service's workers
                subprocess.run(self.client("cancel", str(job)), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            raise RunFailed(f"job {job} on {self.server} took more than {self.timeout:g} s (cancelled): {' '.join(cmd)}")
        if p.returncode != 0:
            raise RunFailed(f"farm submit failed ({p.returncode}): {' '.join(cmd)}\n{err[-2000:]}")
        with open(stats) as f:
            return json.load(f)


def submit_args(args):
    """`farm master` options as `farm submit` takes them: the waiting time is --wait-time there
    (--wait follows the job)."""
    return ["--wait-time" if a == "--wait" else a for a in args]


def service_cluster(stats):
    """The workers that served a job, as a Cluster: one node per worker, its speed its threads."""
    workers = sorted(stats["workers"], key=lambda w: w["id"])
    return Cluster(SERVICE, [Node(float(w.get("threads", 1)), SERVICE) for w in workers])


def add_server_args(ap):
    ap.add_argument("--server", help="run every farm run as a job on this farm service (its --bind endpoint), "
                                     "served by its workers: clusters and networks then do not apply")
    ap.add_argument("--priority", type=int, default=0, help="with --server: the jobs' priority")
    ap.add_argument("--client-key", help="with --server: this client's key pair (farm keygen)")
    ap.add_argument("--server-key", help="with --server: the service's public key")


def client_args(args):
    out = []
    if args.client_key:
        out += ["--key", args.client_key]
    if args.server_key:
        out += ["--server-key", args.server_key]
    return out
