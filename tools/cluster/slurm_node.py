#!/usr/bin/env python3
"""A real single-node Slurm cluster on this machine, started by hand.

Uses Debian 12's packages (slurmctld, slurmd, slurm-client, munge; Slurm
22.05) without systemd: munged, slurmctld and slurmd are started directly,
with every file they write (key, socket, config, state, spool, logs, pid
files) inside one directory. Tests (C++ via a subprocess) and humans use it:

  slurm_node.py check [--install]  exit 0 if this machine can run it, else
                                   print why and exit 77 (tests skip);
                                   --install: apt-get what is missing first
  slurm_node.py install            apt-get the Debian packages it needs
  slurm_node.py up   --dir DIR     start munged, slurmctld, slurmd; wait
                                   until the node is idle; print JSON
  slurm_node.py env  --dir DIR     print `export SLURM_CONF=...` for a shell
  slurm_node.py down --dir DIR     cancel every job, stop the daemons,
                                   verify no process of DIR is left

Clients only need SLURM_CONF=DIR/slurm.conf: the MUNGE socket (inside DIR)
reaches them through `AuthInfo=socket=...` in that file, and the ports are
free ephemeral ones picked at `up`, so several harnesses can run at once in
different directories. Jobs run as root. Standard library only.
"""

import argparse
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time

EXIT_SKIP = 77

# Debian packages that provide everything below; `install` installs them.
PACKAGES = ["munge", "slurmctld", "slurmd", "slurm-client"]
DAEMONS = ["munged", "slurmctld", "slurmd", "slurmstepd"]
CLIENTS = ["munge", "unmunge", "sinfo", "squeue", "scancel", "scontrol",
           "salloc", "srun", "sbatch"]

# Every daemon started here carries this variable; slurmstepd inherits it
# from slurmd, so `down` can find stray step daemons of its own DIR.
MARKER = "FARM_SLURM_NODE_DIR"

PARTITION = "farm"
CLUSTER = "farm"
# Seconds between SIGTERM and SIGKILL when a job or step is cancelled
# (Slurm's default is 30; tests want cancelled jobs gone quickly).
KILL_WAIT = 5
# Seconds after which slurmctld kills a job whose srun/salloc no longer
# answers its pings. Slurm's default, 0, means never: an srun killed with
# SIGKILL together with its helper child (e.g. its whole process group)
# would leave its tasks running for good. Batch jobs are not affected.
INACTIVE_LIMIT = 20
UNIX_PATH_MAX = 107


def log(msg):
    print("slurm_node: " + msg, file=sys.stderr, flush=True)


def which(name):
    path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin:/usr/bin:/bin"
    return shutil.which(name, path=path)


class Layout:
    """Where every file of one cluster lives inside DIR."""

    def __init__(self, d):
        self.dir = os.path.abspath(d)
        j = lambda *p: os.path.join(self.dir, *p)
        self.munge_dir = j("munge")
        self.munge_key = j("munge", "munge.key")
        self.munge_socket = j("munge", "munge.socket")
        self.munge_log = j("munge", "munged.log")
        self.munge_pid = j("munge", "munged.pid")
        self.munge_seed = j("munge", "munged.seed")
        self.conf = j("slurm.conf")
        self.state = j("state")
        self.spool = j("spool")
        self.logs = j("log")
        self.run = j("run")
        self.ctld_log = j("log", "slurmctld.log")
        self.slurmd_log = j("log", "slurmd.log")
        self.ctld_pid = j("run", "slurmctld.pid")
        self.slurmd_pid = j("run", "slurmd.pid")
        self.summary = j("cluster.json")

    def client_env(self):
        env = dict(os.environ)
        env["SLURM_CONF"] = self.conf
        # A caller inside an allocation must not steer our clients.
        for k in list(env):
            if k.startswith("SLURM_") and k != "SLURM_CONF":
                del env[k]
        return env

    def daemon_env(self):
        env = self.client_env()
        env[MARKER] = self.dir
        return env


