# Sourced by cutlass2_build.sh and cutlass3_build.sh: finding CUTLASS's headers and nvcc, the
# timed build, and its report. The caller sets ROOT, BUILD and TOOL (its name, for messages) and
# runs under `set -euo pipefail`.

# cutlass_headers SRC: sets CUTLASS to a folder with include/ and tools/util/include/. SRC is a
# CUTLASS checkout or a folder exported earlier (include/cutlass/cutlass.h present: used in
# place), or a git repository of CUTLASS (bare or not), whose HEAD's headers are exported with
# `git archive` into $BUILD/cutlass/ (about 30 MB), reused while its COMMIT matches HEAD.
cutlass_headers() {
  local src=$1 gitdir head
  [ -n "$src" ] || { echo "usage: $0 CUTLASS_ROOT   (or set CUTLASS_DIR)" >&2; exit 2; }
  [ -d "$src" ] || { echo "$TOOL: '$src' is not a folder" >&2; exit 2; }
  src="$(cd "$src" && pwd)"
  mkdir -p "$BUILD"
  if [ -f "$src/include/cutlass/cutlass.h" ]; then
    CUTLASS="$src"
  elif git --git-dir="$src" rev-parse --verify -q HEAD >/dev/null 2>&1 ||
       git -C "$src" rev-parse --verify -q HEAD >/dev/null 2>&1; then
    gitdir="$src"
    git --git-dir="$src" rev-parse --verify -q HEAD >/dev/null 2>&1 || gitdir="$(git -C "$src" rev-parse --absolute-git-dir)"
    CUTLASS="$BUILD/cutlass"
    head="$(git --git-dir="$gitdir" rev-parse HEAD)"
    if [ -f "$CUTLASS/include/cutlass/cutlass.h" ] && [ "$(cat "$CUTLASS/COMMIT" 2>/dev/null)" = "$head" ]; then
      echo "$TOOL: reusing the export of CUTLASS ${head:0:12} in $CUTLASS"
    else
      rm -rf "$CUTLASS" && mkdir -p "$CUTLASS"
      # A partial snapshot may make git report missing blobs outside these folders; what matters
      # is checked by the caller (cutlass_require).
      git --git-dir="$gitdir" archive HEAD include tools/util/include | tar x -C "$CUTLASS"
      echo "$head" > "$CUTLASS/COMMIT"
      echo "$TOOL: exported CUTLASS ${head:0:12} headers to $CUTLASS"
    fi
  else
    echo "$TOOL: '$src' is neither a CUTLASS checkout (include/cutlass/cutlass.h) nor a git repository" >&2
    exit 2
  fi
  [ -f "$CUTLASS/COMMIT" ] && echo "cutlass_commit $(cat "$CUTLASS/COMMIT")"
  return 0
}

# cutlass_require FILE...: each FILE (relative to $CUTLASS) must be there.
cutlass_require() {
  local f
  for f in "$@"; do
    [ -f "$CUTLASS/$f" ] || { echo "$TOOL: $CUTLASS/$f missing" >&2; exit 1; }
  done
}

# find_nvcc: sets NVCC ($NVCC, else nvcc on the PATH, else /usr/local/cuda/bin/nvcc).
find_nvcc() {
  NVCC="${NVCC:-nvcc}"
  command -v "$NVCC" >/dev/null 2>&1 || NVCC=/usr/local/cuda/bin/nvcc
  [ -x "$NVCC" ] || command -v "$NVCC" >/dev/null 2>&1 || { echo "$TOOL: nvcc not found" >&2; exit 1; }
}

# nvcc_build NAME FLAGS...: builds calibration/kernels/NAME.cu into $BUILD/NAME with FLAGS plus
# EXTRA_NVCCFLAGS, the compiler's output in $BUILD/NAME.build.log (LOG); prints the command and
# build_seconds; on failure the log's end, exit 1.
nvcc_build() {
  local name=$1 t0 t1 ms rc
  shift
  local flags=("$@")
  # shellcheck disable=SC2206
  [ -n "${EXTRA_NVCCFLAGS:-}" ] && flags+=(${EXTRA_NVCCFLAGS})
  LOG="$BUILD/$name.build.log"
  echo "$NVCC ${flags[*]} -o $BUILD/$name $ROOT/calibration/kernels/$name.cu"
  t0=$(date +%s%N)
  set +e
  "$NVCC" "${flags[@]}" -o "$BUILD/$name" "$ROOT/calibration/kernels/$name.cu" > "$LOG" 2>&1
  rc=$?
  set -e
  t1=$(date +%s%N)
  ms=$(( (t1 - t0) / 1000000 ))
  printf 'build_seconds %d.%d\n' $((ms / 1000)) $((ms % 1000 / 100))
  if [ $rc -ne 0 ]; then
    tail -n 40 "$LOG" >&2
    echo "$TOOL: nvcc failed (rc=$rc), log in $LOG" >&2
    exit 1
  fi
}

# build_report NAME: the log's warnings, counted, and the binary's size.
build_report() {
  if grep -qi "warning" "$LOG"; then
    echo "warnings:"
    grep -i "warning" "$LOG" | sort | uniq -c | sort -rn | head -n 20
  else
    echo "warnings: none"
  fi
  echo "binary $BUILD/$1 $(stat -c %s "$BUILD/$1") bytes"
}
