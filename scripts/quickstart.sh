#!/usr/bin/env bash
# The README's first command: set up, build, and run the default scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh -DGPUTWIN_BUILD_TESTS=OFF
./build/gputwin run scenarios/quickstart.json "$@"
