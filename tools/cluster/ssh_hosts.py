#!/usr/bin/env python3
"""Fake ssh hosts on one machine, for testing the farm against a real OpenSSH sshd.

Each host is a Linux network namespace joined to the root namespace by a veth pair whose
root end sits on a bridge: real TCP over real interfaces, not loopback. Inside each
namespace a throwaway sshd (Debian's openssh-server, run as root) listens on a free port
on the host's own address; it also has its own hostname (hostN) and PID namespace, so
`hostname`, `ps` and `pkill` over ssh behave as on separate machines. The filesystem is
shared. The bridge holds the first address of the subnet: that is where the hosts reach
the farm master in the root namespace.

  ssh_hosts.py check [--install]                      exit 0 if usable, else 77 and why
  ssh_hosts.py up --dir DIR --hosts 3 [--prefix host] make hosts, print a JSON summary
  ssh -F DIR/ssh_config host1 hostname                reach one
  ssh_hosts.py kill-host --dir DIR --host host2       link down + kill all in it (a crash)
  ssh_hosts.py down --dir DIR                         remove everything `up` made

All state lives in DIR (keys, configs, pid files, logs, state.json); every system object
is named after a random 6-hex-digit id kept there, so overlapping runs never collide and
`down` only ever touches objects carrying its own id. Python standard library only.
"""
import argparse
import fcntl
import ipaddress
import json
import os
import pwd
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time

EXIT_SKIP = 77  # the CTest / automake convention for "skipped"
SSHD = "/usr/sbin/sshd"
PRIVSEP_DIR = "/run/sshd"  # sshd refuses to start as root without it
# Held while choosing a subnet and giving the bridge its address, so two concurrent `up`s
# cannot pick the same one. The (empty) file is left in place: deleting lock files races.
LOCK_FILE = "/run/lock/farm-ssh-hosts.lock"
SUBNET_POOL = ipaddress.ip_network("10.213.0.0/16")  # carved into /24s, one per run
NETNS_PREFIX = "farmssh-"
MAX_HOSTS = 200
SSHD_READY_TIMEOUT = 5.0


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


def log(msg):
    print(f"ssh_hosts: {msg}", file=sys.stderr)


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


# ---------------------------------------------------------------- keys and configs


def keygen(path, comment):
    run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path])
    with open(path + ".pub") as f:
        return f.read().strip()


def quoted(path):
    """ssh and sshd config values with spaces need double quotes."""
    return f'"{path}"'


def write_sshd_config(d, host):
    cfg = f"""\
# Throwaway sshd for {host['name']}, written by tools/cluster/ssh_hosts.py; removed by `down`.
# Runs as root in network namespace {host['netns']}.
# Port: a free ephemeral port the kernel picked inside that namespace at `up` time
# (ssh_config next to this directory gives it to clients).
Port {host['port']}
ListenAddress {host['ip']}
HostKey {quoted(host['host_key'])}
PidFile {quoted(host['pid_file'])}
AuthorizedKeysFile {quoted(os.path.join(d, 'authorized_keys'))}
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
# DIR may be group/world-writable (e.g. under /tmp); the keys in it are throwaway.
StrictModes no
UseDNS no
PrintMotd no
PrintLastLog no
LogLevel VERBOSE
# Tests open many sessions at once (one per worker); the default 10:30:100 drops some.
MaxStartups 200
MaxSessions 100
ClientAliveInterval 5
ClientAliveCountMax 3
Subsystem sftp /usr/lib/openssh/sftp-server
"""
    with open(host["sshd_config"], "w") as f:
        f.write(cfg)


