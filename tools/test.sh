#!/usr/bin/env bash
# Installs, builds and runs every test, then checks the Debian package (the README's second
# command; .ci/run calls it).
# Every process the suite starts carries FARM_TEST_RUN in its environment; one still running when
# the suite ends fails the run (tools/check_test_run.py). Under CI (CI=true) a skipped test fails
# it too: setup installs every tool the tests need, so a skip there means one went missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh
marker="$$-$(date +%s%N)"
no_skips=()
if [ "${CI:-}" = true ]; then no_skips=(--no-skips); fi
status=0
(cd build && env FARM_TEST_RUN="$marker" ctest --output-on-failure -j"$(nproc)" --timeout 600) 2>&1 | tee build/ctest.log \
  || status=1
# The experiments' smoke run (issue 4): real farm runs on emulated slow CPUs and links, the
# plots and the report, all tiny, into build/reproduce-quick (results/ is left alone).
env FARM_TEST_RUN="$marker" tools/reproduce --quick || status=1
# The Debian package: built, installed with apt, its unit verified, its binary run, purged.
package=0
bash tools/package/check_deb.sh || package=$?
if [ "$package" -eq 77 ] && [ "${CI:-}" != true ]; then
  echo "test.sh: the package check was skipped (see above)"
elif [ "$package" -ne 0 ]; then
  status=1
fi
python3 tools/check_test_run.py --marker "$marker" --ctest-log build/ctest.log "${no_skips[@]}" || status=1
exit $status
