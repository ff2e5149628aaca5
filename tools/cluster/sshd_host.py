"""One fake host's sshd for ssh_hosts.py: keys, sshd_config, client files, start and readiness.

Each host runs a throwaway sshd (Debian's openssh-server, as root) in its network namespace,
under `unshare` so it also has its own hostname and PID namespace. Python standard library only.
"""
import os
import pwd
import shlex
import socket
import subprocess
import time

from netns import HarnessError, run

SSHD = "/usr/sbin/sshd"
PRIVSEP_DIR = "/run/sshd"  # sshd refuses to start as root without it
SSHD_READY_TIMEOUT = 5.0


# ---------------------------------------------------------------- keys and configs


def keygen(path, comment):
    run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path])
    with open(path + ".pub") as f:
        return f.read().strip()


def make_user_key(d, run_id):
    """A fresh client key pair in DIR, authorized on every host."""
    user_key = os.path.join(d, "id_ed25519")
    for stale in (user_key, user_key + ".pub"):
        if os.path.exists(stale):
            os.remove(stale)  # ssh-keygen would ask before overwriting
    with open(os.path.join(d, "authorized_keys"), "w") as f:
        f.write(keygen(user_key, f"farm-ssh-harness-{run_id}") + "\n")


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


def client_common(d, run_id):
    """The `Host *` block of ssh_config: options every host shares."""
    return f"""\
# Written by tools/cluster/ssh_hosts.py for run {run_id}: use as `ssh -F {d}/ssh_config hostN`.
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
    # ssh uses the first value it finds for each option, so host blocks come first.
    with open(os.path.join(d, "ssh_config"), "w") as f:
        f.write("\n".join(blocks) + "\n" + client_common(d, state["id"]))
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


def wait_all_ready(hosts, procs):
    """Waits for every started sshd under one shared deadline."""
    deadline = time.monotonic() + SSHD_READY_TIMEOUT
    for host, proc in zip(hosts, procs):
        wait_sshd_ready(host, proc, deadline)


def tail(path, lines=10):
    try:
        with open(path) as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""
