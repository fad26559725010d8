#!/usr/bin/env bash
# Measures kernels other people's compilers and libraries made (Triton, cuBLAS) on the GPU this
# runs on, and the sync-scheme diagnostics of calibration/kernels/ffn_chain.cu. One call of the
# project's device machine runs one invocation; what to run is chosen by environment variables:
#
#   TIME_SETS=orders,longk     check and time these case sets (measure.py time)
#   PROFILE_SETS=orders,longk  Nsight Compute, one report per set: L2 flushed before each kernel
#                              (--cache-control all), clocks left alone (--clock-control none)
#   APP_SETS=ffn               Nsight Compute with --replay-mode application --cache-control none:
#                              a chain's second kernel sees the L2 its first kernel left
#   TIMELINE_MATCH=REGEX       per-program SM, start and end (%globaltimer) of the matching triton_mm
#                              cases (measure.py timeline), into timeline.csv
#   SYNC_DIAG=1                ffn_chain.cu variants with per-block timelines (H100 sync study)
#   CUTLASS=1                  calibration/kernels/cutlass3_gemm.cu (CUTLASS 3 SM90 persistent GEMMs:
#                              raster m|n, swizzle 1|8, cooperative / ping-pong / 2x1 cluster), timed and
#                              profiled; uses calibration/build/cutlass3_gemm if carried, else builds it
#                              from carried headers in calibration/build/cutlass (cutlass3_build.sh)
#   SUITE=1                    calibration/run_h100.sh (the project's own kernels and probes), e.g.
#                              on an H200
#   MATCH=REGEX               only the cases whose name matches (time and profile)
#   SMOKE=1 (default)          first one case of every family that will run; stop if any fails
#   BUDGET_S=540               no new case starts after this many seconds (outputs always packed)
#
#   OUT=DIR bash calibration/production/run_production.sh
#
# $OUT receives at most 8 files: env.txt, run.log, time.csv, measurements.csv (collect.py:
# Nsight Compute rows split into cases), results.tar.gz (raw ncu pages, case listings, logs),
# sync.tar.gz (ffn_chain timings and timelines), suite.tar.gz (run_h100.sh's outputs),
# timeline.csv.gz (Triton block timelines).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="${OUT:-./out}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
W="$(mktemp -d "${TMPDIR:-/tmp}/prod.XXXXXX")"
BUDGET_S="${BUDGET_S:-540}"
T0=$(date +%s)
elapsed() { echo $(($(date +%s) - T0)); }
left() { echo $((BUDGET_S - $(elapsed))); }
log() { echo "[$(date +%H:%M:%S) +$(elapsed)s] $*" | tee -a "$W/run.log"; }
pick() { for t in "$@"; do command -v "$t" >/dev/null 2>&1 && { command -v "$t"; return 0; }; [ -x "$t" ] && { echo "$t"; return 0; }; done; return 1; }
NCU="$(pick "${NCU:-ncu}" /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu)" || NCU=""
NVCC="$(pick "${NVCC:-nvcc}" /usr/local/cuda/bin/nvcc)" || NVCC=""
PY="${PYTHON:-python3}"
export PYTHONUNBUFFERED=1

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "repo commit: $(git -C "$ROOT" rev-parse --verify -q HEAD 2>/dev/null || echo unknown) (plus the working tree sent)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit,ecc.mode.current --format=csv 2>&1
  "$PY" -c "import torch, triton; p = torch.cuda.get_device_properties(0); print('torch', torch.__version__, 'triton', triton.__version__, 'cuda', torch.version.cuda); print(p.name, p.multi_processor_count, 'SMs', getattr(p, 'L2_cache_size', '?'), 'B L2')" 2>&1
  [ -n "$NVCC" ] && "$NVCC" --version | tail -2
  [ -n "$NCU" ] && "$NCU" --version | tail -1
} > "$W/env.txt" 2>&1
cat "$W/env.txt"

