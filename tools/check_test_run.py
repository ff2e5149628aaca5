#!/usr/bin/env python3
"""What a test run left behind, and what it skipped (tools/test.sh runs it after the suite).

  check_test_run.py --marker M [--ctest-log LOG --no-skips]

--marker: every process the suite started inherited FARM_TEST_RUN=M in its environment (sshd
hosts, farm masters and workers, renderers, Slurm daemons): one still running once the suite has
ended (after a grace of a few seconds for those already exiting) is named with its command line,
killed, and fails the run. A test must clean up what it starts.

--no-skips with --ctest-log: CTest's list of tests that did not run ("(Skipped)") fails the run.
CI's machine has every tool the tests need (tools/setup.sh installs them), so a skip there means a
tool went missing, not a test that may be passed over.
"""
import argparse
import os
import re
import signal
import sys
import time


def marked_processes(marker):
    """(pid, command line) of every process whose environment carries FARM_TEST_RUN=marker."""
    needle = ("FARM_TEST_RUN=" + marker).encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            with open(f"/proc/{entry}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    continue  # a zombie waits for its parent's wait(); it runs nothing
        except OSError:
            continue  # gone meanwhile, or a kernel thread
        found.append((int(entry), cmd))
    return found


def leftovers(marker, grace):
    deadline = time.monotonic() + grace
    while True:
        left = marked_processes(marker)
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.2)


def skipped_tests(log_path):
    """Names of the tests CTest lists under 'The following tests did not run:'."""
    with open(log_path, errors="replace") as f:
        text = f.read()
    return re.findall(r"^\s*\d+ - (.*) \(Skipped\)\s*$", text, re.MULTILINE)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--marker", required=True)
    parser.add_argument("--ctest-log")
    parser.add_argument("--no-skips", action="store_true")
    parser.add_argument("--grace", type=float, default=5.0)
    args = parser.parse_args()
    ok = True
    left = leftovers(args.marker, args.grace)
    if left:
        ok = False
        print(f"test run: {len(left)} process(es) started by the suite still running when it ended:", file=sys.stderr)
        for pid, cmd in left:
            print(f"  pid {pid}: {cmd[:300]}", file=sys.stderr)
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    else:
        print("test run: no process started by the suite is left running")
    if args.no_skips and args.ctest_log:
        skipped = skipped_tests(args.ctest_log)
        if skipped:
            ok = False
            print(f"test run: {len(skipped)} test(s) skipped on a machine that should run them all:", file=sys.stderr)
            for name in skipped:
                print(f"  {name}", file=sys.stderr)
        else:
            print("test run: no test was skipped")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
