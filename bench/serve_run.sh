# Sourced by the live benchmarks: serve_run LOG READY GPUTWIN SCENARIO [run options] starts
# `GPUTWIN run SCENARIO --serve [run options]` in the background with its output in LOG, sets PID, and waits (up to
# 60 s) until LOG shows READY (the line a server prints once it listens); if the run ends first, prints its log and
# exits 1.
serve_run() {
  local log=$1 ready=$2 gputwin=$3 scenario=$4
  shift 4
  "$gputwin" run "$scenario" --serve "$@" >"$log" 2>&1 &
  PID=$!
  for _ in $(seq 1 3000); do
    grep -q "$ready" "$log" 2>/dev/null && return 0
    kill -0 $PID 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.02
  done
}
