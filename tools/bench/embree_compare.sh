#!/usr/bin/env bash
# Renderer benchmark: farm against Embree's own tutorial renderers (viewer, pathtracer) on the
# same OBJ, camera, resolution, spp, path length and light; alternating runs, medians.
# Writes results/bench_embree.csv and results/bench_embree.md. About 2-4 minutes by default.
#
#   tools/bench/embree_compare.sh [--reps 5] [--modes primary,path] [--spp 1] [--path-length 4]
#                                 [--threads N] [--farm PATH] [--scenes DIR] [--budget SECONDS]
#
# Skips (exit 0, "SKIP: ...") when ../shared/scenes or the Embree tools are missing.
# The farm binary defaults to build/farm/farm (tools/build.sh builds it if absent).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

command -v python3 >/dev/null || { echo "SKIP: embree_compare: python3 not found"; exit 0; }

scenes="${BENCH_SCENES:-$root/../shared/scenes}"
farm="${FARM:-$root/build/farm/farm}"
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --scenes) scenes="${args[i+1]:-}" ;;
    --scenes=*) scenes="${args[i]#--scenes=}" ;;
    --farm) farm="${args[i+1]:-}" ;;
    --farm=*) farm="${args[i]#--farm=}" ;;
    -h|--help) exec python3 "$here/embree_compare.py" --help ;;
  esac
done

if [[ ! -f "$scenes/sponza-dabrovic/sponza.obj" ]]; then
  echo "SKIP: embree_compare: $scenes/sponza-dabrovic/sponza.obj not found (the benchmark needs ../shared/scenes)"
  exit 0
fi
if ! command -v "${EMBREE_VIEWER:-viewer}" >/dev/null || ! command -v "${EMBREE_PATHTRACER:-pathtracer}" >/dev/null; then
  echo "SKIP: embree_compare: Embree's tutorial programs viewer/pathtracer not found (apt-get install embree-tools)"
  exit 0
fi

if [[ ! -x "$farm" ]]; then
  if [[ "$farm" == "$root/build/farm/farm" ]]; then
    echo "[embree_compare] building $farm (not part of the timed runs)"
    bash "$root/tools/build.sh"
  else
    echo "embree_compare: farm binary $farm not found" >&2
    exit 2
  fi
fi

cmdline="tools/bench/embree_compare.sh${*:+ $*}"
exec python3 "$here/embree_compare.py" --scenes "$scenes" --farm "$farm" "$@" --command-line "$cmdline"
