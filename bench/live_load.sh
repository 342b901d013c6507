#!/usr/bin/env bash
# Load test of a live simulation (issue 15): `gputwin run SCENARIO --serve --speed max` once alone and once while two
# wrk processes (a second and third process) read the dashboard's API and the slurmrestd-compatible API as fast as
# they answer; prints the simulation's wall time of each, the slowdown, and wrk's requests and errors.
#
#   bench/live_load.sh [--binary B] [--rounds N] [--max-slowdown PCT] [--wrk-nice N | --wrk-idle] [--rate R] SCENARIO
#                      [run options]
#
# --rate paces each wrk process at about R requests a second (wrk's delay() between a connection's requests) instead
# of as fast as the server answers: a stated load (dashboards, Prometheus, portals) rather than a saturating one.
#
# --wrk-nice runs the load generators that much nicer: on a 2-core machine their own CPU (which a real client spends
# on its own machine) would otherwise count as the simulation's slowdown. --wrk-idle runs them under SCHED_IDLE
# (chrt --idle 0) instead: only on CPU time nothing else wants.
#
# Exit 1 if a run failed, wrk saw any error (socket errors, timeouts, or an answer that is not 2xx), or the median
# slowdown is above --max-slowdown (not checked unless given: on a shared 2-core machine the readers' CPU competes
# with the simulation's, so the figure belongs in BENCHMARKS.md, measured with rounds alternating).
set -euo pipefail
G="$(dirname "$0")/../build/gputwin"
ROUNDS=1
MAX_SLOWDOWN=
WRK_NICE=0
WRK_SCHED=()
RATE=
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) G=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --max-slowdown) MAX_SLOWDOWN=$2; shift 2 ;;
    --wrk-nice) WRK_NICE=$2; shift 2 ;;
    --wrk-idle) WRK_SCHED=(chrt --idle 0); shift ;;
    --rate) RATE=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { echo "usage: $0 [--binary B] [--rounds N] [--max-slowdown PCT] SCENARIO [run options]" >&2; exit 2; }
