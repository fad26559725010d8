#!/usr/bin/env bash
# Builds calibration/kernels/cutlass3_gemm.cu (CUTLASS 3 SM90 persistent GEMM) into
# calibration/build/cutlass3_gemm.
#
#   bash calibration/kernels/cutlass3_build.sh [CUTLASS_ROOT]      (default: $CUTLASS_DIR)
#
# CUTLASS_ROOT is one of
#   - a CUTLASS checkout, or a folder this script exported earlier: it has include/cutlass/cutlass.h
#     and tools/util/include/cutlass/util/packed_stride.hpp, and is used in place;
#   - a git repository of CUTLASS (bare or not, e.g. /work/.mirror/NVIDIA+cutlass/repo): the headers
#     of its HEAD (include/ and tools/util/include/, about 30 MB) are exported with `git archive`
#     into calibration/build/cutlass/ and used from there. That folder is also what to carry to a
#     machine without the repository: pass it as CUTLASS_ROOT there.
# Environment: NVCC (default nvcc, else /usr/local/cuda/bin/nvcc), EXTRA_NVCCFLAGS.
# Prints the build time and the ptxas resource lines of each kernel (registers, shared memory,
# spills); the whole compiler output is in calibration/build/cutlass3_gemm.build.log.
# One translation unit with three kernel instantiations: nvcc compiles them one after the other,
# so more cores do not shorten the build.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="$ROOT/calibration/build"
TOOL=cutlass3_build
# shellcheck source=calibration/kernels/cutlass_build_lib.sh
source "$ROOT/calibration/kernels/cutlass_build_lib.sh"
cutlass_headers "${1:-${CUTLASS_DIR:-}}"
cutlass_require include/cutlass/cutlass.h tools/util/include/cutlass/util/packed_stride.hpp
find_nvcc

# sm_90a (not sm_90): WGMMA and the TMA/cluster features CUTLASS's SM90 kernels use exist only in
# the arch-specific target. NDEBUG drops CUTLASS's device-side asserts from the timed kernel.
FLAGS=(-std=c++17 -O3 -DNDEBUG -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr
       -I"$CUTLASS/include" -I"$CUTLASS/tools/util/include" -Xptxas -v -lcublas)
nvcc_build cutlass3_gemm "${FLAGS[@]}"
# ptxas prints, per entry function, "Compiling entry function '<mangled>'" then its resource lines.
# CUTLASS's mangled names run to kilobytes and c++filt gives up on some, so the GEMM kernels are
# labelled from the name: schedule, tile M, cluster M, mainloop stages.
awk '/Compiling entry function/ {
       match($0, /\x27[^\x27]+\x27/); name = substr($0, RSTART + 1, RLENGTH - 2)
       if (name ~ /device_kernel/) {
         sched = name ~ /Pingpong/ ? "Pingpong" : (name ~ /Cooperative/ ? "Cooperative" : "other")
         st = name; sub(/.*MainloopSm90TmaGmmaWarpSpecializedILi/, "", st); cl = st; sub(/E.*/, "", st)
         sub(/^[0-9]+ENS5_IJNS4_1CILi/, "", cl); sub(/E.*/, "", cl)
         tm = name; sub(/.*KernelTmaWarpSpecialized(Cooperative|Pingpong)EEENS5_IJNSA_ILi/, "", tm); sub(/E.*/, "", tm)
         print "kernel cutlass::device_kernel<" sched ", tile_m " tm ", cluster_m " cl ", stages " st ">"
       } else print "kernel " name
       next }
     /ptxas info *: Used|bytes stack frame/ { sub(/^ptxas info *: */, ""); sub(/^ +/, ""); print "  " $0 }' "$LOG" |
  { if command -v c++filt >/dev/null 2>&1; then c++filt; else cat; fi; }
build_report cutlass3_gemm
