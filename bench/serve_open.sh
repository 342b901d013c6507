#!/usr/bin/env bash
# How long `gputwin serve DIR` takes to open a results folder (issue 15: the whole-file checks, the jobs and the sort
# orders), as it says itself ("read in N s"). Run two binaries alternately to compare.
#
#   bench/serve_open.sh [--binary B] [--port P] DIR      (default: build/gputwin, port 18094)
set -euo pipefail
DEFAULT_PORT=18094
# shellcheck source=bench/binary_and_port.sh
source "$(dirname "$0")/binary_and_port.sh"
set -- "${ARGS[@]}"
[ $# -eq 1 ] || { echo "usage: $0 [--binary B] [--port P] DIR" >&2; exit 2; }
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
"$G" serve "$1" --listen "127.0.0.1:$PORT" --no-slurmrestd >"$LOG" 2>&1 &
pid=$!
while ! grep -q "serving" "$LOG" && kill -0 $pid 2>/dev/null; do sleep 0.05; done
kill -INT $pid 2>/dev/null || true
wait $pid || true
grep -o "read in [0-9.]* s" "$LOG" || { echo "serve_open: not served:" >&2; tail -3 "$LOG" >&2; exit 1; }
