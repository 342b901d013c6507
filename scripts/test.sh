#!/usr/bin/env bash
# The README's second command (and CI's): set up, build, and run every test; then the unit and golden tests and a short
# run of every fuzz target in the sanitizer build (scripts/build-san.sh). The twin's live tests run against a real
# local Slurm (../shared/slurmrestd/local-slurm.sh, started in the background while the builds run, as root only);
# without it they skip.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
slurm_script="$(pwd)/../shared/slurmrestd/local-slurm.sh"
slurm_state=/tmp/slurm-twin
slurm_log="$(mktemp)"
slurm_pid=
if [ "$(id -u)" -eq 0 ] && [ -f "$slurm_script" ]; then
  bash "$slurm_script" start "$slurm_state" >"$slurm_log" 2>&1 &
  slurm_pid=$!
fi
bash scripts/build.sh -DGPUTWIN_BUILD_TESTS=ON
cd build
status=0
ctest --output-on-failure -j"$(nproc)" -LE slurm-live || status=$?
cd ..
# The sanitizer build (build-san/, clang, ASan + UBSan): the unit and golden tests, then every fuzz target for a few
# seconds (about a minute in all) from its seeds and the corpus earlier runs left.
bash scripts/build-san.sh
(cd build-san && ctest --output-on-failure -j"$(nproc)" -L 'unit|golden') || status=$?
bash scripts/fuzz.sh --no-build --seconds 4 || status=$?
# The ThreadSanitizer build (build-tsan/, scripts/build-tsan.sh): the tests of the results writers' threads.
bash scripts/build-tsan.sh
# (without address randomisation where setarch -R is allowed: see scripts/build-tsan.sh)
norandom=()
if setarch "$(uname -m)" -R true 2>/dev/null; then norandom=(setarch "$(uname -m)" -R); fi
(cd build-tsan && "${norandom[@]}" ctest --output-on-failure -j"$(nproc)" -R '^(ResultsStream|ResultsStore)') ||
  status=$?
cd build
if [ -n "$slurm_pid" ]; then
  if wait "$slurm_pid"; then
    set -a
    # shellcheck disable=SC1091
    . "$slurm_state/env"
    set +a
    ctest --output-on-failure -L slurm-live || status=$?
    # Live gtest cases (LiveSlurmrestd.*) read the same environment.
    ctest --output-on-failure -R '^LiveSlurmrestd' || status=$?
  else
    echo "test: the local Slurm did not start; live tests skipped:" >&2
    tail -20 "$slurm_log" >&2
  fi
  bash "$slurm_script" stop "$slurm_state" >/dev/null 2>&1 || true
fi
exit "$status"
