#!/usr/bin/env bash
# The README's first command: install, build, then render the default scene on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh
mkdir -p results
./build/farm/farm single scenes/chess2.toml -o results/chess2.png "$@"
echo "image written to $(pwd)/results/chess2.png"
