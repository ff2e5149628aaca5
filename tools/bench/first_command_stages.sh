#!/usr/bin/env bash
# Times the README's first command (tools/render_default.sh) stage by stage on a fresh machine
# (issue 40, item 10; results/first_command.md). Runs the same commands render_default.sh runs,
# through tools/build.sh --farm-only, split so that each gets its own wall and CPU time:
#   apt        bash tools/setup.sh --render                 (apt-get update + install)
#   configure  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -GNinja -DFARM_TESTS=OFF
#   build      cmake --build build -j$(nproc) --target farm
#   render     ./build/farm/farm render scenes/chess2.toml -o renders/chess2.png --stats ... --tile-map ...
# Writes one line per stage, "stage wall_s user_s sys_s", to $TIMES (default /tmp/first_command_times.txt).
# Extra arguments go to the configure step (to measure a variant, e.g. -DFARM_UNITY=OFF).
# Meant for a throwaway fresh root (debootstrap) holding a fresh clone: it installs packages.
set -euo pipefail
cd "$(dirname "$0")/../.."
times_file=${TIMES:-/tmp/first_command_times.txt}
: > "$times_file"
exec 3>&2
TIMEFORMAT='%R %U %S'
stage() {
  local name=$1
  shift
  echo "=== $name: $* ($(date -u +%T))" >&3
  local t
  t=$( { time "$@" 2>&3 1>&3 ; } 2>&1 )
  echo "$name $t" >> "$times_file"
  echo "=== $name done: wall user sys = $t" >&3
}
tests=()
[[ -f build/CMakeCache.txt ]] || tests=(-DFARM_TESTS=OFF)
stage apt bash tools/setup.sh --render
stage configure cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -GNinja "${tests[@]}" "$@"
stage build cmake --build build -j"$(nproc)" --target farm
mkdir -p renders
stage render ./build/farm/farm render scenes/chess2.toml -o renders/chess2.png \
  --stats renders/chess2_stats.json --tile-map renders/chess2_tiles.png
awk '{w+=$2; c+=$3+$4} END {printf "total wall %.1f s, cpu %.1f s\n", w, c}' "$times_file" >&3
