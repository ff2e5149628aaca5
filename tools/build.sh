#!/usr/bin/env bash
# Installs dependencies (tools/setup.sh) and builds everything into build/ (Release).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${generator[@]}" "$@" >/dev/null
cmake --build build -j"$(nproc)"