command -v wrk >/dev/null || { echo "live_load: wrk is not installed (scripts/setup.sh installs it)" >&2; exit 2; }
SCENARIO=$1; shift
WORK=$(mktemp -d /tmp/gputwin-live-load.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"' EXIT

# The dashboard's reads (what its tabs ask) and the slurmrestd-compatible reads (what Slurm-web and exporters ask).
cat > "$WORK/dashboard.lua" <<'EOF'
local paths = {"/api/overview", "/api/nodes", "/api/jobs?sort=run_time&order=desc", "/api/jobs?filter=pending",
               "/api/live", "/api/series/cluster?points=200", "/api/events?limit=50", "/metrics", "/api/gantt"}
local i = 0
request = function() i = i + 1; return wrk.format("GET", paths[(i % #paths) + 1]) end
EOF
cat > "$WORK/slurm.lua" <<'EOF'
local paths = {"/slurm/v0.0.44/ping", "/slurm/v0.0.44/nodes", "/slurm/v0.0.44/partitions", "/slurm/v0.0.44/diag"}
local i = 0
request = function() i = i + 1; return wrk.format("GET", paths[(i % #paths) + 1]) end
EOF

# With --rate, each connection waits connections x 1000 / R ms before each request (4 dashboard, 2 slurmrestd ones).
if [ -n "$RATE" ]; then
  echo "function delay() return $(echo "4000 / $RATE" | bc -l) end" >>"$WORK/dashboard.lua"
  echo "function delay() return $(echo "2000 / $RATE" | bc -l) end" >>"$WORK/slurm.lua"
fi

# One served run; with "load", wrk reads both APIs until the simulation ends. Prints "<sim wall s> <wrk summary>".
serve_once() {
  local load=$1 log="$WORK/run.log"
  shift
  rm -rf "$WORK/out"
  "$G" run "$SCENARIO" --serve --speed max --listen 127.0.0.1:0 --slurmrestd-listen 127.0.0.1:0 --out "$WORK/out" \
    "$@" >"$log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 600); do
    grep -q "slurmrestd-compatible" "$log" 2>/dev/null && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
  done
  local url slurm_url
  url=$(grep -o 'on http://[0-9.:]*' "$log" | head -1 | cut -c4-)
  slurm_url=$(grep -o 'http://[0-9.:]*' "$log" | grep -v "$url" | head -1 || true)
  local wrk_pids=()
  if [ "$load" = load ]; then
    "${WRK_SCHED[@]}" nice -n "$WRK_NICE" wrk -t1 -c4 -d600s --timeout 120s -s "$WORK/dashboard.lua" "$url" \
      >"$WORK/wrk-dash.txt" 2>&1 &
    wrk_pids+=($!)
    if [ -n "$slurm_url" ]; then
      "${WRK_SCHED[@]}" nice -n "$WRK_NICE" wrk -t1 -c2 -d600s --timeout 120s -s "$WORK/slurm.lua" "$slurm_url" \
        >"$WORK/wrk-slurm.txt" 2>&1 &
      wrk_pids+=($!)
    fi
  fi
  # The end is waited for by one loop at niceness 19 polling twice a second. The simulation's own wall time is what
  # is measured, so the poll's period does not matter. A loop at niceness 0 that forked grep and sleep every 50 ms
  # preempted the simulation more often than anything else once wrk and the readers kept both CPUs busy (perf sched
  # over a loaded run: bash and sleep took 1,321 of the simulation thread's about 2,900 preemptions).
  # shellcheck disable=SC2016  # $1 and $2 are the inner shell's arguments
  nice -n 19 bash -c 'while ! grep -q "simulation ended" "$1" && kill -0 "$2" 2>/dev/null; do sleep 0.5; done' _ \
    "$log" "$pid"
  local ended
  ended=$(grep -o 'simulation ended.*' "$log" | head -1 || true)
  for w in "${wrk_pids[@]}"; do kill -INT "$w" 2>/dev/null || true; wait "$w" 2>/dev/null || true; done
  kill -INT $pid 2>/dev/null || true
  wait $pid || true
  [ -n "$ended" ] || { echo "live_load: the served run did not end:" >&2; tail -5 "$log" >&2; return 1; }
  local wall
  wall=$(echo "$ended" | grep -o '[0-9.]* s wall' | head -1 | cut -d' ' -f1)
  # "N copies of the state (R into an earlier copy's memory) in S s of it, M snapshots written in W s" (before the
  # count of reused copies: without the brackets; before the in-memory Overview: "N snapshots
  # copied in S s of it and written in W s").
  echo "$ended" | grep -oE "[0-9]* (snapshots copied|copies of the state)( \\([0-9]* into an earlier copy's memory\\))? in [0-9.]* s of it,? (and written|[0-9]* snapshots written) in [0-9.]* s" >"$WORK/snapshots-$load.txt" || true
  # "its thread on a CPU N% of the time and waiting for one W s": below 100% and W above 0 when other threads took
  # the simulation's CPU.
  echo "$ended" | grep -oE 'on a CPU [0-9]*%( of the time and waiting for one [0-9.]* s)?' |
    sed 's/ of the time and waiting for one/, waiting/' >"$WORK/oncpu-$load.txt" || true
  echo "$wall"
}

# wrk's totals: requests, errors of every kind (a request unanswered after 120 s is one), and the slowest answer.
wrk_counts() {
  local f=$1
  [ -f "$f" ] || { echo "0 0 -"; return; }
  local requests errors=0
  requests=$(grep -o '[0-9]* requests in' "$f" | cut -d' ' -f1)
  local e
  e=$(grep -o 'Socket errors: connect [0-9]*, read [0-9]*, write [0-9]*, timeout [0-9]*' "$f" | grep -o '[0-9]*' |
    paste -sd+ | bc || true)
  errors=$((errors + ${e:-0}))
  e=$(grep -o 'Non-2xx or 3xx responses: [0-9]*' "$f" | grep -o '[0-9]*$' || true)
  errors=$((errors + ${e:-0}))
  local slowest
  slowest=$(awk '/Latency/ {print $4}' "$f")
  echo "${requests:-0} $errors ${slowest:--}"
}

status=0
slowdowns=()
for round in $(seq 1 "$ROUNDS"); do
  plain=$(serve_once none "$@") || exit 1
  loaded=$(serve_once load "$@") || exit 1
  read -r dash_requests dash_errors dash_slowest < <(wrk_counts "$WORK/wrk-dash.txt")
  read -r slurm_requests slurm_errors slurm_slowest < <(wrk_counts "$WORK/wrk-slurm.txt")
  slowdown=$(echo "scale=1; 100 * ($loaded - $plain) / $plain" | bc)
  slowdowns+=("$slowdown")
  echo "round $round: simulation ${plain} s alone ($(cat "$WORK/oncpu-none.txt")), ${loaded} s under load (${slowdown}%; $(cat "$WORK/oncpu-load.txt"); $(cat "$WORK/snapshots-load.txt")); dashboard ${dash_requests} requests, ${dash_errors} errors, slowest ${dash_slowest}; slurmrestd-compatible ${slurm_requests} requests, ${slurm_errors} errors, slowest ${slurm_slowest}"
  if [ "$dash_errors" != 0 ] || [ "$slurm_errors" != 0 ]; then
    echo "live_load: wrk saw errors:" >&2
    cat "$WORK/wrk-dash.txt" "$WORK/wrk-slurm.txt" >&2 2>/dev/null || true
    status=1
  fi
  if [ "${dash_requests:-0}" = 0 ]; then echo "live_load: no request was answered" >&2; status=1; fi
done
median=$(printf '%s\n' "${slowdowns[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "median slowdown ${median}% over ${ROUNDS} round(s)"
if [ -n "$MAX_SLOWDOWN" ] && [ "$(echo "$median > $MAX_SLOWDOWN" | bc)" = 1 ]; then
  echo "live_load: slowdown ${median}% is above ${MAX_SLOWDOWN}%" >&2
  status=1
fi
exit $status
