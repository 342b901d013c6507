#!/usr/bin/env bash
# The README's second command (and CI's): set up, build, and run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh -DGPUTWIN_BUILD_TESTS=ON
cd build
ctest --output-on-failure -j"$(nproc)"