# ---------------------------------------------------------------- checks

def problems():
    """Why this machine cannot run a cluster; empty if it can."""
    why = []
    if os.geteuid() != 0:
        why.append("not root (munged, slurmd and slurmstepd here run as "
                   "root)")
    missing = [b for b in DAEMONS + CLIENTS if not which(b)]
    if missing:
        why.append("missing binaries: %s (Debian packages: %s; "
                   "`slurm_node.py install`)" % (" ".join(missing),
                                                 " ".join(PACKAGES)))
    if not why:
        try:
            socket.getaddrinfo(node_name(), None)
        except OSError as e:
            why.append("hostname %r does not resolve: %s" % (node_name(), e))
    return why


def cmd_check(args):
    if args.install and problems():
        try:
            cmd_install(args)
        except (OSError, subprocess.CalledProcessError) as e:
            log("install failed: %s" % e)
    why = problems()
    if why:
        print("SKIP: cannot run a single-node Slurm cluster: "
              + "; ".join(why))
        return EXIT_SKIP
    print("ok: slurm single node can run here")
    return 0


def cmd_install(_args):
    if os.geteuid() != 0:
        log("install needs root")
        return 1
    if all(which(b) for b in DAEMONS + CLIENTS):
        log("already installed")
        return 0
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    lock = ["-o", "DPkg::Lock::Timeout=600"]
    subprocess.run(["apt-get"] + lock + ["update"], env=env, check=True)
    # The packages' postinst scripts try to start munge/slurmd/slurmctld
    # through invoke-rc.d; without systemd (and with a policy-rc.d that
    # denies it) that is refused and the install still succeeds.
    subprocess.run(["apt-get"] + lock + ["install", "-y",
                    "--no-install-recommends"] + PACKAGES,
                   env=env, check=True)
    return 0


# ---------------------------------------------------------------- helpers

def node_name():
    return socket.gethostname().split(".")[0]


def cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def real_memory_mb():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                total = int(line.split()[1]) // 1024
                # Below the real memory, so slurmd never reports less.
                return max(256, total - max(512, total // 10))
    return 1024


def free_ports(n):
    """n distinct free TCP ports, from the kernel's ephemeral range."""
    socks, ports = [], []
    try:
        while len(ports) < n:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("", 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def read_pid(path):
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def alive(pid, name):
    """pid runs and is the program `name` (not a recycled pid, no zombie)."""
    if not pid:
        return False
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return False
    if stat[stat.rfind(")") + 2:].startswith("Z"):
        return False
    return name in cmdline(pid) or name in stat


def parent_of(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
        return int(stat[stat.rfind(")") + 2:].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def own_processes(lay):
    """pids (other than ours) that belong to the cluster in lay.dir: the
    daemons, their slurmstepd, and every descendant of those (job tasks
    carry the client's environment, not the marker)."""
    found = []
    marker = ("%s=%s" % (MARKER, lay.dir)).encode()
    pids = [int(e) for e in os.listdir("/proc")
            if e.isdigit() and int(e) != os.getpid()]
    for pid in pids:
        try:
            with open("/proc/%d/environ" % pid, "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            env = []
        # A daemon of ours started by hand names DIR in its arguments;
        # other programs that merely mention DIR (a `tail -f` of a log, a
        # client) are not ours to kill.
        argv0 = os.path.basename(cmdline(pid).split(" ", 1)[0])
        ours = argv0 in ("munged", "slurmctld", "slurmd") and (
            (lay.dir + "/") in cmdline(pid))
        if marker in env or ours:
            if alive(pid, ""):
                found.append(pid)
    parents = {pid: parent_of(pid) for pid in pids}
    grew = True
    while grew:
        grew = False
        for pid, ppid in parents.items():
            if ppid in found and pid not in found and alive(pid, ""):
                found.append(pid)
                grew = True
    return found


def run_client(lay, argv, timeout=30, check=False):
    return subprocess.run(argv, env=lay.client_env(), timeout=timeout,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=check)


def node_state(lay):
    try:
        r = run_client(lay, ["sinfo", "-h", "-N", "-n", node_name(),
                             "-o", "%T"], timeout=15)
    except subprocess.TimeoutExpired:
        return None
    if r.returncode != 0:
        return None
    return r.stdout.strip() or None


def tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return "(no %s)\n" % path


def stop_pid(pid, name, timeout=10.0):
    if not alive(pid, name):
        return True
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return True
    end = time.time() + timeout
    while time.time() < end:
        if not alive(pid, name):
            return True
        time.sleep(0.1)
    log("%s (pid %d) ignored SIGTERM for %.0f s; SIGKILL" % (name, pid,
                                                             timeout))
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    time.sleep(0.5)
    return not alive(pid, name)


# ---------------------------------------------------------------- config

def write_conf(lay, ctld_port, slurmd_port):
    name = node_name()
    conf = """\
# Written by tools/cluster/slurm_node.py: a single-node cluster whose state
# lives in this directory. Clients: SLURM_CONF={conf}
ClusterName={cluster}
SlurmctldHost={name}
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root

# MUNGE runs with its socket in this directory; Slurm 22.05 reads the
# socket from AuthInfo for auth/munge and cred/munge alike.
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket}

StateSaveLocation={state}
SlurmdSpoolDir={spool}
SlurmctldPidFile={ctld_pid}
SlurmdPidFile={slurmd_pid}
SlurmctldLogFile={ctld_log}
SlurmdLogFile={slurmd_log}
SlurmctldDebug=info
SlurmdDebug=info

# A container: no cgroups, no accounting, no MPI, no prologs.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
# slurmd trusts this file over the hardware it detects.
SlurmdParameters=config_overrides
KillWait={kill_wait}
InactiveLimit={inactive_limit}
MinJobAge=60

NodeName={name} CPUs={cpus} Sockets=1 CoresPerSocket={cpus} ThreadsPerCore=1 RealMemory={mem} State=UNKNOWN
PartitionName={partition} Nodes={name} Default=YES MaxTime=INFINITE State=UP
""".format(conf=lay.conf, cluster=CLUSTER, name=name, ctld_port=ctld_port,
           slurmd_port=slurmd_port, munge_socket=lay.munge_socket,
           state=lay.state, spool=lay.spool, ctld_pid=lay.ctld_pid,
           slurmd_pid=lay.slurmd_pid, ctld_log=lay.ctld_log,
           slurmd_log=lay.slurmd_log, kill_wait=KILL_WAIT,
           inactive_limit=INACTIVE_LIMIT, cpus=cpu_count(),
           mem=real_memory_mb(), partition=PARTITION)
    with open(lay.conf, "w") as f:
        f.write(conf)
    os.chmod(lay.conf, 0o644)


def make_key(lay):
    """A 1024-byte random MUNGE key, owned by root, mode 0600."""
    if os.path.exists(lay.munge_key):
        return
    fd = os.open(lay.munge_key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, os.urandom(1024))
    finally:
        os.close(fd)


# ---------------------------------------------------------------- up/down

def summary(lay):
    with open(lay.conf) as f:
        kv = dict(l.strip().split("=", 1) for l in f
                  if "=" in l and not l.startswith(("#", "NodeName",
                                                   "PartitionName")))
    return {
        "dir": lay.dir,
        "env": {"SLURM_CONF": lay.conf},
        "node": node_name(),
        "cpus": cpu_count(),
        "partition": PARTITION,
        "slurmctld_port": int(kv["SlurmctldPort"]),
        "slurmd_port": int(kv["SlurmdPort"]),
        "munge_socket": lay.munge_socket,
        "kill_wait": KILL_WAIT,
        "inactive_limit": INACTIVE_LIMIT,
        "pids": {"munged": read_pid(lay.munge_pid),
                 "slurmctld": read_pid(lay.ctld_pid),
                 "slurmd": read_pid(lay.slurmd_pid)},
        "logs": {"munged": lay.munge_log, "slurmctld": lay.ctld_log,
                 "slurmd": lay.slurmd_log},
    }


def running(lay):
    return {"munged": alive(read_pid(lay.munge_pid), "munged"),
            "slurmctld": alive(read_pid(lay.ctld_pid), "slurmctld"),
            "slurmd": alive(read_pid(lay.slurmd_pid), "slurmd")}


def start(lay, argv, name, pidfile, logfile):
    r = subprocess.run(argv, env=lay.daemon_env(), stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=60)
    # The daemons fork; the parent exits once the child is set up.
    end = time.time() + 15
    while time.time() < end:
        if alive(read_pid(pidfile), name):
            return
        time.sleep(0.1)
    raise RuntimeError("%s did not start (exit %d): %s\n--- %s:\n%s" % (
        name, r.returncode, r.stdout.strip(), logfile, tail(logfile)))


def _raise_interrupt(signum, _frame):
    raise KeyboardInterrupt("signal %d" % signum)


def cmd_up(args):
    signal.signal(signal.SIGTERM, _raise_interrupt)
    why = problems()
    if why:
        print("SKIP: cannot run a single-node Slurm cluster: "
              + "; ".join(why))
        return EXIT_SKIP
    lay = Layout(args.dir)
    if len(lay.munge_socket) > UNIX_PATH_MAX:
        log("--dir too long for a unix socket path: %s" % lay.munge_socket)
        return 2
    if os.path.exists(lay.conf):
        state = running(lay)
        if all(state.values()) and node_state(lay) in ("idle", "mixed",
                                                        "allocated"):
            print(json.dumps(summary(lay), indent=2))
            return 0
        if any(state.values()) or own_processes(lay):
            log("partly running in %s; stopping it first" % lay.dir)
            cmd_down(args)
    try:
        return up(lay, args.timeout)
    except (Exception, KeyboardInterrupt) as e:
        # Leave nothing half-started behind.
        log("up failed: %s" % (e or type(e).__name__))
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        cmd_down(args)
        return 1


def up(lay, timeout):
    os.makedirs(lay.dir, exist_ok=True)
    # munged insists: socket directory searchable by all, nothing on the
    # way writable by group/other (unless sticky), key 0600 owned by us.
    os.chmod(lay.dir, 0o755)
    for d in (lay.munge_dir, lay.state, lay.spool, lay.logs, lay.run):
        os.makedirs(d, exist_ok=True)
        os.chmod(d, 0o755)
    make_key(lay)
    ctld_port, slurmd_port = free_ports(2)
    write_conf(lay, ctld_port, slurmd_port)

    # munged runs as root without --force as long as the files above are
    # root's and not writable by others.
    start(lay, [which("munged"), "--socket=" + lay.munge_socket,
                "--key-file=" + lay.munge_key,
                "--log-file=" + lay.munge_log,
                "--pid-file=" + lay.munge_pid,
                "--seed-file=" + lay.munge_seed],
          "munged", lay.munge_pid, lay.munge_log)
    # -c: start with no saved jobs (a fresh cluster every `up`).
    start(lay, [which("slurmctld"), "-f", lay.conf, "-c"],
          "slurmctld", lay.ctld_pid, lay.ctld_log)
    start(lay, [which("slurmd"), "-f", lay.conf],
          "slurmd", lay.slurmd_pid, lay.slurmd_log)

    end = time.time() + timeout
    state = None
    while time.time() < end:
        state = node_state(lay)
        if state == "idle":
            break
        if not all(running(lay).values()):
            break
        time.sleep(0.5)
    if state != "idle":
        raise RuntimeError(
            "node %s not idle after %.0f s (state %r, running %r)\n"
            "--- slurmctld.log:\n%s--- slurmd.log:\n%s" % (
                node_name(), timeout, state, running(lay),
                tail(lay.ctld_log), tail(lay.slurmd_log)))
    s = summary(lay)
    with open(lay.summary, "w") as f:
        json.dump(s, f, indent=2)
    print(json.dumps(s, indent=2))
    return 0


def cancel_all(lay, timeout):
    """scancel every job and wait until none is left in the queue."""
    try:
        r = run_client(lay, ["squeue", "-h", "-o", "%A"], timeout=15)
    except subprocess.TimeoutExpired:
        log("squeue timed out; not cancelling jobs")
        return
    jobs = r.stdout.split() if r.returncode == 0 else []
    if not jobs:
        return
    log("cancelling jobs: %s" % " ".join(jobs))
    run_client(lay, ["scancel"] + jobs, timeout=30)
    end = time.time() + timeout
    while time.time() < end:
        r = run_client(lay, ["squeue", "-h", "-o", "%A %T"], timeout=15)
        if r.returncode == 0 and not r.stdout.strip():
            return
        time.sleep(0.5)
    log("jobs still queued after %.0f s:\n%s" % (timeout, r.stdout))


def cmd_down(args):
    lay = Layout(args.dir)
    if not os.path.isdir(lay.dir):
        return 0
    state = running(lay)
    if state["slurmctld"] and state["munged"]:
        cancel_all(lay, KILL_WAIT + 20)
    ok = True
    ok &= stop_pid(read_pid(lay.slurmd_pid), "slurmd")
    ok &= stop_pid(read_pid(lay.ctld_pid), "slurmctld")
    ok &= stop_pid(read_pid(lay.munge_pid), "munged")
    # Anything else of ours: slurmstepd or tasks that outlived the cancel.
    stray = own_processes(lay)
    if stray:
        log("killing leftover processes: " + "; ".join(
            "%d %s" % (p, cmdline(p)) for p in stray))
        for p in stray:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(1)
    left = own_processes(lay) + [
        p for p, n in ((read_pid(lay.slurmd_pid), "slurmd"),
                       (read_pid(lay.ctld_pid), "slurmctld"),
                       (read_pid(lay.munge_pid), "munged")) if alive(p, n)]
    if left:
        log("still running: " + "; ".join("%d %s" % (p, cmdline(p))
                                          for p in left))
        return 1
    return 0 if ok else 1


def cmd_env(args):
    lay = Layout(args.dir)
    if not os.path.exists(lay.conf):
        log("no cluster in %s (run `up --dir %s` first)" % (lay.dir,
                                                            args.dir))
        return 1
    print("export SLURM_CONF=%s" % shlex.quote(lay.conf))
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(
        description="A real single-node Slurm cluster (munged, slurmctld, "
                    "slurmd) with all its state in one directory.")
    sub = p.add_subparsers(dest="cmd")
    sub.required = True
    sp = sub.add_parser("check", help="exit 0 if it can run here, else 77")
    sp.add_argument("--install", action="store_true",
                    help="apt-get the missing Debian packages first")
    sub.add_parser("install", help="apt-get install the Debian packages")
    for name, helptext in (("up", "start the cluster, print JSON"),
                           ("down", "cancel jobs, stop every daemon"),
                           ("env", "print export lines for a shell")):
        sp = sub.add_parser(name, help=helptext)
        sp.add_argument("--dir", required=True,
                        help="directory holding all of the cluster's files")
        if name == "up":
            sp.add_argument("--timeout", type=float, default=60,
                            help="seconds to wait for the node to be idle")
    args = p.parse_args(argv)
    return {"check": cmd_check, "install": cmd_install, "up": cmd_up,
            "down": cmd_down, "env": cmd_env}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
