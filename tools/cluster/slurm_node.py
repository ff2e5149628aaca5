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
import signal
import socket
import subprocess
import sys

# This file is the command line; the work is done by the modules beside it:
# slurm_conf.py (DIR's layout, MUNGE key, slurm.conf) and slurm_daemons.py
# (start, wait, cancel, stop). They are found wherever this is run from; no
# bytecode is written into the source tree (this runs as root).
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import slurm_conf  # noqa: E402
import slurm_daemons  # noqa: E402
from slurm_conf import (INACTIVE_LIMIT, KILL_WAIT, PARTITION,  # noqa: E402
                        UNIX_PATH_MAX, Layout, log, node_name)
from slurm_daemons import read_pid, which  # noqa: E402

EXIT_SKIP = 77

# Debian packages that provide everything below; `install` installs them.
PACKAGES = ["munge", "slurmctld", "slurmd", "slurm-client"]
DAEMONS = ["munged", "slurmctld", "slurmd", "slurmstepd"]
CLIENTS = ["munge", "unmunge", "sinfo", "squeue", "scancel", "scontrol",
           "salloc", "srun", "sbatch"]


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


def print_skip(why):
    print("SKIP: cannot run a single-node Slurm cluster: "
          + "; ".join(why))


def cmd_check(args):
    if args.install and problems():
        try:
            cmd_install(args)
        except (OSError, subprocess.CalledProcessError) as e:
            log("install failed: %s" % e)
    why = problems()
    if why:
        print_skip(why)
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


# ---------------------------------------------------------------- up

def summary(lay):
    """The JSON `up` prints and keeps in DIR/cluster.json."""
    ctld_port, slurmd_port = slurm_conf.conf_ports(lay)
    return {
        "dir": lay.dir,
        "env": {"SLURM_CONF": lay.conf},
        "node": node_name(),
        "cpus": slurm_conf.cpu_count(),
        "partition": PARTITION,
        "slurmctld_port": ctld_port,
        "slurmd_port": slurmd_port,
        "munge_socket": lay.munge_socket,
        "kill_wait": KILL_WAIT,
        "inactive_limit": INACTIVE_LIMIT,
        "pids": {"munged": read_pid(lay.munge_pid),
                 "slurmctld": read_pid(lay.ctld_pid),
                 "slurmd": read_pid(lay.slurmd_pid)},
        "logs": {"munged": lay.munge_log, "slurmctld": lay.ctld_log,
                 "slurmd": lay.slurmd_log},
    }


def _raise_interrupt(signum, _frame):
    raise KeyboardInterrupt("signal %d" % signum)


def cmd_up(args):
    signal.signal(signal.SIGTERM, _raise_interrupt)
    why = problems()
    if why:
        print_skip(why)
        return EXIT_SKIP
    lay = Layout(args.dir)
    if len(lay.munge_socket) > UNIX_PATH_MAX:
        log("--dir too long for a unix socket path: %s" % lay.munge_socket)
        return 2
    if os.path.exists(lay.conf):
        state = slurm_daemons.running(lay)
        if healthy(lay, state):
            print(json.dumps(summary(lay), indent=2))
            return 0
        if any(state.values()) or slurm_daemons.own_processes(lay):
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


def healthy(lay, state):
    """Every daemon runs (state: running()) and the node takes jobs: `up`
    has nothing to do."""
    return (all(state.values())
            and slurm_daemons.node_state(lay) in ("idle", "mixed",
                                                  "allocated"))


def up(lay, timeout):
    slurm_conf.make_dirs(lay)
    slurm_conf.make_key(lay)
    ctld_port, slurmd_port = slurm_conf.free_ports(2)
    slurm_conf.write_conf(lay, ctld_port, slurmd_port)
    slurm_daemons.start_all(lay)
    slurm_daemons.wait_idle(lay, timeout)
    s = summary(lay)
    with open(lay.summary, "w") as f:
        json.dump(s, f, indent=2)
    print(json.dumps(s, indent=2))
    return 0


# ---------------------------------------------------------------- down, env

def cmd_down(args):
    lay = Layout(args.dir)
    if not os.path.isdir(lay.dir):
        return 0
    return slurm_daemons.stop_all(lay)


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
