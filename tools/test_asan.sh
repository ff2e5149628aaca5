#!/usr/bin/env bash
# The whole test suite once more under AddressSanitizer + UndefinedBehaviorSanitizer
# (build-asan/, -DFARM_SANITIZE=ON). Leaks inside Debian's assimp on malformed meshes are
# suppressed (tests/fuzz/lsan.supp explains why). CI runs it after the tests and the fuzzers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh >/dev/null
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFARM_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$(nproc)"
cd build-asan
# Left out here (they ran in the plain build): tests whose time goes to programs that are not
# ours (real sshd hosts, Slurm, headless Chromium, POV-Ray, Blender), which keep CI within its hour.
# allocator_may_return_null: an allocation too large to have throws std::bad_alloc, as it does
# without ASan (tests/farm/base/memory_test.cpp asks for one and expects the farm's message).
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 LSAN_OPTIONS=suppressions="$PWD/../tests/fuzz/lsan.supp" \
  ctest --output-on-failure -j"$(nproc)" --timeout 900 -E "^(ssh cluster|slurm|live: headless Chromium|povray|blender|sandbox: Blender)"
