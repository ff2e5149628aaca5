#!/usr/bin/env bash
# Installs, builds and runs every test (the README's second command; .ci/run calls it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh
cd build
ctest --output-on-failure -j"$(nproc)" --timeout 600
cd ..
# The experiments' smoke run (issue 4): real farm runs on emulated slow CPUs and links, the
# plots and the report, all tiny, into build/reproduce-quick (results/ is left alone).
tools/reproduce --quick
