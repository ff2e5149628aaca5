"""CPU-quota emulation of slower machines: run a process capped at a fraction of one core.

A worker with speed q gets `q` cores' worth of CPU time per period through the kernel's CFS
bandwidth control: cgroup v1 (`/sys/fs/cgroup/cpu/<group>/cpu.cfs_quota_us`, as on this machine)
or cgroup v2 (`cpu.max`). Needs root. The period is short (10 ms, longer only when the quota
would drop below the kernel's 1 ms minimum) so a throttled worker looks like a slow CPU, not a
fast CPU that freezes for a tenth of a second at a time.

    with CpuQuota("w3", 0.25) as q:
        subprocess.Popen(cmd, preexec_fn=q.enter)   # the child and its threads are capped

Command line: tools/cpu_quota --cores 0.25 -- farm worker --connect ...
"""
import os

V1_ROOT = "/sys/fs/cgroup/cpu"
V2_ROOT = "/sys/fs/cgroup"
PARENT = "farm-experiments"
MIN_QUOTA_US = 1000


class QuotaUnavailable(RuntimeError):
    pass


def _v2_available():
    try:
        with open(os.path.join(V2_ROOT, "cgroup.controllers")) as f:
            return "cpu" in f.read().split()
    except OSError:
        return False


def check_available():
    """Raises QuotaUnavailable with a message saying what is missing, else returns 'v1' or 'v2'."""
    if os.geteuid() != 0:
        raise QuotaUnavailable("CPU quotas need root (cgroup files are root-owned); run as root or use --no-quota")
    if os.path.exists(os.path.join(V1_ROOT, "cpu.cfs_quota_us")):
        return "v1"
    if _v2_available():
        return "v2"
    raise QuotaUnavailable(f"no CPU bandwidth controller: neither {V1_ROOT}/cpu.cfs_quota_us (cgroup v1) nor 'cpu' in "
                           f"{V2_ROOT}/cgroup.controllers (cgroup v2); use --no-quota to run all workers at full speed")


def period_for(cores):
    period = 10_000
    if cores * period < MIN_QUOTA_US:
        period = int(MIN_QUOTA_US / cores) + 1
    return period


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


class CpuQuota:
    """A cgroup capped at `cores` CPUs (cores may be > 1 for multi-threaded workers)."""

    def __init__(self, name, cores):
        if not cores > 0:
            raise ValueError(f"CPU quota must be > 0 cores, got {cores}")
        self.kind = check_available()
        self.cores = cores
        root = V1_ROOT if self.kind == "v1" else V2_ROOT
        self.parent = os.path.join(root, PARENT)
        self.path = os.path.join(self.parent, f"{name}-{os.getpid()}")

    def __enter__(self):
        os.makedirs(self.path, exist_ok=True)
        period = period_for(self.cores)
        quota = max(MIN_QUOTA_US, int(round(self.cores * period)))
        if self.kind == "v1":
            _write(os.path.join(self.path, "cpu.cfs_period_us"), str(period))
            _write(os.path.join(self.path, "cpu.cfs_quota_us"), str(quota))
        else:
            if not os.path.exists(os.path.join(self.parent, "cgroup.subtree_control")):
                raise QuotaUnavailable(f"{self.parent} has no cgroup.subtree_control")
            _write(os.path.join(self.parent, "cgroup.subtree_control"), "+cpu")
            _write(os.path.join(self.path, "cpu.max"), f"{quota} {period}")
        return self

    def enter(self):
        """Moves the calling process into the group (use as preexec_fn: runs in the child)."""
        _write(os.path.join(self.path, "cgroup.procs"), str(os.getpid()))

    def __exit__(self, *exc):
        self.close()

    def close(self):
        # A group can be removed once its processes have exited; a straggler keeps it (harmless).
        try:
            os.rmdir(self.path)
        except OSError:
            pass


def main(argv=None):
    import argparse
    import subprocess
    import sys
    ap = argparse.ArgumentParser(description="Run a command capped at a fraction of a CPU core (cgroup CPU quota)")
    ap.add_argument("--cores", type=float, required=True, help="CPU time allowed, in cores (0.25 = a quarter of one core)")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- command [args...]")
    args = ap.parse_args(argv)
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("no command given (put it after --)")
    if not args.cores > 0:
        ap.error(f"--cores must be > 0, got {args.cores}")
    try:
        with CpuQuota("cli", args.cores) as q:
            return subprocess.call(cmd, preexec_fn=q.enter)
    except QuotaUnavailable as e:
        print(f"cpu_quota: {e}", file=sys.stderr)
        return 2
    except FileNotFoundError as e:
        print(f"cpu_quota: cannot run {cmd[0]}: {e.strerror}", file=sys.stderr)
        return 2
