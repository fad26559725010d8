#!/usr/bin/env bash
# Sourced by the GPU probe scripts (calibration/*_probe.sh): the shared prologue.
#   probe_build NAME SOURCE [NVCC ARGS...]: builds calibration/kernels/SOURCE into $BUILD/NAME
#   (its log in $OUT/build.log; the probe stops on a failed build) and records the GPU in
#   $OUT/env.txt.
set -uo pipefail
OUT=${OUT:?set OUT}
BUILD=${BUILD:-$(mktemp -d)}
probe_build() {
  local name=$1 src=$2
  shift 2
  nvcc -O3 -arch=sm_90 -o "$BUILD/$name" "calibration/kernels/$src" "$@" > "$OUT/build.log" 2>&1 \
    || { cat "$OUT/build.log"; exit 1; }
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total --format=csv \
    > "$OUT/env.txt"
}
