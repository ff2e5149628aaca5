"""One harness for farm runs on this machine: start `farm master`, delaying proxies
(tools/net/delay_proxy.py), `farm relay` and `farm worker`s, learn where each one listens, wait
for the master and read its `--stats` JSON. Results come from the stats JSON only, never from
log wording.

    with LocalFarm(farm) as lf:
        endpoint = lf.master(scene, out, stats, ["--width", "64", "--height", "64"])
        lf.worker(lf.proxy(endpoint, ["--preset", "dorm"]), ["--name", "w1"], log=path)
        st = lf.finish(stats, timeout=600)      # waits for the master, then the workers

    st = master_with_workers(farm, scene, out, stats, master_args, 4, worker_args, tmp)

Where a process listens: `farm master` and `farm relay` bind port * and write the endpoint to
their `--endpoint-file` once they listen (read here, never their log's wording); the proxy
prints "listening on HOST:PORT", its documented stdout line (ENDPOINT, endpoint_in). Binding a
port picked here instead would start the workers before the master listens, which moves their
measured join times. tools/chaos.py, which restarts masters on their first port, reads its log
files with endpoint_in.

Every process started is killed on the way out of the `with` block (even on errors); output of
processes without a log file is read by a thread, so none blocks on a full pipe, and kept for
error messages (FarmRunError).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from farmtools import ROOT

PROXY = os.path.join(ROOT, "tools", "net", "delay_proxy.py")
# "listening on tcp://127.0.0.1:PORT" (master, relay) or "listening on 127.0.0.1:PORT" (proxy).
ENDPOINT = re.compile(r"listening on (\S+)")


class FarmRunError(RuntimeError):
    """A process of the run failed, or did not say where it listens in time."""


def endpoint_in(text):
    """The endpoint of the first "listening on ..." line in `text` (as printed), else None."""
    m = ENDPOINT.search(text)
    return m.group(1) if m else None


class _Output:
    """All of a process's output, read by a thread; `endpoint` is set once a line names it."""

    def __init__(self, proc):
        self.lines, self.endpoint, self.done = [], None, threading.Event()
        self.found = threading.Event()
        threading.Thread(target=self._read, args=(proc,), daemon=True).start()

    def _read(self, proc):
        for line in proc.stdout:
            self.lines.append(line)
            if self.endpoint is None:
                self.endpoint = endpoint_in(line)
                if self.endpoint:
                    self.found.set()
        self.done.set()
        self.found.set()

    def tail(self, chars=2000):
        return "".join(self.lines)[-chars:]


