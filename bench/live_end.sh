#!/usr/bin/env bash
# The end of a live run with results (issue 15): `gputwin run SCENARIO --serve --speed max --out DIR`, nobody reading;
# prints the wall time until the process says "simulation ended" (the results written and opened for serving), the
# simulation's own wall time from that line, the process's CPU seconds by then, and the snapshots it wrote. Run two
# binaries alternately to compare; "end" is wall minus simulation (start-up and loading included).
#
#   bench/live_end.sh [--binary B] [--port P] SCENARIO      (default: build/gputwin, port 18090)
set -euo pipefail
DEFAULT_PORT=18090
# shellcheck source=bench/binary_and_port.sh
source "$(dirname "$0")/binary_and_port.sh"
set -- "${ARGS[@]}"
[ $# -eq 1 ] || { echo "usage: $0 [--binary B] [--port P] SCENARIO" >&2; exit 2; }
WORK=$(mktemp -d)
start=$(date +%s.%N)
"$G" run "$1" --serve --speed max --out "$WORK/out" --listen "127.0.0.1:$PORT" --no-slurmrestd >"$WORK/log" 2>&1 &
pid=$!
while ! grep -q "simulation ended" "$WORK/log" && kill -0 $pid 2>/dev/null; do sleep 0.05; done
end=$(date +%s.%N)
if ! grep -q "simulation ended" "$WORK/log"; then
  echo "live_end: the run did not end:" >&2
  tail -5 "$WORK/log" >&2
  rm -rf "$WORK"
  exit 1
fi
read -r utime stime < <(awk '{print $14, $15}' "/proc/$pid/stat")
ticks=$(getconf CLK_TCK)
kill -INT $pid
wait $pid || true
line=$(grep -o 'simulation ended.*' "$WORK/log")
sim=$(echo "$line" | grep -oE '[0-9.]+ s wall' | head -1 | cut -d' ' -f1)
snaps=$(echo "$line" | grep -oE '[0-9]+ snapshots written in [0-9.]+ s')
awk -v s="$start" -v e="$end" -v sim="$sim" -v u="$utime" -v t="$stime" -v k="$ticks" -v snaps="$snaps" 'BEGIN {
  printf "wall %.1f s, simulation %.1f s, end %.1f s, CPU %.1f s; %s\n", e - s, sim, e - s - sim, (u + t) / k, snaps }'
rm -rf "$WORK"
