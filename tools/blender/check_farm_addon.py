#!/usr/bin/env python3
"""Checks the Blender add-on tools/blender/farm_submit_addon.py against a real farm service.

    python3 tools/blender/check_farm_addon.py [--farm PATH]     (default: $FARM_BIN, else build/farm/farm)

Makes a small .blend (make_test_scene.py, 64x48, 6 samples), renders frame 1 with `farm single`,
starts `farm serve` (ephemeral port) and two `farm worker`s in a temporary folder, then runs
`blender -b --factory-startup scene.blend --python-expr ...` which installs and enables the
add-on (BLENDER_USER_SCRIPTS in the temporary folder), sets its properties and calls
bpy.ops.render.farm_submit(wait=True). Checks Blender's exit status, that the image it fetched
and the one render.farm_fetch writes are byte-identical to single's, and the job's name and
priority on the service. Then the failure paths: unsaved changes are refused, and a submission to
a server that is not there reports the farm's reason and returns within the client's timeout.
Exit 0 if all passed, 1 if not, 77 (printing "skipped: ...") without blender or the farm binary.
Every process it starts is killed on every way out; the temporary folder is removed.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ADDON = os.path.join(HERE, "farm_submit_addon.py")
MAKE_SCENE = os.path.join(HERE, "make_test_scene.py")

# Runs inside Blender. PARAMS is replaced by a dict literal.
BLENDER_EXPR = r'''
import sys, bpy
P = PARAMS
bpy.ops.preferences.addon_install(filepath=P["addon"])
bpy.ops.preferences.addon_enable(module="farm_submit_addon")
s = bpy.context.scene.farm_submit
s.farm_path, s.server, s.timeout = P["farm"], P["server"], P["timeout"]
s.output, s.priority, s.job_name = P["output"], P["priority"], P["name"]
s.use_current_frame, s.frame = False, 1
if P.get("dirty"):
    bpy.context.scene.render.resolution_x += 1
    bpy.ops.ed.undo_push(message="an unsaved change")
try:
    result = bpy.ops.render.farm_submit(wait=True)
except RuntimeError as e:  # an operator's ERROR report raises here
    print("ADDON-ERROR:", str(e).strip(), flush=True)
    sys.exit(3)
print("ADDON-RESULT:", sorted(result), "job", s.job_id, s.job_state, flush=True)
if result != {"FINISHED"}:
    sys.exit(4)
if P.get("follow"):  # without wait: the thread and the app timer follow it (pumped by hand in -b)
    import time, farm_submit_addon as addon
    bpy.ops.render.farm_submit()
    t0 = time.monotonic()
    while (addon._watches or s.job_state not in ("done", "failed", "cancelled")) and time.monotonic() - t0 < 60:
        addon._timer()
        time.sleep(0.2)
    print("ADDON-FOLLOW:", s.job_id, s.job_state, "|", addon._job_line(s), flush=True)
if P.get("refetch"):
    bpy.ops.render.farm_fetch(filepath=P["refetch"])
sys.exit(0)
'''


class Check:
    def __init__(self):
        self.failed = 0

    def __call__(self, ok, what, detail=""):
        print("%s: %s%s" % ("ok" if ok else "FAILED", what, "" if ok or not detail else "\n    " + detail), flush=True)
        if not ok:
            self.failed += 1
        return ok


def start(args, log, env=None):
    # A session of its own, so that the process and its children (Blenders) can be killed together.
    return subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            env=env, start_new_session=True)


def stop(proc):
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # whatever is left of its session
    except ProcessLookupError:
        pass
    proc.wait()


def run(args, timeout, env=None):
    """Runs to the end (or kills it at timeout); returns (exit code or None, output, seconds)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=env, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        stop(proc)
        code, out = None, proc.communicate()[0] + "\n(killed after %g s)" % timeout
    finally:
        stop(proc)
    return code, out, time.monotonic() - t0