class LocalFarm:
    """The processes of one run (see the module docstring)."""

    def __init__(self, farm, listen_timeout=60):
        self.farm = farm
        self.listen_timeout = listen_timeout
        self.procs = []     # everything started, killed on exit if still running
        self.outputs = {}   # proc -> _Output, for processes started without a log file
        self._master = None
        self._files = tempfile.mkdtemp(prefix="farm-local-")  # the endpoint files

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
            if p in self.outputs:  # its reader sees the end of the pipe, then the pipe is closed
                self.outputs[p].done.wait(1.0)
                p.stdout.close()
        shutil.rmtree(self._files, ignore_errors=True)

    def popen(self, cmd, log=None, preexec_fn=None):
        """Starts `cmd`; its output goes to `log` (a path) or is read into memory."""
        if log:
            with open(log, "w") as f:
                p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, preexec_fn=preexec_fn)
        else:
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 preexec_fn=preexec_fn)
            self.outputs[p] = _Output(p)
        self.procs.append(p)
        return p

    def listening(self, proc, what):
        """Where `proc` (started without a log file: the proxy) says it listens; FarmRunError if
        it exits first or says nothing within listen_timeout."""
        out = self.outputs[proc]
        out.found.wait(self.listen_timeout)
        if out.endpoint is None:
            if out.done.is_set():  # its output ended: it exited (or is about to)
                try:
                    state = f"exited ({proc.wait(timeout=5)})"
                except subprocess.TimeoutExpired:
                    state = "closed its output"
            else:
                state = f"silent for {self.listen_timeout} s"
            raise FarmRunError(f"{what} {state} before listening: {out.tail()}")
        return out.endpoint

    def endpoint_file(self, proc, path, what):
        """The endpoint `proc` wrote to `path` (its --endpoint-file); FarmRunError if it exits
        first or writes nothing within listen_timeout."""
        deadline = time.monotonic() + self.listen_timeout
        while time.monotonic() < deadline:
            if os.path.exists(path):  # written whole (a temporary file renamed)
                with open(path) as f:
                    return f.read().strip()
            if proc.poll() is not None:
                if proc in self.outputs:
                    self.outputs[proc].done.wait(1.0)
                raise FarmRunError(f"{what} exited ({proc.returncode}) before listening: {self._tail(proc)}")
            time.sleep(0.02)
        raise FarmRunError(f"{what} silent for {self.listen_timeout} s before listening: {self._tail(proc)}")

    def _tail(self, proc):
        return self.outputs[proc].tail() if proc in self.outputs else "(see its log)"

    def _new_endpoint_file(self):
        fd, path = tempfile.mkstemp(dir=self._files, suffix=".endpoint")
        os.close(fd)
        os.unlink(path)  # the farm writes it once it listens
        return path

    def master(self, scene, out, stats, args=(), journal=False, bind="tcp://127.0.0.1:*"):
        """`farm master` writing `stats`; returns its endpoint. Without `journal`, --no-journal."""
        path = self._new_endpoint_file()
        cmd = [self.farm, "master", scene, "-o", out, "--bind", bind, "--stats", stats, "--endpoint-file", path]
        self._master = self.popen(cmd + ([] if journal else ["--no-journal"]) + list(args))
        return self.endpoint_file(self._master, path, "farm master")

    def service(self, state, args=(), bind="tcp://127.0.0.1:*"):
        """`farm serve --state STATE`, kept until close(); returns its endpoint."""
        path = self._new_endpoint_file()
        p = self.popen([self.farm, "serve", "--state", state, "--bind", bind, "--endpoint-file", path] + list(args))
        return self.endpoint_file(p, path, "farm serve")

    def proxy(self, target, args, seed=None):
        """A delaying proxy in front of `target` (tcp://HOST:PORT); returns its tcp:// endpoint."""
        cmd = [sys.executable, PROXY, "--listen", "127.0.0.1:0", "--target", target.replace("tcp://", "")]
        p = self.popen(cmd + (["--seed", str(seed)] if seed is not None else []) + list(args))
        return "tcp://" + self.listening(p, "delay proxy")

    def relay(self, connect, args=()):
        """`farm relay --once` joining `connect`; returns the endpoint its site's workers use."""
        path = self._new_endpoint_file()
        p = self.popen([self.farm, "relay", "--connect", connect, "--bind", "tcp://127.0.0.1:*", "--once",
                        "--endpoint-file", path] + list(args))
        return self.endpoint_file(p, path, "farm relay")

    def worker(self, connect, args=(), log=None, preexec_fn=None):
        """`farm worker --once` on `connect`; `args` add --cache, --name, --threads, ..."""
        return self.popen([self.farm, "worker", "--connect", connect, "--once"] + list(args), log=log,
                          preexec_fn=preexec_fn)

    def wait_master(self, timeout):
        """Waits for the master; FarmRunError if it fails or outlives `timeout` seconds."""
        try:
            self._master.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise FarmRunError(f"farm master did not finish within {timeout} s")
        if self._master.returncode != 0:
            self.outputs[self._master].done.wait(1.0)
            raise FarmRunError(f"farm master failed ({self._master.returncode}): {self.outputs[self._master].tail()}")

    def wait_workers(self, grace):
        """Gives the workers `grace` seconds to leave after the job (they got JobDone); a worker
        still starting when the job ended never hears of it and is killed on close()."""
        deadline = time.monotonic() + grace
        for p in self.procs:
            if p is not self._master and p.args[:2] == [self.farm, "worker"]:
                try:
                    p.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass

    def finish(self, stats, timeout=600, grace=0.5):
        """wait_master, wait_workers, then the master's stats JSON."""
        self.wait_master(timeout)
        self.wait_workers(grace)
        return read_stats(stats)


def read_stats(path):
    with open(path) as f:
        return json.load(f)


def master_with_workers(farm, scene, out, stats, master_args, workers, worker_args, tmp, journal=False,
                        timeout=600):
    """One master job with `workers` local workers (named w0, w1, ..., one cache in `tmp`, their
    output discarded); returns the master's stats JSON."""
    with LocalFarm(farm) as lf:
        endpoint = lf.master(scene, out, stats, master_args, journal=journal)
        for i in range(workers):
            lf.worker(endpoint, ["--cache", os.path.join(tmp, "cache"), "--name", f"w{i}", "--give-up-after", "5"]
                      + list(worker_args), log=os.devnull)
        return lf.finish(stats, timeout=timeout, grace=60)
