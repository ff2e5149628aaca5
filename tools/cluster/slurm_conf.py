"""Files of slurm_node.py's single-node cluster: where they live in DIR, the MUNGE key and
slurm.conf. Standard library only.
"""

import os
import socket
import sys

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


# ---------------------------------------------------------------- this machine

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


# ---------------------------------------------------------------- files

def make_dirs(lay):
    os.makedirs(lay.dir, exist_ok=True)
    # munged insists: socket directory searchable by all, nothing on the
    # way writable by group/other (unless sticky), key 0600 owned by us.
    os.chmod(lay.dir, 0o755)
    for d in (lay.munge_dir, lay.state, lay.spool, lay.logs, lay.run):
        os.makedirs(d, exist_ok=True)
        os.chmod(d, 0o755)


def make_key(lay):
    """A 1024-byte random MUNGE key, owned by root, mode 0600."""
    if os.path.exists(lay.munge_key):
        return
    fd = os.open(lay.munge_key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, os.urandom(1024))
    finally:
        os.close(fd)


CONF = """\
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
"""


def write_conf(lay, ctld_port, slurmd_port):
    conf = CONF.format(
        conf=lay.conf, cluster=CLUSTER, name=node_name(), ctld_port=ctld_port,
        slurmd_port=slurmd_port, munge_socket=lay.munge_socket,
        state=lay.state, spool=lay.spool, ctld_pid=lay.ctld_pid,
        slurmd_pid=lay.slurmd_pid, ctld_log=lay.ctld_log,
        slurmd_log=lay.slurmd_log, kill_wait=KILL_WAIT,
        inactive_limit=INACTIVE_LIMIT, cpus=cpu_count(),
        mem=real_memory_mb(), partition=PARTITION)
    with open(lay.conf, "w") as f:
        f.write(conf)
    os.chmod(lay.conf, 0o644)


def conf_ports(lay):
    """(SlurmctldPort, SlurmdPort) as written in slurm.conf."""
    with open(lay.conf) as f:
        kv = dict(l.strip().split("=", 1) for l in f
                  if "=" in l and not l.startswith(("#", "NodeName",
                                                   "PartitionName")))
    return int(kv["SlurmctldPort"]), int(kv["SlurmdPort"])
