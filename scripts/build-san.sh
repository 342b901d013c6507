#!/usr/bin/env bash
# Configures and builds the sanitizer build into build-san/: clang, AddressSanitizer + UndefinedBehaviorSanitizer on
# every target (any finding aborts), the tests and the libFuzzer targets of fuzz/, without the dashboard's npm bundle.
# Usage: scripts/build-san.sh [target...]   (default: everything). scripts/test.sh and scripts/fuzz.sh use it.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache hits across clones in other folders (CI's fresh clone): paths under the repository hashed as relative ones,
# and the working folder (in the debug info) left out of the hash.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
CC=clang CXX=clang++ cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUTWIN_SANITIZE=ON \
  -DGPUTWIN_BUILD_FUZZERS=ON -DGPUTWIN_BUILD_TESTS=ON -DGPUTWIN_BUILD_WEB=OFF >/dev/null
if [ $# -gt 0 ]; then
  cmake --build build-san -j"$(nproc)" --target "$@"
else
  cmake --build build-san -j"$(nproc)"
fi
