#!/usr/bin/env bash
# Installs dependencies (tools/setup.sh) and builds into build/ (Release).
#   build.sh                   every package, every target (the farm and its tests)
#   build.sh --farm-only       only what the farm binary needs, and only build/farm/farm: the
#                              README's first command on a fresh machine (a folder configured
#                              before keeps its tests configured; they are just not built)
# Other arguments go to cmake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
farm_only=false
if [[ "${1:-}" == "--farm-only" ]]; then
  farm_only=true
  shift
fi
# The generator is chosen once, after setup has installed ninja, and kept: a folder configured
# with another one is reconfigured without -G (CMake refuses to switch generators).
generator() {
  if [[ ! -f build/CMakeCache.txt ]] && command -v ninja >/dev/null; then echo "-GNinja"; fi
}
if $farm_only; then
  bash tools/setup.sh --render
  # A first configure leaves the tests out (they need doctest, which --render does not install);
  # a folder configured before keeps what it had.
  tests=()
  [[ -f build/CMakeCache.txt ]] || tests=(-DFARM_TESTS=OFF)
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release $(generator) "${tests[@]}" "$@" >/dev/null
  cmake --build build -j"$(nproc)" --target farm
else
  bash tools/setup.sh
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DFARM_TESTS=ON $(generator) "$@" >/dev/null
  cmake --build build -j"$(nproc)"
fi
