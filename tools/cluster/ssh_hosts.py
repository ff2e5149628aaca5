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
import ipaddress
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import time

# This file is the command line; the work is done by the modules beside it: netns.py
# (namespaces, bridge, veths, state.json) and sshd_host.py (keys, configs, each sshd).
# They are found wherever this is run from; no bytecode is written into the source tree
# (this runs as root).
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import netns  # noqa: E402
import sshd_host  # noqa: E402
from netns import HarnessError, run  # noqa: E402

EXIT_SKIP = 77  # the CTest / automake convention for "skipped"
MAX_HOSTS = 200


def log(msg):
    print(f"ssh_hosts: {msg}", file=sys.stderr)


# ---------------------------------------------------------------- check


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
    if not os.access(sshd_host.SSHD, os.X_OK):
        return f"{sshd_host.SSHD} not found (Debian package openssh-server)"
    return netns.probe_reason(os.getpid())


# ---------------------------------------------------------------- up


def cmd_up(args):
    d = os.path.abspath(args.dir)
    check_up_args(args)
    os.makedirs(d, exist_ok=True)
    old = netns.load_state(d)
    if old and netns.anything_alive(old):
        raise HarnessError(f"{d} holds a running harness (id {old['id']}); run `down` first")

    run_id = secrets.token_hex(3)
    state = {"id": run_id, "dir": d, "prefix": args.prefix, "hosts": [],
             **netns.names_for(run_id)}
    netns.save_state(d, state)
    started = time.monotonic()
    try:
        bring_up(d, state, args)
    except BaseException:
        log("up failed; removing what it made")
        netns.tear_down(state)
        raise
    print(json.dumps(up_summary(d, state, time.monotonic() - started), indent=2))
    return 0


def check_up_args(args):
    if not 1 <= args.hosts <= MAX_HOSTS:
        raise HarnessError(f"--hosts must be 1..{MAX_HOSTS}")
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]{0,30}", args.prefix):
        raise HarnessError("--prefix must be a letter then letters, digits, _ or - (max 31)")
    reason = check_reason()
    if reason:
        raise HarnessError(f"cannot run here: {reason}")


def up_summary(d, state, seconds):
    """The JSON `up` prints; tests read it."""
    return {
        "id": state["id"], "dir": d, "subnet": state["subnet"],
        "master_address": state["master_address"], "bridge": state["bridge"],
        "ssh_config": os.path.join(d, "ssh_config"), "hosts_file": os.path.join(d, "hosts.txt"),
        "hosts": [{k: h[k] for k in ("name", "ip", "port", "netns", "pid")}
                  for h in state["hosts"]],
        "seconds": round(seconds, 2),
    }


def bring_up(d, state, args):
    os.makedirs(sshd_host.PRIVSEP_DIR, mode=0o755, exist_ok=True)
    sshd_host.make_user_key(d, state["id"])
    netns.make_bridge(state, d)
    for n in range(1, args.hosts + 1):
        make_host(d, state, f"{args.prefix}{n}", n)

    # Start every sshd first, then wait: their start-up overlaps.
    procs = [sshd_host.start_sshd(h) for h in state["hosts"]]
    netns.save_state(d, state)
    sshd_host.wait_all_ready(state["hosts"], procs)
    sshd_host.write_client_files(d, state)


def make_host(d, state, name, n):
    """Host number n: its directory, namespace and link, host key, port and sshd_config."""
    hd = os.path.join(d, name)
    os.makedirs(hd, exist_ok=True)
    for stale in os.listdir(hd):
        os.remove(os.path.join(hd, stale))
    subnet = ipaddress.ip_network(state["subnet"])
    host = {
        "name": name, "ip": str(subnet.network_address + 1 + n),
        "netns": f"{state['netns_prefix']}{name}", "root_link": f"{state['link_prefix']}h{n}",
        "sshd_config": os.path.join(hd, "sshd_config"),
        "host_key": os.path.join(hd, "ssh_host_ed25519_key"),
        "pid_file": os.path.join(hd, "sshd.pid"), "log": os.path.join(hd, "sshd.log"),
    }
    state["hosts"].append(host)
    netns.make_host_network(state, d, host)
    host["host_pub"] = " ".join(sshd_host.keygen(host["host_key"], name).split()[:2])
    host["port"] = netns.free_port_in(host["netns"])
    sshd_host.write_sshd_config(d, host)


# ---------------------------------------------------------------- down, kill-host


def cmd_down(args):
    d = os.path.abspath(args.dir)
    state = netns.load_state(d)
    if state is None:
        log(f"nothing to do: no {netns.state_path(d)}")
        return 0
    netns.tear_down(state)
    log(f"down: run {state['id']} removed")
    return 0


def cmd_kill_host(args):
    """A crash, not a shutdown: the link goes down first, so no FIN or RST reaches anyone."""
    d = os.path.abspath(args.dir)
    state = netns.load_state(d)
    if state is None:
        raise HarnessError(f"no harness in {d} (no state.json)")
    host = next((h for h in state["hosts"] if h["name"] == args.host), None)
    if host is None:
        names = ", ".join(h["name"] for h in state["hosts"])
        raise HarnessError(f"no host {args.host!r} in {d}; hosts are: {names}")
    if not netns.netns_exists(host["netns"]):
        raise HarnessError(f"{args.host} is not running (netns {host['netns']} is gone)")
    netns.cut_host_off(host)
    netns.kill_netns_processes(host["netns"], sig=signal.SIGKILL)
    netns.kill_recorded_pid(host)
    log(f"kill-host: {args.host} is down ({host['ip']})")
    return 0


# ---------------------------------------------------------------- command line


def parse_args():
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
    return p.parse_args()


def main():
    args = parse_args()
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
