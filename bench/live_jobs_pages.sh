#!/usr/bin/env bash
# How fast the Jobs tab of a live run answers (issue 15: any page under 100 ms over 1,000,000 jobs): starts
# `gputwin run SCENARIO --serve --speed max` (or --speed X), times the first /api/jobs request from the moment the server listens,
# then asks a round of pages (the first, one deep in job id order, sorted by GPUs deep, the PENDING tab, a search,
# sorted by name at the end, by run time and by state) every second for SECONDS seconds, as a page following the
# clock would, and prints each page's status codes and min / median / max of curl's time_total; with
# --paused-seconds, pauses the run and does the same for P seconds more (the pages' own cost, nothing else of the
# run's on the CPU); then stops the run.
#
#   bench/live_jobs_pages.sh [--binary B] [--seconds S] [--speed X|max] [--paused-seconds P] SCENARIO [run options, e.g. --set /workload/synthetic/jobs=N]
set -euo pipefail
G="$(dirname "$0")/../build/gputwin"
SECONDS_TO_RUN=30
SPEED=max
PAUSED_SECONDS=0
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) G=$2; shift 2 ;;
    --seconds) SECONDS_TO_RUN=$2; shift 2 ;;
    --speed) SPEED=$2; shift 2 ;;
    --paused-seconds) PAUSED_SECONDS=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { echo "usage: $0 [--binary B] [--seconds S] SCENARIO [run options]" >&2; exit 2; }
SCENARIO=$1; shift
WORK=$(mktemp -d /tmp/gputwin-jobs-pages.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
. "$(dirname "$0")/serve_run.sh"
serve_run "$WORK/run.log" 'on http://' "$G" "$SCENARIO" --speed "$SPEED" --listen 127.0.0.1:0 --no-slurmrestd \
  --out "$WORK/out" "$@"
URL=$(grep -o 'on http://[0-9.:]*' "$WORK/run.log" | head -1 | cut -c4-)
echo "first /api/jobs: $(curl -s -o /dev/null -w '%{http_code} %{time_total}' "$URL/api/jobs")"
PAGES=("sort=job_id" "sort=job_id&offset=500000" "sort=gpus&order=desc&offset=400000" "filter=pending"
  "search=user007" "sort=name&order=desc&offset=999950" "sort=run_time&order=desc" "sort=state&offset=500000")
# Rounds of every page, once a second, for $1 seconds, into $WORK/times-$2 (and the seconds shown into seconds-$2).
rounds() {
  local end=$((SECONDS + $1)) started
  while [ $SECONDS -lt $end ] && kill -0 $PID 2>/dev/null; do
    started=$(date +%s.%N)
    for i in "${!PAGES[@]}"; do
      curl -s -o "$WORK/body" -w "$i %{http_code} %{time_total}\n" "$URL/api/jobs?${PAGES[$i]}" >>"$WORK/times-$2"
      grep -o '"t":[0-9]*' "$WORK/body" | head -1 >>"$WORK/seconds-$2" || true
    done
    sleep "$(echo "1 - ($(date +%s.%N) - $started)" | bc | sed 's/^-.*/0/')"
  done
}
report() {
  [ -f "$WORK/times-$1" ] || return 0
  echo "$1: simulated seconds the pages showed: $(sort -u "$WORK/seconds-$1" | wc -l) distinct, last $(tail -1 "$WORK/seconds-$1")"
  for i in "${!PAGES[@]}"; do
    awk -v i="$i" -v page="${PAGES[$i]}" '$1 == i { n++; t[n] = $3; codes[$2]++ }
      END {
        asort(t); c = ""; for (k in codes) c = c k "x" codes[k] " ";
        printf "  %-40s %s min %.3f median %.3f max %.3f s (%d)\n", page, c, t[1], t[int((n + 1) / 2)], t[n], n
      }' "$WORK/times-$1"
  done
}
rounds "$SECONDS_TO_RUN" running
NOW=$(curl -s "$URL/api/live" | grep -oE '"(copies|now|snapshot_copy_wall_s|snapshots|state)":[^,}]*' | paste -sd' ' || true)
if [ "$PAUSED_SECONDS" -gt 0 ] && kill -0 $PID 2>/dev/null; then
  # Paused: the simulation and the copies idle, so the pages' own cost shows (the first round waits for the copy made
  # after the pause, an operator's action).
  curl -s -o /dev/null -X POST -H "Authorization: Bearer $(cat "$WORK/out/control.token")" "$URL/api/control/pause"
  rounds "$PAUSED_SECONDS" paused
fi
kill -INT $PID 2>/dev/null || true
wait $PID 2>/dev/null || true
echo "when the running rounds ended: $NOW"
report running
report paused
grep -o 'simulation ended.*' "$WORK/run.log" | head -1 || true
