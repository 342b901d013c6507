#!/usr/bin/env bash
# Runs two or more gputwin binaries alternately on one scenario, as BENCHMARKS.md compares them: the machine's speed
# drifts by 10-30% within minutes, so runs of each binary are interleaved (A B A B ...) rather than batched.
#
#   bench/alternate.sh [--rounds N] [--no-results] [--set PATH=VALUE]... SCENARIO BINARY BINARY...
#
# One line per run: round, binary, the run's own figures (simulation and loading from its `speed` line, writing after
# the run from its `results` line), and GNU time's whole-command wall and user seconds and peak RSS. Then per binary
# the median of each column. Results go to a temporary folder, removed at the end (--no-results: none are written).
set -euo pipefail

usage() {
  sed -n '4,5p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

rounds=3
results=1
sets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) [ $# -ge 2 ] || usage; rounds="$2"; shift 2 ;;
    --no-results) results=0; shift ;;
    --set) [ $# -ge 2 ] || usage; sets+=(--set "$2"); shift 2 ;;
    -h | --help) usage ;;
    -*) echo "alternate.sh: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
[ $# -ge 3 ] || usage
case "$rounds" in '' | *[!0-9]* | 0) echo "alternate.sh: --rounds needs a positive number, not '$rounds'" >&2; exit 2 ;; esac
scenario="$1"
shift
[ -f "$scenario" ] || { echo "alternate.sh: $scenario: no such scenario file" >&2; exit 2; }
for binary in "$@"; do
  [ -x "$binary" ] || { echo "alternate.sh: $binary: not an executable" >&2; exit 2; }
done

work=$(mktemp -d /tmp/gputwin-alternate.XXXXXX)
trap 'rm -rf "$work"' EXIT
table="$work/table"
printf '%-5s %-32s %10s %9s %9s %9s %9s %8s\n' round binary simulation loading writing whole user rss_mb
for round in $(seq "$rounds"); do
  position=0
  for binary in "$@"; do
    position=$((position + 1))
    mode=(--no-results)
    if [ "$results" -eq 1 ]; then
      rm -rf "$work/out"
      mode=(--out "$work/out")
    fi
    if ! /usr/bin/time -f "%e %U %M" -o "$work/time" "$binary" run "$scenario" "${sets[@]}" "${mode[@]}" \
      > "$work/log" 2>&1; then
      echo "alternate.sh: $binary failed on $scenario:" >&2
      tail -5 "$work/log" >&2
      exit 1
    fi
    # speed      23.553 s wall (0.917 s loading), ...; results ... (2.778 s wall to write after the run; ...)
    sim=$(sed -n 's/^speed *\([0-9.]*\) s wall.*/\1/p' "$work/log")
    loading=$(sed -n 's/^speed .*(\([0-9.]*\) s loading).*/\1/p' "$work/log")
    writing=$(sed -n 's/^results .*(\([0-9.]*\) s wall to write.*/\1/p' "$work/log")
    read -r wall user rss_kb < "$work/time"
    line=$(printf '%-5s %-32s %10s %9s %9s %9s %9s %8s' "$round" "$binary" "${sim:--}" "${loading:--}" "${writing:--}" \
      "$wall" "$user" "$((rss_kb / 1024))")
    echo "$line"
    echo "$position $line" >> "$table"
  done
done
echo "medians:"
position=0
for binary in "$@"; do
  position=$((position + 1))
  awk -v p="$position" -v b="$binary" '
    function median(values, n,   i, j, t) {
      for (i = 2; i <= n; i++) for (j = i; j > 1 && values[j - 1] > values[j]; j--) {
        t = values[j]; values[j] = values[j - 1]; values[j - 1] = t
      }
      return n % 2 ? values[(n + 1) / 2] : (values[n / 2] + values[n / 2 + 1]) / 2
    }
    $1 == p { n++; for (c = 3; c <= 8; c++) col[c, n] = $(c + 1) }
    END {
      line = sprintf("%-5s %-32s", "", b)
      for (c = 3; c <= 8; c++) {
        k = 0
        for (i = 1; i <= n; i++) if (col[c, i] != "-") v[++k] = col[c, i] + 0
        line = line sprintf(c == 3 ? " %10s" : (c == 8 ? " %8s" : " %9s"), k ? sprintf(c == 8 ? "%d" : "%.3f", median(v, k)) : "-")
        delete v
      }
      print line
    }' "$table"
done
