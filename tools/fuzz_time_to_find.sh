#!/usr/bin/env bash
# Time to first finding of a fuzz_gltf binary (results/fuzz.md, issue 26): runs it from the
# shipped seeds (without the earlier finding, a different bug) until it finds something or
# MAXSEC pass, and prints one line: mode, seed, exit code, wall seconds, executions, findings.
# MODE: structured (the structure-aware mutator) or bytes (FUZZ_GLTF_BYTES_ONLY=1: libFuzzer's
# byte mutations only). Build the binary at the commit under test with tools/fuzz.sh's cmake line.
#   bash tools/fuzz_time_to_find.sh BINARY MODE SEED MAXSEC [WORKDIR]
set -euo pipefail
binary=$1 mode=$2 seed=$3 max=$4
work=${5:-/tmp/fuzz_time_to_find}/$mode-$seed
seeds="$(cd "$(dirname "$0")/.." && pwd)/tests/fuzz/corpus/fuzz_gltf"
rm -rf "$work"
mkdir -p "$work/corpus" "$work/findings"
cp "$seeds"/* "$work/corpus/"
rm -f "$work/corpus/glb_image_view_past_buffer"
env=()
[ "$mode" = bytes ] && env=(FUZZ_GLTF_BYTES_ONLY=1)
start=$(date +%s.%N)
set +e
env "${env[@]}" ASAN_OPTIONS=detect_leaks=0 "$binary" "$work/corpus" -max_total_time="$max" -timeout=10 \
  -seed="$seed" -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/findings/" > "$work/log" 2>&1
rc=$?
set -e
end=$(date +%s.%N)
execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/log" | grep -o '[0-9]*$' || echo ?)
what=$(grep -m1 -oE 'runtime error: [a-z ]*|ERROR: AddressSanitizer: [a-z-]*' "$work/log" || true)
echo "$mode seed=$seed rc=$rc seconds=$(python3 -c "print(round($end - $start, 1))") execs=$execs findings=$(ls "$work/findings" | wc -l) $what"