METRICS_WANTED="dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_hit.sum,lts__t_sectors_op_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_ltcfabric.sum,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static,launch__waves_per_multiprocessor,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,launch__occupancy_limit_blocks"
METRICS="$METRICS_WANTED"
if [ -n "$NCU" ]; then
  # Keep only metrics this ncu knows (an unknown one fails the whole run).
  known="$("$NCU" --query-metrics --csv 2>/dev/null)"
  kept=""
  IFS=',' read -r -a arr <<<"$METRICS_WANTED"
  for m in "${arr[@]}"; do
    if [[ "$m" == launch__* ]] || grep -q "\"\?${m%%.*}\"\?[, ]" <<<"$known"; then kept="${kept:+$kept,}$m"; else log "ncu: dropping unknown metric $m"; fi
  done
  [ -n "$known" ] && METRICS="$kept"
fi

cd "$HERE" || exit 1
FAILED=0

# ------------------------------------------------------------------ the project's suite (e.g. on an H200)
if [ "${SUITE:-0}" = 1 ]; then
  log "suite: calibration/run_h100.sh (budget ${SUITE_BUDGET_S:-240} s)"
  mkdir -p "$W/suite"
  OUT="$W/suite" BUDGET_S=$(( ${SUITE_BUDGET_S:-240} - 60 )) bash "$ROOT/calibration/run_h100.sh" > "$W/suite.log" 2>&1 || { FAILED=1; log "suite rc $?"; }
  cp "$W/suite.log" "$W/suite/" 2>/dev/null
  (cd "$W" && tar czf "$OUT/suite.tar.gz" suite)
fi

# ------------------------------------------------------------------ smoke: one case per family
ALL_SETS="$(echo "${TIME_SETS:-},${PROFILE_SETS:-},${APP_SETS:-}" | tr ',' '\n' | grep -v '^$' | sort -u | paste -sd,)"
if [ "${SMOKE:-1}" = 1 ] && [ -n "$ALL_SETS" ]; then
  SMOKE_CASES="$("$PY" - "$ALL_SETS" <<'EOF'
import sys
from cases import build_cases
sets = sys.argv[1].split(",")
seen, pick = set(), []
for c in build_cases():
    if c["set"] in sets and c["family"] not in seen:
        seen.add(c["family"]); pick.append(c["case"])
