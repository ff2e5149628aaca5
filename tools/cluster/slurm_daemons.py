"""The processes of slurm_node.py's single-node cluster: starting munged, slurmctld and
slurmd, waiting for the node, cancelling jobs, stopping everything of one DIR.
Standard library only.
"""

import os
import shutil
import signal
import subprocess
import time

from slurm_conf import KILL_WAIT, MARKER, log, node_name


def which(name):
    path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin:/usr/bin:/bin"
    return shutil.which(name, path=path)


def tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return "(no %s)\n" % path


# ---------------------------------------------------------------- /proc

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


def is_marked(lay, pid):
    """pid is a daemon of lay.dir: it carries the marker, or (started by
    hand) it is munged/slurmctld/slurmd naming DIR in its arguments."""
    marker = ("%s=%s" % (MARKER, lay.dir)).encode()
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            env = f.read().split(b"\0")
    except OSError:
        env = []
    # Other programs that merely mention DIR (a `tail -f` of a log, a
    # client) are not ours to kill.
    argv0 = os.path.basename(cmdline(pid).split(" ", 1)[0])
    ours = argv0 in ("munged", "slurmctld", "slurmd") and (
        (lay.dir + "/") in cmdline(pid))
    return marker in env or ours


def own_processes(lay):
    """pids (other than ours) that belong to the cluster in lay.dir: the
    daemons, their slurmstepd, and every descendant of those (job tasks
    carry the client's environment, not the marker)."""
    pids = [int(e) for e in os.listdir("/proc")
            if e.isdigit() and int(e) != os.getpid()]
    found = [pid for pid in pids if is_marked(lay, pid) and alive(pid, "")]
    parents = {pid: parent_of(pid) for pid in pids}
    grew = True
    while grew:
        grew = False
        for pid, ppid in parents.items():
            if ppid in found and pid not in found and alive(pid, ""):
                found.append(pid)
                grew = True
    return found


# ---------------------------------------------------------------- clients

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


# ---------------------------------------------------------------- start

def daemon_pids(lay):
    """(pid from its pid file, name) of each daemon, in stopping order."""
    return [(read_pid(lay.slurmd_pid), "slurmd"),
            (read_pid(lay.ctld_pid), "slurmctld"),
            (read_pid(lay.munge_pid), "munged")]


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


def start_all(lay):
    """munged, slurmctld, slurmd, each up before the next starts."""
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


def wait_idle(lay, timeout):
    """Until the node is idle; raises (with the logs' tails) if it is not
    idle within timeout seconds or a daemon died."""
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


# ---------------------------------------------------------------- stop

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


def kill_strays(lay):
    """SIGKILL to anything else of ours: slurmstepd or tasks that outlived
    the cancel."""
    stray = own_processes(lay)
    if not stray:
        return
    log("killing leftover processes: " + "; ".join(
        "%d %s" % (p, cmdline(p)) for p in stray))
    for p in stray:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    time.sleep(1)


def stop_all(lay):
    """Cancels every job, stops the daemons, kills what is left; 0 if
    nothing of lay.dir runs any more, else 1."""
    state = running(lay)
    if state["slurmctld"] and state["munged"]:
        cancel_all(lay, KILL_WAIT + 20)
    ok = True
    for pid, name in daemon_pids(lay):
        ok &= stop_pid(pid, name)
    kill_strays(lay)
    left = own_processes(lay) + [
        p for p, n in daemon_pids(lay) if alive(p, n)]
    if left:
        log("still running: " + "; ".join("%d %s" % (p, cmdline(p))
                                          for p in left))
        return 1
    return 0 if ok else 1
