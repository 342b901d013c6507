#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with ASan and UBSan (clang) into build-san/ (scripts/build-san.sh) and runs
# each for a given time.
# Usage: scripts/fuzz.sh [--seconds N] [--only TARGET[,TARGET...]] [--parallel P] [--no-build]
#   --seconds N    time per target (default 60)
#   --only T,...   these targets only (names as in fuzz/CMakeLists.txt: fuzz_swf, fuzz_scenario, ...)
#   --parallel P   run P targets at once (default 1)
#   --no-build     use the targets already built (scripts/test.sh builds them with the sanitizer build)
# Corpora grow in build-san/fuzz/corpus/<target> from run to run; seeds and dictionaries are made afresh in
# build-san/fuzz/seeds and build-san/fuzz/dict (fuzz/make_seeds.py). A crash, leak, UB report, timeout or
# out-of-memory keeps its input in build-san/fuzz/findings/<target>/ and its log in build-san/fuzz/logs/; the script
# prints executions and findings per target and exits 1 if any target found anything.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=60
only=
parallel=1
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --parallel) parallel="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    *) echo "fuzz.sh: unknown argument '$1' (see the usage at the top of scripts/fuzz.sh)" >&2; exit 2 ;;
  esac
done
dir=build-san
if [ "$build" -eq 1 ]; then bash scripts/build-san.sh fuzzers gputwin; fi
work="$dir/fuzz"
targets=()
for t in "$work"/fuzz_*; do [ -x "$t" ] && targets+=("$(basename "$t")"); done
if [ -n "$only" ]; then IFS=, read -r -a targets <<<"$only"; fi
for t in "${targets[@]}"; do
  [ -x "$work/$t" ] || { echo "fuzz.sh: no target $work/$t" >&2; exit 2; }
done
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  python3 fuzz/make_seeds.py "$work" "$(pwd)" "$(pwd)/../shared" "$dir/gputwin"

export ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
mkdir -p "$work/logs" "$work/tmp"

# Runs one target; its summary line goes to logs/<target>.summary.
run_target() {
  local t="$1" corpus="$work/corpus/$1" findings="$work/findings/$1" dict=()
  mkdir -p "$corpus" "$findings"
  [ -s "$work/dict/$t.dict" ] && dict=(-dict="$work/dict/$t.dict")
  local before status=0
  before=$(find "$findings" -type f | wc -l)
  TMPDIR="$work/tmp" "$work/$t" "$corpus" "$work/seeds/$t" "${dict[@]}" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 -artifact_prefix="$findings/" \
    >"$work/logs/$t.log" 2>&1 || status=$?
  local execs found
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/logs/$t.log" | tail -1)
  found=$(($(find "$findings" -type f | wc -l) - before))
  if [ "$status" -ne 0 ] && [ "$found" -eq 0 ]; then found=1; fi
  printf '%-22s %12s %8s  %s\n' "$t" "${execs:-?}" "$found" \
    "$([ "$found" -eq 0 ] && echo ok || echo "FOUND: $(grep -m1 -E 'ERROR: |runtime error|ALARM|out-of-memory' "$work/logs/$t.log" | cut -c1-100) (log $work/logs/$t.log)")" \
    >"$work/logs/$t.summary"
}

echo "fuzz.sh: ${#targets[@]} targets, ${seconds} s each, $parallel at a time"
running=0
for t in "${targets[@]}"; do
  run_target "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$parallel" ]; then wait -n || true; running=$((running - 1)); fi
done
wait
printf '%-22s %12s %8s  %s\n' target executions findings result
failed=0
for t in "${targets[@]}"; do
  cat "$work/logs/$t.summary"
  grep -q ' ok$' "$work/logs/$t.summary" || failed=1
done
rm -rf "$work/tmp"
exit "$failed"