print(",".join(pick))
EOF
)"
  log "smoke: $SMOKE_CASES"
  mkdir -p "$W/smoke"
  for c in ${SMOKE_CASES//,/ }; do
    "$PY" measure.py time --only "$c" --out "$W/smoke" >> "$W/smoke.log" 2>&1
  done
  # A family that fails costs little later (its cases fail at their check); only a smoke test
  # where nothing works stops the run.
  cut -d, -f1,4,5,8 "$W/smoke/time.csv" 2>/dev/null | tee -a "$W/run.log"
  if ! grep -q ",ok," "$W/smoke/time.csv" 2>/dev/null; then
    log "SMOKE FAILED for every family: stopping before the long phases"; tail -40 "$W/smoke.log"; FAILED=1
    TIME_SETS=""; PROFILE_SETS=""; APP_SETS=""
  elif grep -q "FAILED" "$W/smoke/time.csv"; then
    log "smoke: some families FAILED (see smoke.log in results.tar.gz)"; grep -B2 -A12 "Traceback" "$W/smoke.log" | head -60; FAILED=1
  fi
fi

# ------------------------------------------------------------------ timing
if [ -n "${TIME_SETS:-}" ]; then
  log "time: $TIME_SETS (budget $(( $(left) * ${TIME_SHARE:-55} / 100 )) s)"
  "$PY" measure.py time --sets "$TIME_SETS" --match "${MATCH:-}" --out "$W" --budget-s $(( $(left) * ${TIME_SHARE:-55} / 100 )) > "$W/time.log" 2>&1 || FAILED=1
  log "time: $(grep -c ',ok,' "$W/time.csv" 2>/dev/null) ok, $(grep -c 'FAILED' "$W/time.csv" 2>/dev/null) failed, $(grep -c 'skipped' "$W/time.csv" 2>/dev/null) skipped"
fi

# ------------------------------------------------------------------ Nsight Compute
prof() { # tag replay-args...
  local tag="$1"; shift
  local b; b=$(( $(left) - 60 ))
  [ "$b" -gt 20 ] || { log "ncu $tag skipped: budget"; return; }
  log "ncu $tag ($*; budget $b s)"
  timeout -k 10 $((b + 40)) "$NCU" --profile-from-start off --clock-control none --metrics "$METRICS" "$@" -f -o "$W/prof_$tag" \
    "$PY" measure.py profile --sets "$tag" --match "${MATCH:-}" --out "$W" --budget-s "$b" > "$W/ncu_$tag.log" 2>&1 || { FAILED=1; log "ncu $tag rc $?"; tail -5 "$W/ncu_$tag.log"; }
  if [ -f "$W/prof_$tag.ncu-rep" ]; then
    "$NCU" --import "$W/prof_$tag.ncu-rep" --csv --page raw --print-units base > "$W/ncu_$tag.csv" 2>> "$W/ncu_$tag.log"
    log "ncu $tag: $(($(wc -l < "$W/ncu_$tag.csv") - 2)) rows"
  fi
}
if [ -n "$NCU" ]; then
  for s in ${PROFILE_SETS:+${PROFILE_SETS//,/ }}; do prof "$s" --cache-control all; done
  for s in ${APP_SETS:+${APP_SETS//,/ }}; do prof "$s" --cache-control none --replay-mode application; done
fi

# ------------------------------------------------------------------ block timelines of Triton matmuls
if [ -n "${TIMELINE_MATCH:-}" ]; then
  log "timeline: $TIMELINE_MATCH"
  "$PY" measure.py timeline --match "$TIMELINE_MATCH" --out "$W" --budget-s $(( $(left) - 90 )) > "$W/timeline.log" 2>&1 || { FAILED=1; tail -20 "$W/timeline.log"; }
  grep "^timeline" "$W/timeline.log" | tee -a "$W/run.log"
  gzip -c "$W/timeline.csv" > "$OUT/timeline.csv.gz" 2>/dev/null
fi

# ------------------------------------------------------------------ sync diagnostics (ffn_chain)
if [ "${SYNC_DIAG:-0}" = 1 ] && [ -n "$NVCC" ]; then
  mkdir -p "$W/sync"
  log "sync: building ffn_chain"
  if "$NVCC" -O3 -arch=sm_90 -Xptxas -v -o "$W/sync/ffn_chain" "$ROOT/calibration/kernels/ffn_chain.cu" -lcublas > "$W/sync/build.log" 2>&1; then
    run_ffn() { # name args...
      local name="$1"; shift
      [ "$(left)" -gt 45 ] || { log "sync $name skipped: budget"; return; }
      timeout -k 5 60 "$W/sync/ffn_chain" "$@" --warmup 3 --iters 20 --timeline "$W/sync/tl_$name.csv" > "$W/sync/$name.log" 2>&1 || { log "sync $name FAILED rc $?"; FAILED=1; }
      log "sync $name: $(grep -E '^(median_us|gemm._alone)' "$W/sync/$name.log" | tr '\n' ' ')"
    }
    for mode in "stream --alone" "rowsync --alone" "dataflow" "dataflow --df-wait row" "dataflow --df-wait none"; do
      n="16_$(echo "$mode" | tr -d '-' | tr ' ' '_')"
      # shellcheck disable=SC2086
      run_ffn "$n" 16 4096 14336 $mode --bm 64
    done
    for mode in "stream --alone" "rowsync --alone" "dataflow" "dataflow --df-wait row" "dataflow --df-wait none" \
                "dataflow --df-rows 32" "dataflow --df-rows 4" "dataflow --df-rows 32 --df-wait none"; do
      n="4096_$(echo "$mode" | tr -d '-' | tr ' ' '_')"
      # shellcheck disable=SC2086
      run_ffn "$n" 4096 4096 14336 $mode --bm 128
    done
    if [ -n "$NCU" ]; then
      for v in "4096 dataflow --df-rows 32" "4096 dataflow --df-wait none" "4096 dataflow --df-rows 4" "16 dataflow --df-wait none"; do
        [ "$(left)" -gt 45 ] || break
        set -- $v; m=$1; shift
        bm=128; [ "$m" = 16 ] && bm=64
        n="ncu_${m}_$(echo "$*" | tr -d '-' | tr ' ' '_')"
        timeout -k 5 90 "$NCU" -k regex:ffn_dataflow_kernel --launch-count 1 --clock-control none --metrics "$METRICS" --csv --page raw --print-units base \
          "$W/sync/ffn_chain" "$m" 4096 14336 "$@" --bm "$bm" --warmup 0 --iters 1 > "$W/sync/$n.csv" 2> "$W/sync/$n.log" || log "sync $n ncu failed"
        log "sync $n: $(grep -c ffn_dataflow "$W/sync/$n.csv") rows"
      done
    fi
  else
    log "sync: build FAILED"; tail -20 "$W/sync/build.log"; FAILED=1
  fi
  (cd "$W" && tar czf "$OUT/sync.tar.gz" sync)
fi

# ------------------------------------------------------------------ CUTLASS 3 persistent GEMMs
if [ "${CUTLASS:-0}" = 1 ]; then
  mkdir -p "$W/cutlass"
  BIN="$ROOT/calibration/build/cutlass3_gemm"
  if ! "$BIN" 128 128 128 --iters 1 --warmup 0 > "$W/cutlass/probe.log" 2>&1; then
    log "cutlass: carried binary does not run ($(tail -1 "$W/cutlass/probe.log")); building"
    bash "$ROOT/calibration/kernels/cutlass3_build.sh" "$ROOT/calibration/build/cutlass" > "$W/cutlass/build.log" 2>&1 || log "cutlass: build FAILED"
  fi
  cut_run() { # name args...
    local name="$1"; shift
    [ "$(left)" -gt 40 ] || { log "cutlass $name skipped: budget"; return; }
    timeout -k 5 60 "$BIN" "$@" --check > "$W/cutlass/$name.log" 2>&1 || { log "cutlass $name FAILED rc $?"; FAILED=1; return; }
    [ -n "$NCU" ] && timeout -k 5 90 "$NCU" -k regex:device_kernel --launch-count 1 --clock-control none --metrics "$METRICS" \
      --csv --page raw --print-units base "$BIN" "$@" --warmup 0 --iters 1 > "$W/cutlass/ncu_$name.csv" 2> "$W/cutlass/ncu_$name.log"
    log "cutlass $name: $(grep -E '^(grid|raster|swizzle|median_us|tflops|rel_fro_error) ' "$W/cutlass/$name.log" | tr '\n' ' ')"
  }
  for shape in "8192 8192 8192" "16384 4096 4096" "4096 14336 4096"; do
    tag="$(echo "$shape" | tr ' ' 'x')"
    for r in m n; do
      for sw in 1 8; do
        # shellcheck disable=SC2086
        cut_run "coop_${tag}_r${r}_s${sw}" $shape --schedule coop --raster "$r" --swizzle "$sw"
      done
    done
    # shellcheck disable=SC2086
    cut_run "pingpong_${tag}_rh_s1" $shape --schedule pingpong --raster heuristic --swizzle 1
    # shellcheck disable=SC2086
    cut_run "coop2x1_${tag}_rh_s1" $shape --schedule coop --cluster 2x1 --raster heuristic --swizzle 1
  done
  (cd "$W" && tar czf "$OUT/cutlass.tar.gz" cutlass)
fi

# ------------------------------------------------------------------ pack
"$PY" collect.py "$W" -o "$W/measurements.csv" 2>> "$W/run.log" || log "collect failed"
log "done in $(elapsed) s"
cp "$W/env.txt" "$W/run.log" "$OUT/"
[ -f "$W/time.csv" ] && cp "$W/time.csv" "$OUT/"
[ -f "$W/measurements.csv" ] && cp "$W/measurements.csv" "$OUT/"
(cd "$W" && tar czf "$OUT/results.tar.gz" --exclude='*.ncu-rep' --exclude=sync --exclude=suite --exclude=cutlass .)
ls -la "$OUT"
[ -f "$W/time.csv" ] && cut -d, -f1,4,5,8,11,13 "$W/time.csv" | tail -60
exit $FAILED
