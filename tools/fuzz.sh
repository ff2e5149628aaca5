#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan, tests/fuzz) into build-sanitize/
# (tools/sanitizer_build.sh) and runs each for SECONDS (default 30), starting from the seed
# corpora in tests/fuzz/corpus. Writes a summary (executions, corpus size, findings) to OUT
# (default build-sanitize/fuzz.md; the committed figures are in results/fuzz.md). Exits 1 if any target found a crash, leak or timeout: its
# input is kept in build-sanitize/findings/<target>/ and becomes a regression test.
#   bash tools/fuzz.sh [SECONDS] [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
out=${2:-build-sanitize/fuzz.md}
targets=(fuzz_protocol fuzz_scene fuzz_cluster fuzz_cost_map fuzz_mesh fuzz_mtl fuzz_gltf fuzz_submission)
targets+=(fuzz_journal)
bash tools/sanitizer_build.sh "${targets[@]}"
status=0
{
  echo "# Fuzzing"
  echo
  echo "Command: \`bash tools/fuzz.sh $seconds\`  "
  echo "Date: $(date -u '+%Y-%m-%d %H:%M') UTC; clang 14, libFuzzer + ASan + UBSan; $seconds s per target, one process each."
  echo
  echo "| target | executions | exec/s | corpus (files) | new coverage features | findings |"
  echo "|---|---|---|---|---|---|"
} > "$out"
for t in "${targets[@]}"; do
  corpus=build-sanitize/corpus/$t
  findings=build-sanitize/findings/$t
  # Only this run's findings count: an earlier one must already be a seed and a regression test.
  rm -rf "$findings"
  mkdir -p "$corpus" "$findings"
  cp -n tests/fuzz/corpus/$t/* "$corpus"/ 2>/dev/null || true
  log=build-sanitize/$t.log
  set +e
  ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=tests/fuzz/lsan.supp \
    ./build-sanitize/tests/fuzz/$t "$corpus" -max_total_time="$seconds" -timeout=10 -seed=1 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$findings/" > "$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  features=$(grep -o 'stat::new_units_added: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  files=$(ls "$corpus" | wc -l)
  found=$(ls "$findings" | wc -l)
  if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
    status=1
    echo "fuzz: $t FOUND a problem (exit $rc); inputs in $findings, log $log" >&2
    # -a: assimp and the parsers echo input bytes into the log, which grep would call binary.
    grep -a -m5 -E "ERROR|SUMMARY|Deadly|timeout|out-of-memory|runtime error" "$log" >&2 || true
    tail -n 40 "$log" | grep -a -v -E "^#[0-9]+ +(NEW|REDUCE|pulse)" >&2 || true
    # The input itself, so that a finding on a CI machine can be replayed anywhere.
    for f in "$findings"/*; do
      [ -f "$f" ] || continue
      echo "fuzz: $(basename "$f") ($(stat -c %s "$f") bytes), base64:" >&2
      head -c 8192 "$f" | base64 -w 0 >&2
      echo >&2
    done
  fi
  echo "| $t | $execs | $rate | $files | $features | $found |" >> "$out"
  echo "fuzz: $t: $execs executions ($rate/s), corpus $files, findings $found"
done
echo "fuzz: summary in $out"
exit $status
