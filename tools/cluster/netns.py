"""Network plumbing of ssh_hosts.py: namespaces, the bridge, veth pairs, and state.json.

Each host is a Linux network namespace joined to the root namespace by a veth pair whose
root end sits on a bridge. Every system object is named after the run's random id, kept in
DIR/state.json, so overlapping runs never collide and tear_down only ever touches objects
carrying its own id. Python standard library only.
"""
import fcntl
import ipaddress
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time

# Held while choosing a subnet and giving the bridge its address, so two concurrent `up`s
# cannot pick the same one. The (empty) file is left in place: deleting lock files races.
LOCK_FILE = "/run/lock/farm-ssh-hosts.lock"
SUBNET_POOL = ipaddress.ip_network("10.213.0.0/16")  # carved into /24s, one per run
NETNS_PREFIX = "farmssh-"


class HarnessError(Exception):
    """A failure with a message meant for the person or test that ran us."""


# ---------------------------------------------------------------- small helpers


def run(cmd, check=True):
    """Runs a command, returns its stdout; on failure raises with the command and its stderr."""
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise HarnessError(f"`{shlex.join(cmd)}` failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


def link_exists(name):
    return os.path.exists(f"/sys/class/net/{name}")


def netns_exists(name):
    return os.path.exists(f"/run/netns/{name}")


# ---------------------------------------------------------------- state in DIR


def state_path(d):
    return os.path.join(d, "state.json")


def load_state(d):
    try:
        with open(state_path(d)) as f:
            return json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise HarnessError(f"cannot read {state_path(d)}: {e}")


def save_state(d, state):
    """Written before each object is created, so a crash mid-`up` still lets `down` find it."""
    tmp = state_path(d) + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f, indent=2)
    os.replace(tmp, state_path(d))


def names_for(run_id):
    """Every system-wide name derives from the run id; Linux caps link names at 15 chars."""
    return {
        "bridge": f"fs{run_id}br",  # 10 chars
        "link_prefix": f"fs{run_id}",  # root veth ends: fs<id>h<n>, at most 12 chars
        "netns_prefix": f"{NETNS_PREFIX}{run_id}-",
    }


# ---------------------------------------------------------------- processes in namespaces


def netns_pids(ns):
    if not netns_exists(ns):
        return []
    return [int(p) for p in run(["ip", "netns", "pids", ns], check=False).split()]


def parent_pid(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def kill_netns_processes(ns, sig=signal.SIGTERM, grace=2.0):
    """Signals every process in the namespace until none is left (sessions may fork meanwhile).

    Starts with `sig`; whatever survives `grace` seconds gets SIGKILL. Processes whose parent
    is in the namespace go first, and their parents get half a second to exit by themselves:
    then each host's `unshare` reaps its sshd, instead of dying first and leaving an sshd
    zombie for init to collect.
    """
    start = time.monotonic()
    deadline = start + grace
    inner_gone = None
    while True:
        pids = netns_pids(ns)
        if not pids:
            return
        inner = [p for p in pids if parent_pid(p) in pids]
        now = time.monotonic()
        if inner:
            targets = inner
        else:
            inner_gone = inner_gone or now
            targets = pids if now - inner_gone > 0.5 or now == start else []
        use = signal.SIGKILL if now > deadline else sig
        for pid in targets:
            try:
                os.kill(pid, use)
            except ProcessLookupError:
                pass
        if now > deadline + 3.0:
            raise HarnessError(f"processes {pids} in netns {ns} survive SIGKILL")
        time.sleep(0.05)


def is_ours(pid, config):
    """Guards against pid reuse: only a process whose arguments name our config file is ours."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return config.encode() in f.read().split(b"\0")
    except OSError:
        return False


def kill_recorded_pid(host):
    """Kills the host's recorded pid (its `unshare`, sshd's parent) if it is still ours.

    It normally dies with its namespace's processes; this is a fallback for one moved out of
    the namespace. Never call it first: killing unshare orphans its sshd (a zombie for init).
    """
    pid = host.get("pid")
    if pid and is_ours(pid, host["sshd_config"]):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


# ---------------------------------------------------------------- the network


def used_networks():
    """Addresses and routes already on this machine's root namespace, as networks."""
    nets = []
    for line in run(["ip", "-4", "-o", "addr"]).splitlines():
        m = re.search(r"\binet (\S+)", line)
        if m:
            nets.append(ipaddress.ip_interface(m.group(1)).network)
    for line in run(["ip", "-4", "route", "show", "table", "all"]).splitlines():
        # "10.1.0.0/16 via ..." or "local 10.1.2.3 dev ..." (type first); "default" is skipped.
        words = line.split()
        if words and words[0] in ("broadcast", "local", "unreachable", "blackhole", "prohibit"):
            words = words[1:]
        try:
            net = ipaddress.ip_network(words[0], strict=False)
        except (IndexError, ValueError):
            continue
        nets.append(net)
    return nets


def choose_subnet():
    """The first /24 of the pool that overlaps nothing already configured here."""
    used = used_networks()
    for subnet in SUBNET_POOL.subnets(new_prefix=24):
        if not any(subnet.overlaps(n) for n in used):
            return subnet
    raise HarnessError(f"every /24 of {SUBNET_POOL} is in use on this machine")


