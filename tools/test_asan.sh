#!/usr/bin/env bash
# The whole test suite once more under AddressSanitizer + UndefinedBehaviorSanitizer, in the
# sanitized build the fuzzers use too (build-sanitize/, tools/sanitizer_build.sh). Leaks inside
# Debian's assimp on malformed meshes are suppressed (tests/fuzz/lsan.supp explains why). CI runs
# it after the tests and the fuzzers. As in tools/test.sh, a process of the suite still running
# when it ends fails the run; skips are expected here (a few tests cannot run under ASan and say so).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/sanitizer_build.sh
marker="asan-$$-$(date +%s%N)"
suppressions="$PWD/tests/fuzz/lsan.supp"
status=0
# Left out here (they ran in the plain build): tests whose time goes to programs that are not
# ours (real sshd hosts, Slurm, headless Chromium, POV-Ray, Blender), which keep CI within its hour.
(cd build-sanitize && env FARM_TEST_RUN="$marker" ASAN_OPTIONS=detect_leaks=1 \
  LSAN_OPTIONS=suppressions="$suppressions" \
  ctest --output-on-failure -j"$(nproc)" --timeout 900 -E "^(ssh cluster|slurm|live: headless Chromium|povray|blender|sandbox: Blender)") \
  || status=1
python3 tools/check_test_run.py --marker "$marker" || status=1
exit $status
