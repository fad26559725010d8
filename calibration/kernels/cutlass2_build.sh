#!/usr/bin/env bash
# Builds calibration/kernels/cutlass2_gemm.cu (CUTLASS 2.x SM80-style multistage GEMMs) into
# calibration/build/cutlass2_gemm.
#
#   bash calibration/kernels/cutlass2_build.sh [CUTLASS_ROOT]      (default: $CUTLASS_DIR)
#
# CUTLASS_ROOT is taken as in cutlass3_build.sh: a CUTLASS checkout or a folder exported earlier
# (include/cutlass/cutlass.h present) is used in place; a git repository of CUTLASS (bare or not,
# e.g. /work/.mirror/NVIDIA+cutlass/repo) has the headers of its HEAD exported with `git archive`
# into calibration/build/cutlass/, the folder cutlass3_build.sh exports to (same contents: include/
# and tools/util/include/). An export already there from the same commit is reused.
# Environment: NVCC (default nvcc, else /usr/local/cuda/bin/nvcc), EXTRA_NVCCFLAGS.
# Prints the build time and each kernel's ptxas resource lines; the whole compiler output is in
# calibration/build/cutlass2_gemm.build.log. The binary needs only the CUDA runtime and cuBLAS of
# the machine it runs on: carry calibration/build/cutlass2_gemm alone.
# One translation unit with seven GEMM instantiations, compiled one after the other by nvcc.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="$ROOT/calibration/build"
TOOL=cutlass2_build
# shellcheck source=calibration/kernels/cutlass_build_lib.sh
source "$ROOT/calibration/kernels/cutlass_build_lib.sh"
cutlass_headers "${1:-${CUTLASS_DIR:-}}"
cutlass_require include/cutlass/gemm/device/gemm.h
find_nvcc

# Plain sm_90 (SASS for sm_90 plus compute_90 PTX): the SM80 mma.sync/cp.async kernels need no
# arch-specific (sm_90a) feature. NDEBUG drops CUTLASS's device-side asserts from the timed kernel.
FLAGS=(-std=c++17 -O3 -DNDEBUG -arch=sm_90 --expt-relaxed-constexpr
       -I"$CUTLASS/include" -Xptxas -v -lcublas)
nvcc_build cutlass2_gemm "${FLAGS[@]}"
# ptxas prints, per entry function, "Compiling entry function '<mangled>'" then its resource lines.
# The GEMM kernels (cutlass::Kernel<cutlass::gemm::kernel::Gemm<...>>, mangled names of ~2 KB) are
# labelled from the mangled name: the threadblock tile is MmaMultistage's first argument
# (GemmShape<M, N, K>), the stage count the int just before its SharedMemoryClearOption argument.
awk '/Compiling entry function/ {
       match($0, /\x27[^\x27]+\x27/); name = substr($0, RSTART + 1, RLENGTH - 2)
       if (name ~ /^_ZN7cutlass6KernelINS_4gemm6kernel4Gemm/) {
         t = name; sub(/^.*MmaMultistageINS1_9GemmShapeILi/, "", t)
         split(t, d, "ELi"); sub(/E.*/, "", d[3])
         st = name; sub(/ELNS1_23SharedMemoryClearOption.*/, "", st); sub(/.*Li/, "", st)
         print "kernel cutlass::Kernel<Gemm tile " d[1] "x" d[2] "x" d[3] ", stages " st ">"
       } else print "kernel " name
       next }
     /ptxas info *: Used|bytes stack frame/ { sub(/^ptxas info *: */, ""); sub(/^ +/, ""); print "  " $0 }' "$LOG" |
  { if command -v c++filt >/dev/null 2>&1; then c++filt; else cat; fi; }
build_report cutlass2_gemm
