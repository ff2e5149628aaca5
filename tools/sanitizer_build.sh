#!/usr/bin/env bash
# Builds TARGETS (default: everything) into build-sanitize/: clang, AddressSanitizer +
# UndefinedBehaviorSanitizer, and libFuzzer's coverage in every library. One build serves both
# the fuzzers (tools/fuzz.sh) and the test suite under the sanitizers (tools/test_asan.sh), so CI
# compiles the tree twice (plain and sanitized), not three times.
#   bash tools/sanitizer_build.sh [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh >/dev/null
CC=clang-14 CXX=clang++-14 cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFARM_FUZZERS=ON -DFARM_TESTS=ON >/dev/null
if [ $# -gt 0 ]; then
  cmake --build build-sanitize -j"$(nproc)" --target "$@"
else
  cmake --build build-sanitize -j"$(nproc)"
fi