def write_client_files(d, state):
    """ssh_config, known_hosts, hosts.txt and master_address: what tests and humans read."""
    known = []
    blocks = []
    for h in state["hosts"]:
        # ssh looks keys up by "[HostName]:Port" when the port is not 22.
        known.append(f"[{h['ip']}]:{h['port']} {h['host_pub']}")
        blocks.append(f"Host {h['name']}\n  HostName {h['ip']}\n  Port {h['port']}\n")
    with open(os.path.join(d, "known_hosts"), "w") as f:
        f.write("\n".join(known) + "\n")
    common = f"""\
# Written by tools/cluster/ssh_hosts.py for run {state['id']}: use as `ssh -F {d}/ssh_config hostN`.
Host *
  User root
  IdentityFile {quoted(os.path.join(d, 'id_ed25519'))}
  IdentitiesOnly yes
  BatchMode yes
  UserKnownHostsFile {quoted(os.path.join(d, 'known_hosts'))}
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  UpdateHostKeys no
  ConnectTimeout 5
  # A host that dies silently (kill-host) is noticed after about 3 x 2 s.
  ServerAliveInterval 2
  ServerAliveCountMax 3
  ControlMaster no
  ControlPath none
  LogLevel ERROR
"""
    # ssh uses the first value it finds for each option, so host blocks come first.
    with open(os.path.join(d, "ssh_config"), "w") as f:
        f.write("\n".join(blocks) + "\n" + common)
    with open(os.path.join(d, "hosts.txt"), "w") as f:
        f.write("".join(f"root@{h['name']}\n" for h in state["hosts"]))
    with open(os.path.join(d, "master_address"), "w") as f:
        f.write(state["master_address"] + "\n")


# ---------------------------------------------------------------- sshd


def start_sshd(host):
    """Starts sshd in the host's namespace, in the foreground (-D), under `unshare`.

    unshare gives the host its own hostname (UTS namespace) and its own PID namespace with
    its own /proc, so `ps`, `kill` and `pkill` over ssh see only that host's processes, as on
    a real machine. sshd is pid 1 there: when it dies the kernel kills the rest of the host,
    and --kill-child makes it die with unshare, whose pid (in our namespace) is the one
    recorded. stdio goes to files, never to our caller's pipes (a test reading our stdout to
    EOF would otherwise wait for sshd to exit).
    """
    script = 'hostname "$0" && ' + mask_bashrc_script(host) + 'exec "$@"'
    cmd = ["ip", "netns", "exec", host["netns"],
           "unshare", "--uts", "--pid", "--fork", "--kill-child", "--mount-proc", "--",
           "/bin/sh", "-c", script, host["name"],
           SSHD, "-D", "-f", host["sshd_config"], "-E", host["log"]]
    with open(host["log"] + ".stderr", "w") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=err, stderr=err,
                                start_new_session=True)
    host["pid"] = proc.pid
    return proc


def mask_bashrc_script(host):
    """Shell text that hides root's ~/.bashrc from the host's sessions, or "" if it has none.

    Debian's bash sources ~/.bashrc even for `ssh host command` (it sees SSH_CLIENT), and a
    developer's .bashrc (pyenv init here) can cost over a second per command. The fake hosts
    get an empty one instead, like a fresh machine. The bind mount lives in the private mount
    namespace unshare makes for this host, so nothing outside it sees the change.
    """
    bashrc = os.path.join(pwd.getpwuid(0).pw_dir, ".bashrc")
    if not os.path.isfile(bashrc):
        return ""
    empty = os.path.join(os.path.dirname(host["sshd_config"]), "bashrc")
    with open(empty, "w") as f:
        f.write("# Empty: hides the real ~root/.bashrc from this fake host (see ssh_hosts.py).\n")
    return f"mount --bind {shlex.quote(empty)} {shlex.quote(bashrc)} && "


def wait_sshd_ready(host, proc, deadline):
    """Ready = sshd wrote its pid file (it does so after binding) and accepts TCP from here.

    Connecting from the root namespace also proves the veth/bridge path works.
    """
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise HarnessError(f"sshd for {host['name']} exited with {proc.returncode}:\n"
                               + tail(host["log"]) + tail(host["log"] + ".stderr"))
        if os.path.exists(host["pid_file"]):
            try:
                socket.create_connection((host["ip"], host["port"]), timeout=0.5).close()
                return
            except OSError:
                pass
        time.sleep(0.02)
    raise HarnessError(f"sshd for {host['name']} not accepting on {host['ip']}:{host['port']} "
                       f"after {SSHD_READY_TIMEOUT} s:\n" + tail(host["log"]))


def tail(path, lines=10):
    try:
        with open(path) as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


# ---------------------------------------------------------------- commands


