#!/usr/bin/env bash
# Speed benchmarks of BENCHMARKS.md. Usage: bench/run.sh [swf|loaded|scale|multifactor|topology|all] (default all).
# Each line of output is one run: what, wall seconds, events/s, jobs/s, simulated s per wall s, peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
[ -x build/gputwin ] || bash scripts/build.sh
work=/tmp/gputwin-bench
mkdir -p "$work"

# One run: prints the summary's speed line and the peak resident memory (GNU time).
run() {
  local label="$1" scenario="$2"
  /usr/bin/time -f "%M" -o "$work/rss" ./build/gputwin run "$scenario" --no-results > "$work/out"
  local speed rss
  speed=$(grep '^speed' "$work/out" | sed 's/^speed *//')
  rss=$(( $(cat "$work/rss") / 1024 ))
  printf '%-14s %s, peak RSS %d MB\n' "$label" "$speed" "$rss"
}

if [ "$what" = swf ] || [ "$what" = all ]; then
  bash bench/make_swf_10k.sh "$work/swf-10k.swf"
  for i in 1 2 3 4 5; do run "swf-10k-easy" bench/swf-10k-easy.json; done
fi

if [ "$what" = loaded ] || [ "$what" = all ]; then
  # Issue 16: a long queue. HPC2N tiled to 10,000 jobs with arrivals 8x faster, 256 single-CPU nodes; the three
  # list policies, 5 runs each, interleaved.
  python3 bench/make_loaded_swf.py ../shared/traces/hpc2n-subset.swf "$work/loaded-10k.swf" --jobs 10000 --compress 8
  for i in 1 2 3 4 5; do
    for policy in fcfs easy easy-textbook; do
      sed "s/\"policy\": \"easy-textbook\"/\"policy\": \"$policy\"/" bench/loaded-10k-easy-textbook.json > "$work/loaded-10k-$policy.json"
      run "loaded-10k-$policy" "$work/loaded-10k-$policy.json"
    done
  done
fi

if [ "$what" = scale ] || [ "$what" = all ]; then
  for jobs in 10000 100000 1000000; do
    sed "s/\"jobs\": 1000000/\"jobs\": $jobs/; s/\"bench-1m\"/\"bench-$jobs\"/" scenarios/bench-1m.json > "$work/bench-$jobs.json"
    run "slurm-$jobs" "$work/bench-$jobs.json"
  done
fi

if [ "$what" = multifactor ] || [ "$what" = all ]; then
  # Issue 3's target: multifactor + Fair Tree (1,000 users, 50 accounts) within 1.5x of priority/basic.
  for jobs in 100000 1000000; do
    for variant in bench-1m bench-1m-multifactor; do
      sed "s/\"jobs\": 1000000/\"jobs\": $jobs/" scenarios/$variant.json > "$work/$variant-$jobs.json"
      run "$variant-$jobs" "$work/$variant-$jobs.json"
    done
  done
fi

if [ "$what" = topology ] || [ "$what" = all ]; then
  # Issue 4's target: placement-aware scheduling (tree + job speed) within 2x of bench-1m.
  python3 -c "import json; s = json.load(open('scenarios/bench-1m-topology.json')); del s['performance']; \
s['name'] = 'bench-1m-tree'; json.dump(s, open('$work/bench-1m-tree.json', 'w'))"
  run "bench-1m" scenarios/bench-1m.json
  run "bench-1m-tree" "$work/bench-1m-tree.json"
  run "bench-1m-topology" scenarios/bench-1m-topology.json
fi
