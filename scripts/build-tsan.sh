#!/usr/bin/env bash
# Configures and builds the ThreadSanitizer build into build-tsan/ (gcc, -fsanitize=thread on every target, the CPU
# clones left out), for the tests of code that runs on more than one thread: the results writers (the stream that
# writes while a run goes on, the metrics build, jobs.csv's thread). scripts/test.sh runs them.
# Usage: scripts/build-tsan.sh [target...]   (default: results_tests).
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUTWIN_THREAD_SANITIZE=ON \
  -DGPUTWIN_BUILD_TESTS=ON -DGPUTWIN_BUILD_WEB=OFF >/dev/null
if [ $# -eq 0 ]; then set -- results_tests; fi
# Without address randomisation where the system lets a process turn it off (setarch -R): ThreadSanitizer's fixed
# memory layout clashes with the widest ASLR settings, and the build runs the test binaries to list their tests.
if setarch "$(uname -m)" -R true 2>/dev/null; then
  setarch "$(uname -m)" -R cmake --build build-tsan -j"$(nproc)" --target "$@"
else
  cmake --build build-tsan -j"$(nproc)" --target "$@"
fi
