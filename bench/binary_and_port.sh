# shellcheck shell=bash disable=SC2034  # G and PORT are read by the scripts that source this
# Sourced by the bench scripts that start one gputwin: reads [--binary B] [--port P] from the front of "$@" into G
# (default build/gputwin) and PORT (default $DEFAULT_PORT), and leaves the rest in ARGS.
G="$(dirname "$0")/../build/gputwin"
PORT="${DEFAULT_PORT:?set DEFAULT_PORT before sourcing}"
ARGS=("$@")
while [ ${#ARGS[@]} -gt 0 ]; do
  case "${ARGS[0]}" in
    --binary) G="${ARGS[1]}"; ARGS=("${ARGS[@]:2}") ;;
    --port) PORT="${ARGS[1]}"; ARGS=("${ARGS[@]:2}") ;;
    *) break ;;
  esac
done
