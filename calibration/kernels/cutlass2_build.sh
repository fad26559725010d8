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
SRC="${1:-${CUTLASS_DIR:-}}"
[ -n "$SRC" ] || { echo "usage: $0 CUTLASS_ROOT   (or set CUTLASS_DIR)" >&2; exit 2; }
[ -d "$SRC" ] || { echo "cutlass2_build: '$SRC' is not a folder" >&2; exit 2; }
SRC="$(cd "$SRC" && pwd)"
mkdir -p "$BUILD"

if [ -f "$SRC/include/cutlass/cutlass.h" ]; then
  CUTLASS="$SRC"
elif git --git-dir="$SRC" rev-parse --verify -q HEAD >/dev/null 2>&1 ||
     git -C "$SRC" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  GITDIR="$SRC"
  git --git-dir="$SRC" rev-parse --verify -q HEAD >/dev/null 2>&1 || GITDIR="$(git -C "$SRC" rev-parse --absolute-git-dir)"
  CUTLASS="$BUILD/cutlass"
  HEAD_COMMIT="$(git --git-dir="$GITDIR" rev-parse HEAD)"
  if [ -f "$CUTLASS/include/cutlass/gemm/device/gemm.h" ] && [ "$(cat "$CUTLASS/COMMIT" 2>/dev/null)" = "$HEAD_COMMIT" ]; then
    echo "cutlass2_build: reusing the export of CUTLASS ${HEAD_COMMIT:0:12} in $CUTLASS"
  else
    rm -rf "$CUTLASS" && mkdir -p "$CUTLASS"
    # A partial snapshot may make git report missing blobs outside these folders; what matters is
    # checked below.
    git --git-dir="$GITDIR" archive HEAD include tools/util/include | tar x -C "$CUTLASS"
    echo "$HEAD_COMMIT" > "$CUTLASS/COMMIT"
    echo "cutlass2_build: exported CUTLASS ${HEAD_COMMIT:0:12} headers to $CUTLASS"
  fi
else
  echo "cutlass2_build: '$SRC' is neither a CUTLASS checkout (include/cutlass/cutlass.h) nor a git repository" >&2
  exit 2
fi
[ -f "$CUTLASS/include/cutlass/gemm/device/gemm.h" ] ||
  { echo "cutlass2_build: $CUTLASS/include/cutlass/gemm/device/gemm.h missing" >&2; exit 1; }
[ -f "$CUTLASS/COMMIT" ] && echo "cutlass_commit $(cat "$CUTLASS/COMMIT")"

NVCC="${NVCC:-nvcc}"
command -v "$NVCC" >/dev/null 2>&1 || NVCC=/usr/local/cuda/bin/nvcc
[ -x "$NVCC" ] || command -v "$NVCC" >/dev/null 2>&1 || { echo "cutlass2_build: nvcc not found" >&2; exit 1; }

# Plain sm_90 (SASS for sm_90 plus compute_90 PTX): the SM80 mma.sync/cp.async kernels need no
# arch-specific (sm_90a) feature. NDEBUG drops CUTLASS's device-side asserts from the timed kernel.
FLAGS=(-std=c++17 -O3 -DNDEBUG -arch=sm_90 --expt-relaxed-constexpr
       -I"$CUTLASS/include" -Xptxas -v -lcublas)
# shellcheck disable=SC2206
[ -n "${EXTRA_NVCCFLAGS:-}" ] && FLAGS+=(${EXTRA_NVCCFLAGS})
LOG="$BUILD/cutlass2_gemm.build.log"
echo "$NVCC ${FLAGS[*]} -o $BUILD/cutlass2_gemm $ROOT/calibration/kernels/cutlass2_gemm.cu"
T0=$(date +%s%N)
set +e
"$NVCC" "${FLAGS[@]}" -o "$BUILD/cutlass2_gemm" "$ROOT/calibration/kernels/cutlass2_gemm.cu" > "$LOG" 2>&1
RC=$?
set -e
T1=$(date +%s%N)
MS=$(( (T1 - T0) / 1000000 ))
printf 'build_seconds %d.%d\n' $((MS / 1000)) $((MS % 1000 / 100))
if [ $RC -ne 0 ]; then
  tail -n 40 "$LOG" >&2
  echo "cutlass2_build: nvcc failed (rc=$RC), log in $LOG" >&2
  exit 1
fi
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
if grep -qi "warning" "$LOG"; then
  echo "warnings:"
  grep -i "warning" "$LOG" | sort | uniq -c | sort -rn | head -n 20
else
  echo "warnings: none"
fi
echo "binary $BUILD/cutlass2_gemm $(stat -c %s "$BUILD/cutlass2_gemm") bytes"