# Debian packages the harness runs: sshd; ip; unshare and mount; hostname; ssh and ssh-keygen.
PACKAGES = ["openssh-server", "iproute2", "util-linux", "mount", "hostname", "openssh-client"]


def install_packages():
    """apt-get installs whichever of PACKAGES is missing (root only; Debian's archive only).

    On a machine running systemd, openssh-server's install also starts the system's own sshd
    on port 22; in containers with a policy-rc.d (like CI here) it does not.
    """
    missing = [p for p in PACKAGES
               if "install ok installed" not in run(["dpkg-query", "-W", "-f=${Status}", p],
                                                    check=False)]
    if not missing or os.geteuid() != 0:
        return
    log(f"installing {' '.join(missing)}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update", "-qq"],
                ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing]):
        if subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL).returncode != 0:
            raise HarnessError(f"`{shlex.join(cmd)}` failed")


def cmd_check(args):
    if args.install:
        install_packages()
    reason = check_reason()
    if reason:
        print(f"ssh_hosts: cannot run here: {reason}")
        return EXIT_SKIP
    print("ssh_hosts: ok")
    return 0


def check_reason():
    """Why this machine cannot run the harness, or None. Tries a namespace, a veth, unshare."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, veth, sshd as root)"
    for tool in ("ip", "ssh", "ssh-keygen", "unshare", "hostname"):
        if not shutil.which(tool):
            return f"`{tool}` not found"
    if not os.access(SSHD, os.X_OK):
        return f"{SSHD} not found (Debian package openssh-server)"
    ns, link = f"{NETNS_PREFIX}check{os.getpid()}", f"fschk{os.getpid() % 100000}"
    try:
        run(["ip", "netns", "add", ns])
        run(["ip", "link", "add", link, "type", "veth", "peer", "name", "eth0", "netns", ns])
        # The namespaces each sshd runs under (see start_sshd).
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


def cmd_up(args):
    d = os.path.abspath(args.dir)
    if not 1 <= args.hosts <= MAX_HOSTS:
        raise HarnessError(f"--hosts must be 1..{MAX_HOSTS}")
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]{0,30}", args.prefix):
        raise HarnessError("--prefix must be a letter then letters, digits, _ or - (max 31)")
    reason = check_reason()
    if reason:
        raise HarnessError(f"cannot run here: {reason}")
    os.makedirs(d, exist_ok=True)
    old = load_state(d)
    if old and anything_alive(old):
        raise HarnessError(f"{d} holds a running harness (id {old['id']}); run `down` first")

    run_id = secrets.token_hex(3)
    state = {"id": run_id, "dir": d, "prefix": args.prefix, "hosts": [], **names_for(run_id)}
    save_state(d, state)
    started = time.monotonic()
    try:
        bring_up(d, state, args)
    except BaseException:
        log("up failed; removing what it made")
        tear_down(state)
        raise
    summary = {
        "id": run_id, "dir": d, "subnet": state["subnet"],
        "master_address": state["master_address"], "bridge": state["bridge"],
        "ssh_config": os.path.join(d, "ssh_config"), "hosts_file": os.path.join(d, "hosts.txt"),
        "hosts": [{k: h[k] for k in ("name", "ip", "port", "netns", "pid")}
                  for h in state["hosts"]],
        "seconds": round(time.monotonic() - started, 2),
    }
    print(json.dumps(summary, indent=2))
    return 0


def bring_up(d, state, args):
    os.makedirs(PRIVSEP_DIR, mode=0o755, exist_ok=True)
    user_key = os.path.join(d, "id_ed25519")
    for stale in (user_key, user_key + ".pub"):
        if os.path.exists(stale):
            os.remove(stale)  # ssh-keygen would ask before overwriting
    with open(os.path.join(d, "authorized_keys"), "w") as f:
        f.write(keygen(user_key, f"farm-ssh-harness-{state['id']}") + "\n")

    make_bridge(state, d)
    subnet = ipaddress.ip_network(state["subnet"])
    for n in range(1, args.hosts + 1):
        name = f"{args.prefix}{n}"
        hd = os.path.join(d, name)
        os.makedirs(hd, exist_ok=True)
        for stale in os.listdir(hd):
            os.remove(os.path.join(hd, stale))
        host = {
            "name": name, "ip": str(subnet.network_address + 1 + n),
            "netns": f"{state['netns_prefix']}{name}", "root_link": f"{state['link_prefix']}h{n}",
            "sshd_config": os.path.join(hd, "sshd_config"),
            "host_key": os.path.join(hd, "ssh_host_ed25519_key"),
            "pid_file": os.path.join(hd, "sshd.pid"), "log": os.path.join(hd, "sshd.log"),
        }
        state["hosts"].append(host)
        make_host_network(state, d, host)
        host["host_pub"] = " ".join(keygen(host["host_key"], name).split()[:2])
        host["port"] = free_port_in(host["netns"])
        write_sshd_config(d, host)

    # Start every sshd first, then wait: their start-up overlaps.
    procs = [start_sshd(h) for h in state["hosts"]]
    save_state(d, state)
    deadline = time.monotonic() + SSHD_READY_TIMEOUT
    for host, proc in zip(state["hosts"], procs):
        wait_sshd_ready(host, proc, deadline)
    write_client_files(d, state)


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
    errors = []
    for ns in our_netns(state):
        try:
            kill_netns_processes(ns)
            if netns_exists(ns):
                run(["ip", "netns", "del", ns])
        except HarnessError as e:
            errors.append(str(e))
    for host in state["hosts"]:
        kill_recorded_pid(host)
    for link in our_links(state):
        if link_exists(link):  # a veth vanishes with its peer's namespace
            try:
                run(["ip", "link", "del", link])
            except HarnessError as e:
                if link_exists(link):
                    errors.append(str(e))
    if errors:
        raise HarnessError("down left things behind:\n  " + "\n  ".join(errors))


def cmd_down(args):
    d = os.path.abspath(args.dir)
    state = load_state(d)
    if state is None:
        log(f"nothing to do: no {state_path(d)}")
        return 0
    tear_down(state)
    log(f"down: run {state['id']} removed")
    return 0


def cmd_kill_host(args):
    """A crash, not a shutdown: the link goes down first, so no FIN or RST reaches anyone."""
    d = os.path.abspath(args.dir)
    state = load_state(d)
    if state is None:
        raise HarnessError(f"no harness in {d} (no state.json)")
    host = next((h for h in state["hosts"] if h["name"] == args.host), None)
    if host is None:
        names = ", ".join(h["name"] for h in state["hosts"])
        raise HarnessError(f"no host {args.host!r} in {d}; hosts are: {names}")
    if not netns_exists(host["netns"]):
        raise HarnessError(f"{args.host} is not running (netns {host['netns']} is gone)")
    run(["ip", "-n", host["netns"], "link", "set", "eth0", "down"])
    if link_exists(host["root_link"]):
        run(["ip", "link", "set", host["root_link"], "down"])
    kill_netns_processes(host["netns"], sig=signal.SIGKILL)
    kill_recorded_pid(host)
    log(f"kill-host: {args.host} is down ({host['ip']})")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="exit 0 if this machine can run the harness, else 77")
    check.add_argument("--install", action="store_true",
                       help="first apt-get install the missing Debian packages (root)")
    up = sub.add_parser("up", help="create N hosts; print a JSON summary")
    up.add_argument("--dir", required=True, help="directory for all state (created if missing)")
    up.add_argument("--hosts", type=int, required=True, help="number of hosts")
    up.add_argument("--prefix", default="host",
                    help="host names are PREFIX1..PREFIXN (default host)")
    down = sub.add_parser("down", help="remove everything `up` made in DIR (idempotent)")
    down.add_argument("--dir", required=True)
    kill = sub.add_parser("kill-host",
                          help="simulate a host dying: link down, all its processes killed")
    kill.add_argument("--dir", required=True)
    kill.add_argument("--host", required=True, help="host name, e.g. host2")
    args = p.parse_args()

    # SIGTERM (e.g. a test timing out) unwinds like Ctrl-C, so a half-done `up` cleans up.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    handlers = {"check": cmd_check, "up": cmd_up, "down": cmd_down, "kill-host": cmd_kill_host}
    try:
        return handlers[args.command](args)
    except HarnessError as e:
        log(f"error: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
