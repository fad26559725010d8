#!/usr/bin/env bash
# Installs the Debian packages tilesim builds against, only those that are missing, and any
# packages given as arguments.
# Idempotent and quiet when everything is already there.
set -euo pipefail
packages=(
  build-essential cmake
  libyaml-cpp-dev libboost-program-options-dev libboost-graph-dev
  libspdlog-dev libfmt-dev libtbb-dev catch2 nlohmann-json3-dev libbenchmark-dev
  # Sweeps across machines (tilesim is built with MPI when it is found; CI runs a 2-rank sweep).
  libopenmpi-dev openmpi-bin
  # The charting library bundled into `tilesim report` pages, and the headless browser that
  # tests those pages.
  libjs-c3 libjs-d3 chromium
  # The explorer's WebAssembly module (the L2 model compiled for wasm32-wasi, embedded in
  # `tilesim explore` pages), and node, which runs it in the tests.
  clang-14 lld-14 wasi-libc libc++-14-dev-wasm32 libc++abi-14-dev-wasm32 libclang-rt-14-dev-wasm32 nodejs
  # The Python module (docs/python.md), its tests and example: pybind11, the headers, pytest,
  # pandas, matplotlib.
  pybind11-dev python3-dev python3-pytest python3-pandas python3-matplotlib
)
# Extra packages a target needs beyond these (`make fuzz`: libFuzzer's runtime for x86-64).
packages+=("$@")
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
