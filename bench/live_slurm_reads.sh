#!/usr/bin/env bash
# How the slurmrestd-compatible reads of a live run answer (issue 15): starts `gputwin run SCENARIO --serve --speed
# max` (or --speed X), times the first GET /slurm/v0.0.44/jobs from the moment the server listens, then asks a round
# of reads (ping, diag, jobs, job/1, nodes, partitions, slurmdb qos) every 2 s for SECONDS seconds, and prints each
# one's status codes, answer size and min / median / max of curl's time_total; then stops the run.
#
#   bench/live_slurm_reads.sh [--binary B] [--seconds S] [--speed X|max] SCENARIO [run options]
set -euo pipefail
G="$(dirname "$0")/../build/gputwin"
SECONDS_TO_RUN=30
SPEED=max
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) G=$2; shift 2 ;;
    --seconds) SECONDS_TO_RUN=$2; shift 2 ;;
    --speed) SPEED=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { echo "usage: $0 [--binary B] [--seconds S] [--speed X|max] SCENARIO [run options]" >&2; exit 2; }
SCENARIO=$1; shift
WORK=$(mktemp -d /tmp/gputwin-slurm-reads.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
. "$(dirname "$0")/serve_run.sh"
serve_run "$WORK/run.log" 'slurmrestd-compatible' "$G" "$SCENARIO" --speed "$SPEED" --listen 127.0.0.1:0 \
  --slurmrestd-listen 127.0.0.1:0 --out "$WORK/out" "$@"
DASH=$(grep -o 'on http://[0-9.:]*' "$WORK/run.log" | head -1 | cut -c4-)
URL=$(grep -o 'http://[0-9.:]*' "$WORK/run.log" | grep -v "$DASH" | head -1)
echo "first /slurm/v0.0.44/jobs: $(curl -s -o /dev/null -w '%{http_code} %{time_total} s, %{size_download} bytes' "$URL/slurm/v0.0.44/jobs")"
READS=(/slurm/v0.0.44/ping /slurm/v0.0.44/diag /slurm/v0.0.44/jobs /slurm/v0.0.44/job/1 /slurm/v0.0.44/nodes
  /slurm/v0.0.44/partitions /slurmdb/v0.0.44/qos)
end=$((SECONDS + SECONDS_TO_RUN))
while [ $SECONDS -lt $end ] && kill -0 $PID 2>/dev/null; do
  started=$(date +%s.%N)
  for i in "${!READS[@]}"; do
    curl -s -o /dev/null -w "$i %{http_code} %{time_total} %{size_download}\n" "$URL${READS[$i]}" >>"$WORK/times"
  done
  sleep "$(echo "2 - ($(date +%s.%N) - $started)" | bc | sed 's/^-.*/0/')"
done
NOW=$(curl -s "$DASH/api/live" | grep -oE '"(copies|now|snapshot_copy_wall_s|snapshots|state)":[^,}]*' | paste -sd' ' || true)
kill -INT $PID 2>/dev/null || true
wait $PID 2>/dev/null || true
echo "when the rounds ended: $NOW"
for i in "${!READS[@]}"; do
  awk -v i="$i" -v read="${READS[$i]}" '$1 == i { n++; t[n] = $3; codes[$2]++; size = $4 }
    END {
      asort(t); c = ""; for (k in codes) c = c k "x" codes[k] " ";
      printf "  %-28s %s last %d bytes, min %.3f median %.3f max %.3f s (%d)\n", read, c, size, t[1], t[int((n + 1) / 2)], t[n], n
    }' "$WORK/times"
done
grep -o 'simulation ended.*' "$WORK/run.log" | head -1 || true