def tail(text, n=12):
    return "\n    ".join(text.strip().splitlines()[-n:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--farm", default=os.environ.get("FARM_BIN", os.path.join(ROOT, "build", "farm", "farm")))
    farm = os.path.abspath(parser.parse_args().farm)
    blender = shutil.which("blender")
    if not blender:
        print("skipped: no `blender` on PATH")
        return 77
    if not os.access(farm, os.X_OK):
        print("skipped: no farm binary at %s (build it, or pass --farm / $FARM_BIN)" % farm)
        return 77

    t_start = time.monotonic()
    check = Check()
    tmp = tempfile.mkdtemp(prefix="farm-addon-check-")
    procs, logs = [], []
    try:
        scene = os.path.join(tmp, "scene", "scene.blend")
        code, out, _ = run([blender, "-b", "--factory-startup", "-P", MAKE_SCENE, "--", scene, "64", "48", "6"], 60)
        if not check(code == 0 and os.path.isfile(scene), "made a 64x48, 6-sample test scene", tail(out)):
            return 1
        ref = os.path.join(tmp, "ref.png")
        code, out, _ = run([farm, "single", scene, "-o", ref, "--frame", "1"], 60)
        if not check(code == 0, "farm single scene.blend --frame 1", tail(out)):
            return 1

        endpoint_file = os.path.join(tmp, "endpoint")
        log = open(os.path.join(tmp, "serve.log"), "w")
        logs.append(log)
        procs.append(start([farm, "serve", "--state", os.path.join(tmp, "state"), "--bind", "tcp://127.0.0.1:*",
                            "--endpoint-file", endpoint_file], log))
        deadline = time.monotonic() + 15
        while not (os.path.isfile(endpoint_file) and open(endpoint_file).read().strip()):
            if procs[0].poll() is not None or time.monotonic() > deadline:
                check(False, "farm serve wrote its endpoint", tail(open(log.name).read()))
                return 1
            time.sleep(0.05)
        endpoint = open(endpoint_file).read().strip()
        for i in (1, 2):
            log = open(os.path.join(tmp, "worker%d.log" % i), "w")
            logs.append(log)
            procs.append(start([farm, "worker", "--connect", endpoint, "--threads", "1",
                                "--cache", os.path.join(tmp, "cache%d" % i)], log))
        print("service at %s with 2 workers" % endpoint, flush=True)

        env = dict(os.environ, BLENDER_USER_SCRIPTS=os.path.join(tmp, "user-scripts"))
        env.pop("FARM_SERVER", None)

        def blender_run(params, timeout):
            expr = BLENDER_EXPR.replace("PARAMS", repr(dict(params, addon=ADDON, farm=farm)))
            return run([blender, "-b", "--factory-startup", scene, "--python-expr", expr], timeout, env)

        # 1. The add-on submits, waits, fetches: single's image, byte for byte.
        output = os.path.join(tmp, "out", "farm.png")
        refetch = os.path.join(tmp, "out", "refetched.png")
        code, out, secs = blender_run(dict(server=endpoint, timeout=10.0, output=output, priority=7,
                                           name="addon-check", refetch=refetch, follow=True), 120)
        check(code == 0, "blender -b: render.farm_submit(wait=True) returned FINISHED (exit %s, %.1f s)" % (code, secs),
              tail(out))
        job_lines = [l for l in out.splitlines() if l.startswith("farm: job")]
        check(any("done" in l for l in job_lines), "the operator followed the job to done: " + " | ".join(job_lines[-3:]))
        same = os.path.isfile(output) and open(output, "rb").read() == open(ref, "rb").read()
        check(same, "the fetched image %s is byte-identical to farm single's" % os.path.basename(output))
        same = os.path.isfile(refetch) and open(refetch, "rb").read() == open(ref, "rb").read()
        check(same, "render.farm_fetch wrote the second job's image: the same bytes")
        follow = next((l for l in out.splitlines() if l.startswith("ADDON-FOLLOW:")), "")
        check(follow.split()[2:3] == ["done"],
              "without wait, the app timer followed a second job to done: " + follow.partition("| ")[2], tail(out))
        job_id = next((l.split()[-2] for l in out.splitlines() if l.startswith("ADDON-RESULT:")), None)
        if job_id:
            code, jout, _ = run([farm, "job", job_id, "--json", "--server", endpoint], 30)
            try:
                job = json.loads(jout.splitlines()[0])
            except (ValueError, IndexError):
                job = {}
            check(job.get("state") == "done" and job.get("priority") == 7 and job.get("name") == "addon-check",
                  "the service holds job %s as done, priority 7, named 'addon-check'" % job_id, jout.strip())
        else:
            check(False, "the operator printed its job id", tail(out))

        # 2. Unsaved changes are refused, nothing is submitted.
        code, out, secs = blender_run(dict(server=endpoint, timeout=10.0, output=os.path.join(tmp, "out", "x.png"),
                                           priority=0, name="dirty", dirty=True), 60)
        message = next((l for l in out.splitlines() if l.startswith("ADDON-ERROR:")), "")
        check(code == 3 and "unsaved changes" in message,
              "unsaved changes are refused: %s" % message.replace("ADDON-ERROR: ", ""), tail(out))
        code, jout, _ = run([farm, "jobs", "--json", "--server", endpoint], 30)
        check(code == 0 and "dirty" not in jout, "and no job was submitted", jout.strip())

        # 3. A server that is not there: the farm's reason, reported within the client's timeout.
        code, out, secs = blender_run(dict(server="tcp://127.0.0.1:9", timeout=1.0,
                                           output=os.path.join(tmp, "out", "y.png"), priority=0, name="nowhere"), 60)
        message = next((l for l in out.splitlines() if l.startswith("ADDON-ERROR:")), "")
        check(code == 3 and "no answer from a farm service" in message and secs < 20,
              "no server: reported in %.1f s: %s" % (secs, message.replace("ADDON-ERROR: ", "")), tail(out))
    finally:
        for proc in reversed(procs):
            stop(proc)
        for log in logs:
            log.close()
        shutil.rmtree(tmp, ignore_errors=True)

    print("%s in %.1f s" % ("all passed" if not check.failed else "%d check(s) FAILED" % check.failed,
                            time.monotonic() - t_start))
    return 1 if check.failed else 0


if __name__ == "__main__":
    sys.exit(main())
