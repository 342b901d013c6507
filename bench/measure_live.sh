#!/bin/bash
# Measures what `gputwin run --serve --speed max` costs the simulation (BENCHMARKS.md "Live simulation"): runs it,
# optionally reads /api/overview and /api/nodes once a second ("reader"), prints the "simulation ended" line.
# Usage: bench/measure_live.sh SCENARIO TAG reader|none [run options...]
G=${GPUTWIN:-$(dirname "$0")/../build/gputwin}
S=$1; TAG=$2; READER=$3; shift 3
OUT=/tmp/mlive-$TAG; rm -rf $OUT
$G run $S --serve --speed max --no-slurmrestd --listen 127.0.0.1:0 --out $OUT "$@" > /tmp/mlive-$TAG.log 2>&1 &
PID=$!
for i in $(seq 1 600); do grep -q "on http" /tmp/mlive-$TAG.log 2>/dev/null && break; sleep 0.1; done
URL=$(grep -o 'on http://[0-9.:]*' /tmp/mlive-$TAG.log | head -1 | cut -c4-)
n=0
while ! grep -q "simulation ended" /tmp/mlive-$TAG.log && kill -0 $PID 2>/dev/null; do
  if [ "$READER" = reader ]; then curl -s "$URL/api/overview" > /dev/null; curl -s "$URL/api/nodes" > /dev/null; n=$((n+1)); fi
  sleep 1
done
grep "simulation ended" /tmp/mlive-$TAG.log
echo "reader rounds: $n"
kill -INT $PID; wait $PID
