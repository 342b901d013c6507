#!/usr/bin/env bash
# Installs the Debian 12 packages gputwin needs to build and test. Idempotent: quiet when all is there.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  nlohmann-json3-dev libcli11-dev libfmt-dev libsqlite3-dev sqlite3
  libgtest-dev libgmock-dev
  libboost-graph-dev libeigen3-dev libsimgrid-dev libyaml-cpp-dev
  prometheus
  librsvg2-bin  # rsvg-convert: `gputwin report --format png`
  libcurl4-openssl-dev libsimdjson-dev  # twin mode: the slurmrestd client and its parsers
  libcivetweb-dev  # HTTP server: the web dashboard and the fake slurmrestd of the twin tests
  libjwt-dev       # JWT (HS256) check of the slurmrestd-compatible API
  chromium  # the dashboard's end-to-end tests (headless, driven by playwright-core)
  wrk       # the live simulation's load test (bench/live_load.sh, ctest ui.live_load)
  clang libclang-rt-14-dev llvm  # the sanitizer build and the fuzz targets (libFuzzer, llvm-symbolizer)
)
# Node.js and npm bundle the dashboard's pages at build time. A machine with its own Node.js (NodeSource's bundles
# npm, and Debian's npm package would conflict with it) keeps it.
if ! command -v npm >/dev/null 2>&1; then packages+=(nodejs npm); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
