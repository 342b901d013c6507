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
  libcivetweb-dev  # HTTP server: the fake slurmrestd of the twin tests (and the web dashboard)
)

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
