#!/usr/bin/env bash
# The README's first command: install only what rendering needs, build only the farm binary,
# then render the chess scene on this machine with a local master and local workers (the farm's
# embedded default). Writes renders/chess2.png, its
# statistics and tile map (renders/ is not tracked, so a run leaves `git status` clean);
# `--into DIR` writes them elsewhere (the committed results/chess2.* come from `--into results
# --workers 2`). Other options go to `farm render`.
set -euo pipefail
cd "$(dirname "$0")/.."
into=renders
if [[ "${1:-}" == "--into" ]]; then
  [[ $# -ge 2 ]] || { echo "render_default.sh: --into needs a folder" >&2; exit 2; }
  into=$2
  shift 2
fi
bash tools/build.sh --farm-only
mkdir -p "$into"
./build/farm/farm render scenes/chess2.toml -o "$into/chess2.png" \
  --stats "$into/chess2_stats.json" --tile-map "$into/chess2_tiles.png" "$@"
echo "image written to $(pwd)/$into/chess2.png (statistics: $into/chess2_stats.json, tile map: $into/chess2_tiles.png)"
