#!/usr/bin/env bash
# How the list policies grow with a long queue (issue 16): the HPC2N trace tiled to 10,000, 100,000 and 1,000,000
# jobs with arrivals 8x faster (bench/make_loaded_swf.py; the queue grows to about half the jobs), on 256 single-CPU
# nodes. For each size and policy: the run's own `speed` line (simulation wall time, with the trace's loading in
# brackets), and the whole command's wall and CPU seconds (GNU time) without and with results written.
#
#   bench/growth.sh [--binary B] [--sizes "10000 100000"] [--policies "fcfs easy-textbook"] [--rounds N]
#
# Prints one line per run: size policy results? speed-line wall user.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=build/gputwin
sizes="10000 100000 1000000"
policies="fcfs easy easy-textbook"
rounds=1
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="$2"; shift 2 ;;
    --sizes) sizes="$2"; shift 2 ;;
    --policies) policies="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    *) echo "growth.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
work=/tmp/gputwin-bench/growth
mkdir -p "$work"
for n in $sizes; do
  [ -s "$work/loaded-$n.swf" ] ||
    python3 bench/make_loaded_swf.py ../shared/traces/hpc2n-subset.swf "$work/loaded-$n.swf" --jobs "$n" --compress 8
  for policy in $policies; do
    sed "s#/tmp/gputwin-bench/loaded-10k.swf#$work/loaded-$n.swf#; s/\"policy\": \"easy-textbook\"/\"policy\": \"$policy\"/" \
      bench/loaded-10k-easy-textbook.json > "$work/loaded-$n-$policy.json"
  done
done
for round in $(seq "$rounds"); do
  for n in $sizes; do
    for policy in $policies; do
      for mode in --no-results "--out $work/out"; do
        # shellcheck disable=SC2086
        /usr/bin/time -f "%e %U" -o "$work/time" "$binary" run "$work/loaded-$n-$policy.json" $mode > "$work/out.txt"
        speed=$(grep '^speed' "$work/out.txt" | sed 's/^speed *//; s/ events\/s.*//')
        read -r wall user < "$work/time"
        printf '%8s %-14s %-11s sim %-48s whole %6.2f s wall %6.2f s user\n' "$n" "$policy" \
          "$([ "$mode" = --no-results ] && echo no-results || echo results)" "$speed" "$wall" "$user"
      done
    done
  done
done
