#!/usr/bin/env bash
# The README's first command: install, build, then render the chess scene on this machine with
# a local master and local workers (the farm's embedded default).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh
mkdir -p results
./build/farm/farm render scenes/chess2.toml -o results/chess2.png \
  --stats results/chess2_stats.json --tile-map results/chess2_tiles.png "$@"
echo "image written to $(pwd)/results/chess2.png (statistics: results/chess2_stats.json, tile map: results/chess2_tiles.png)"
