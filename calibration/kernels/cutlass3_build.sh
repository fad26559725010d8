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
SRC="${1:-${CUTLASS_DIR:-}}"
[ -n "$SRC" ] || { echo "usage: $0 CUTLASS_ROOT   (or set CUTLASS_DIR)" >&2; exit 2; }
[ -d "$SRC" ] || { echo "cutlass3_build: '$SRC' is not a folder" >&2; exit 2; }
SRC="$(cd "$SRC" && pwd)"
mkdir -p "$BUILD"

if [ -f "$SRC/include/cutlass/cutlass.h" ] && [ -f "$SRC/tools/util/include/cutlass/util/packed_stride.hpp" ]; then
  CUTLASS="$SRC"
elif git --git-dir="$SRC" rev-parse --verify -q HEAD >/dev/null 2>&1 ||
     git -C "$SRC" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  GITDIR="$SRC"
  git --git-dir="$SRC" rev-parse --verify -q HEAD >/dev/null 2>&1 || GITDIR="$(git -C "$SRC" rev-parse --absolute-git-dir)"
  CUTLASS="$BUILD/cutlass"
  rm -rf "$CUTLASS" && mkdir -p "$CUTLASS"
  # A partial snapshot may make git report missing blobs outside these folders; what matters is
  # checked below.
  git --git-dir="$GITDIR" archive HEAD include tools/util/include | tar x -C "$CUTLASS"
  [ -f "$CUTLASS/include/cutlass/cutlass.h" ] && [ -f "$CUTLASS/tools/util/include/cutlass/util/packed_stride.hpp" ] ||
    { echo "cutlass3_build: export from $GITDIR failed" >&2; exit 1; }
  git --git-dir="$GITDIR" rev-parse HEAD > "$CUTLASS/COMMIT"
  echo "cutlass3_build: exported CUTLASS $(cut -c1-12 "$CUTLASS/COMMIT") headers to $CUTLASS"
else
  echo "cutlass3_build: '$SRC' is neither a CUTLASS checkout (include/cutlass/cutlass.h) nor a git repository" >&2
  exit 2
fi
[ -f "$CUTLASS/COMMIT" ] && echo "cutlass_commit $(cat "$CUTLASS/COMMIT")"

NVCC="${NVCC:-nvcc}"
command -v "$NVCC" >/dev/null 2>&1 || NVCC=/usr/local/cuda/bin/nvcc
[ -x "$NVCC" ] || command -v "$NVCC" >/dev/null 2>&1 || { echo "cutlass3_build: nvcc not found" >&2; exit 1; }

# sm_90a (not sm_90): WGMMA and the TMA/cluster features CUTLASS's SM90 kernels use exist only in
# the arch-specific target. NDEBUG drops CUTLASS's device-side asserts from the timed kernel.
FLAGS=(-std=c++17 -O3 -DNDEBUG -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr
       -I"$CUTLASS/include" -I"$CUTLASS/tools/util/include" -Xptxas -v -lcublas)
# shellcheck disable=SC2206
[ -n "${EXTRA_NVCCFLAGS:-}" ] && FLAGS+=(${EXTRA_NVCCFLAGS})
LOG="$BUILD/cutlass3_gemm.build.log"
echo "$NVCC ${FLAGS[*]} -o $BUILD/cutlass3_gemm $ROOT/calibration/kernels/cutlass3_gemm.cu"
T0=$(date +%s%N)
set +e
"$NVCC" "${FLAGS[@]}" -o "$BUILD/cutlass3_gemm" "$ROOT/calibration/kernels/cutlass3_gemm.cu" > "$LOG" 2>&1
RC=$?
set -e
T1=$(date +%s%N)
MS=$(( (T1 - T0) / 1000000 ))
printf 'build_seconds %d.%d\n' $((MS / 1000)) $((MS % 1000 / 100))
if [ $RC -ne 0 ]; then
  tail -n 40 "$LOG" >&2
  echo "cutlass3_build: nvcc failed (rc=$RC), log in $LOG" >&2
  exit 1
fi
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
if grep -qi "warning" "$LOG"; then
  echo "warnings:"
  grep -i "warning" "$LOG" | sort | uniq -c | sort -rn | head -n 20
else
  echo "warnings: none"
fi
echo "binary $BUILD/cutlass3_gemm $(stat -c %s "$BUILD/cutlass3_gemm") bytes"