def make_bridge(state, d):
    """Creates the bridge and gives it the master address, under the lock (see LOCK_FILE)."""
    os.makedirs(os.path.dirname(LOCK_FILE), exist_ok=True)
    with open(LOCK_FILE, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subnet = choose_subnet()
        master = str(subnet.network_address + 1)
        state["subnet"] = str(subnet)
        state["master_address"] = master
        save_state(d, state)
        bridge = state["bridge"]
        # forward_delay 0: ports forward at once instead of after 15 s of STP listening.
        run(["ip", "link", "add", bridge, "type", "bridge", "forward_delay", "0"])
        run(["ip", "addr", "add", f"{master}/{subnet.prefixlen}", "dev", bridge])
        run(["ip", "link", "set", bridge, "up"])


def make_host_network(state, d, host):
    """A namespace whose eth0 is one end of a veth pair; the other end joins the bridge."""
    save_state(d, state)  # the host entry (names) is recorded before anything exists
    ns, root_end = host["netns"], host["root_link"]
    prefixlen = ipaddress.ip_network(state["subnet"]).prefixlen
    run(["ip", "netns", "add", ns])
    # The peer is created directly inside the namespace, so it can be called eth0 there.
    run(["ip", "link", "add", root_end, "type", "veth", "peer", "name", "eth0", "netns", ns])
    run(["ip", "link", "set", root_end, "master", state["bridge"], "up"])
    run(["ip", "-n", ns, "link", "set", "lo", "up"])
    run(["ip", "-n", ns, "addr", "add", f"{host['ip']}/{prefixlen}", "dev", "eth0"])
    run(["ip", "-n", ns, "link", "set", "eth0", "up"])


def free_port_in(ns):
    """Asks the kernel for a free ephemeral port inside the namespace (ports are per netns).

    The namespace is fresh and only our sshd will bind there, so the port stays free.
    """
    code = "import socket; s=socket.socket(); s.bind(('0.0.0.0', 0)); print(s.getsockname()[1])"
    return int(run(["ip", "netns", "exec", ns, sys.executable, "-c", code]).strip())


def cut_host_off(host):
    """Takes the host's link down at both ends: from now on nothing it sends arrives."""
    run(["ip", "-n", host["netns"], "link", "set", "eth0", "down"])
    if link_exists(host["root_link"]):
        run(["ip", "link", "set", host["root_link"], "down"])


# ---------------------------------------------------------------- tear-down


def anything_alive(state):
    """True if any object named after this run still exists."""
    if link_exists(state["bridge"]):
        return True
    return any(netns_exists(h["netns"]) or link_exists(h["root_link"]) for h in state["hosts"])


def our_netns(state):
    """Namespaces carrying the run id, recorded or not (a crash may have cut the record)."""
    try:
        found = [n for n in os.listdir("/run/netns") if n.startswith(state["netns_prefix"])]
    except FileNotFoundError:
        found = []
    return sorted(set(found) | {h["netns"] for h in state["hosts"]})


def our_links(state):
    try:
        found = [n for n in os.listdir("/sys/class/net") if n.startswith(state["link_prefix"])]
    except FileNotFoundError:
        found = []
    # Ports before the bridge (deleting veths first keeps the order obvious).
    return sorted(set(found), key=lambda n: n == state["bridge"])


def tear_down(state):
    """Kills processes, then deletes namespaces, veths and the bridge. Missing things are fine."""
    errors = remove_namespaces(state)
    for host in state["hosts"]:
        kill_recorded_pid(host)
    errors += remove_links(state)
    if errors:
        raise HarnessError("down left things behind:\n  " + "\n  ".join(errors))


def remove_namespaces(state):
    """Empties and deletes every namespace of the run; returns the errors met."""
    errors = []
    for ns in our_netns(state):
        try:
            kill_netns_processes(ns)
            if netns_exists(ns):
                run(["ip", "netns", "del", ns])
        except HarnessError as e:
            errors.append(str(e))
    return errors


def remove_links(state):
    """Deletes the run's remaining veth ends and its bridge; returns the errors met."""
    errors = []
    for link in our_links(state):
        if link_exists(link):  # a veth vanishes with its peer's namespace
            try:
                run(["ip", "link", "del", link])
            except HarnessError as e:
                if link_exists(link):
                    errors.append(str(e))
    return errors


def probe_reason(tag):
    """Tries a namespace, a veth in it, and the unshare each sshd runs under; None if all work.

    `tag` makes the throwaway names unique to the caller (its pid).
    """
    ns, link = f"{NETNS_PREFIX}check{tag}", f"fschk{tag % 100000}"
    try:
        run(["ip", "netns", "add", ns])
        run(["ip", "link", "add", link, "type", "veth", "peer", "name", "eth0", "netns", ns])
        # The namespaces each sshd runs under (see sshd_host.start_sshd).
        run(["ip", "netns", "exec", ns, "unshare", "--uts", "--pid", "--fork", "--kill-child",
             "--mount-proc", "true"])
    except HarnessError as e:
        return f"network namespaces unusable: {e}"
    finally:
        if link_exists(link):
            run(["ip", "link", "del", link], check=False)
        if netns_exists(ns):
            run(["ip", "netns", "del", ns], check=False)
    return None
