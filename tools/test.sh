#!/usr/bin/env bash
# Installs, builds and runs every test (the README's second command; .ci/run calls it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh
cd build
ctest --output-on-failure -j"$(nproc)" --timeout 600
