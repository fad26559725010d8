#!/usr/bin/env bash
# Calibration measurements on an H100: builds the two kernels, checks the GEMM against cuBLAS,
# times every case with CUDA events, profiles the first launch of every case with Nsight Compute.
#
#   bash calibration/run_h100.sh            # from anywhere; outputs go to $OUT (default ./out)
#
# Environment: OUT (output folder), NVCC, NCU (tool paths), ONLY (an extended regex: run only the
# cases whose name matches), SKIP_NCU=1 (no profiling).
#
# $OUT receives at most 6 files (some runners return only a few files): summary.csv, env.txt,
# run.log, ncu_metrics.csv (the requested metrics of every case, one row per case, base units),
# results.tar.gz (every per-case file: ncu_<case>.csv raw-page CSVs, check/time/ncu logs, build
# logs) and ncu_reps.tar.gz (the .ncu-rep reports).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="${OUT:-./out}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
FINAL="$OUT"
OUT="$(mktemp -d "${TMPDIR:-/tmp}/calib_h100.XXXXXX")"   # per-case files; packed into $FINAL at the end
BUILD="$ROOT/calibration/build"
ORD="$ROOT/calibration/orders"
ONLY="${ONLY:-.}"
SKIP_NCU="${SKIP_NCU:-0}"

pick() { # first usable tool among the arguments
  for t in "$@"; do
    if command -v "$t" >/dev/null 2>&1; then command -v "$t"; return 0; fi
    if [ -x "$t" ]; then echo "$t"; return 0; fi
  done
  return 1
}
NVCC="$(pick "${NVCC:-nvcc}" /usr/local/cuda/bin/nvcc)" || { echo "run_h100: nvcc not found" >&2; exit 1; }
NCU="$(pick "${NCU:-ncu}" /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu)" || NCU=""

log() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$OUT/run.log"; }
T0=$(date +%s)

# ---------------------------------------------------------------- (e1) environment
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  echo "repo commit: $(git -C "$ROOT" rev-parse --verify -q HEAD 2>/dev/null || echo unknown)"
  echo; echo "== nvidia-smi --query-gpu"
  nvidia-smi --query-gpu=name,driver_version,vbios_version,pci.bus_id,memory.total,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,clocks.applications.graphics,clocks.applications.memory,power.limit,persistence_mode,mig.mode.current,ecc.mode.current --format=csv 2>&1 || true
  echo; echo "== nvidia-smi -q (excerpt)"
  nvidia-smi -q 2>&1 | grep -E -i "Product Name|Driver Version|CUDA Version|VBIOS|MIG Mode|Persistence|Performance State|Clocks Event Reasons|Power Limit" | head -40 || true
  echo; echo "== nvidia-smi -q -d CLOCK"
  nvidia-smi -q -d CLOCK 2>&1 || true
  echo; echo "== nvcc --version"; "$NVCC" --version 2>&1 || true
  echo; echo "== ncu --version"; if [ -n "$NCU" ]; then "$NCU" --version 2>&1 || true; else echo "ncu not found"; fi
} > "$OUT/env.txt"

# ---------------------------------------------------------------- (a) build
mkdir -p "$BUILD"
log "building with $NVCC"
"$NVCC" -O3 -arch=sm_90 -Xptxas -v -o "$BUILD/gemm_order" calibration/kernels/gemm_order.cu -lcublas \
  > "$OUT/build_gemm_order.log" 2>&1 || { cat "$OUT/build_gemm_order.log"; echo "run_h100: build of gemm_order failed" >&2; exit 1; }
"$NVCC" -O3 -arch=sm_90 -Xptxas -v -o "$BUILD/l2_stream" calibration/kernels/l2_stream.cu -lcublas \
  > "$OUT/build_l2_stream.log" 2>&1 || { cat "$OUT/build_l2_stream.log"; echo "run_h100: build of l2_stream failed" >&2; exit 1; }
grep -A2 "gemm_order_kernel" "$OUT/build_gemm_order.log" | grep -E "registers|spill" | tee -a "$OUT/run.log"

# ---------------------------------------------------------------- cases
# GEMM case: "name M N K orderfile"
GEMM_CASES=()
for s in 4096 8192; do
  g=$((s / 128))x$((s / 128))
  for o in row column swizzle3 grouped8 hilbert; do
    GEMM_CASES+=("gemm_${s}x${s}x${s}_${o} $s $s $s $ORD/${o}_${g}.order")
  done
done
for o in row grouped8; do
  GEMM_CASES+=("gemm_8192x14336x4096_${o} 8192 14336 4096 $ORD/${o}_64x112.order")
done
# L2 stream case: "name bytes passes chunk"; passes = ceil(1 GiB / S)
STREAM_CASES=()
GIB=$((1024 * 1024 * 1024))
for mib in 8 16 24 32 40 48 56 64 96 128; do
  b=$((mib * 1024 * 1024))
  p=$(((GIB + b - 1) / b))
  STREAM_CASES+=("l2stream_${mib}MiB $b $p 65536")
done

declare -A MEDIAN CHECKERR NCUSTATUS

# ---------------------------------------------------------------- (b) correctness
for c in "${GEMM_CASES[@]}"; do
  read -r name m n k of <<<"$c"
  [[ "$name" =~ $ONLY ]] || continue
  log "check $name"
  if ! "$BUILD/gemm_order" "$m" "$n" "$k" "$of" --check --warmup 0 --iters 1 > "$OUT/check_$name.log" 2>&1; then
    cat "$OUT/check_$name.log"
    log "CHECK FAILED for $name: stopping (log copied to $FINAL/check_$name.log)"
    cp "$OUT/check_$name.log" "$OUT/run.log" "$OUT/env.txt" "$FINAL/"
    exit 1
  fi
  CHECKERR[$name]=$(awk '/^rel_fro_error/ {print $2}' "$OUT/check_$name.log")
  log "  rel_fro_error ${CHECKERR[$name]}"
done

# ---------------------------------------------------------------- (c) timing (no profiler)
for c in "${GEMM_CASES[@]}"; do
  read -r name m n k of <<<"$c"
  [[ "$name" =~ $ONLY ]] || continue
  if "$BUILD/gemm_order" "$m" "$n" "$k" "$of" --warmup 3 --iters 20 > "$OUT/time_$name.log" 2>&1; then
    MEDIAN[$name]=$(awk '/^median_us/ {print $2}' "$OUT/time_$name.log")
  else
    MEDIAN[$name]=failed; cat "$OUT/time_$name.log"
  fi
  log "time $name median_us ${MEDIAN[$name]}"
done
for c in "${STREAM_CASES[@]}"; do
  read -r name b p ch <<<"$c"
  [[ "$name" =~ $ONLY ]] || continue
  if "$BUILD/l2_stream" "$b" "$p" "$ch" --warmup 3 --iters 20 > "$OUT/time_$name.log" 2>&1; then
    MEDIAN[$name]=$(awk '/^median_us/ {print $2}' "$OUT/time_$name.log")
  else
    MEDIAN[$name]=failed; cat "$OUT/time_$name.log"
  fi
  log "time $name median_us ${MEDIAN[$name]} ($(awk '/^gbps/ {print $2}' "$OUT/time_$name.log") GB/s)"
done

# ---------------------------------------------------------------- (d) Nsight Compute
METRICS_FULL="lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_hit.sum,lts__t_sectors_op_write.sum,lts__t_sectors_srcunit_ltcfabric.sum,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,launch__grid_size,launch__waves_per_multiprocessor,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,launch__occupancy_limit_blocks,launch__registers_per_thread,launch__shared_mem_per_block_dynamic"
METRICS="$METRICS_FULL"
FELL_BACK=0

# Keeps only the metrics this ncu knows for the GPU (used if the full list is refused).
filter_metrics() {
  local known kept="" m base
  known="$("$NCU" --query-metrics --csv 2>/dev/null; "$NCU" --query-metrics --chip gh100 --csv 2>/dev/null)"
  IFS=',' read -r -a arr <<<"$METRICS_FULL"
  for m in "${arr[@]}"; do
    base="${m%.*}"
    if [[ "$m" == launch__* ]] || grep -q "\"\?${base}\"\?[, ]" <<<"$known"; then kept="${kept:+$kept,}$m"; else log "  ncu: dropping metric $m (not listed by ncu --query-metrics)"; fi
  done
  echo "$kept"
}

ncu_case() { # name kernel-regex cmd...
  local name="$1" kre="$2"; shift 2
  local rep="$OUT/ncu_$name"
  rm -f "$rep.ncu-rep"
  "$NCU" -f -o "$rep" -k "regex:$kre" --launch-skip 0 --launch-count 1 --metrics "$METRICS" "$@" > "$rep.log" 2>&1
  local rc=$?
  if { [ $rc -ne 0 ] || grep -q "==ERROR==" "$rep.log" || [ ! -f "$rep.ncu-rep" ]; } && [ $FELL_BACK -eq 0 ]; then
    log "  ncu failed for $name (rc $rc): $(grep -m1 "==ERROR==" "$rep.log")"
    FELL_BACK=1
    METRICS="$(filter_metrics)"
    log "  retrying with metrics: $METRICS"
    rm -f "$rep.ncu-rep"
    "$NCU" -f -o "$rep" -k "regex:$kre" --launch-skip 0 --launch-count 1 --metrics "$METRICS" "$@" > "$rep.log" 2>&1
    rc=$?
  fi
  if [ -f "$rep.ncu-rep" ]; then
    "$NCU" --import "$rep.ncu-rep" --csv --page raw --print-units base > "$rep.csv" 2>> "$rep.log" ||
      "$NCU" --import "$rep.ncu-rep" --csv --page raw > "$rep.csv" 2>> "$rep.log"
  fi
  if [ -f "$rep.ncu-rep" ] && [ -f "$rep.csv" ] && [ "$(wc -l < "$rep.csv")" -ge 3 ]; then
    NCUSTATUS[$name]=ok
  else
    NCUSTATUS[$name]="failed(rc=$rc)"
    log "  ncu FAILED for $name, see $rep.log:"; tail -5 "$rep.log" | tee -a "$OUT/run.log"
  fi
}

if [ "$SKIP_NCU" = 1 ] || [ -z "$NCU" ]; then
  log "skipping Nsight Compute (SKIP_NCU=$SKIP_NCU, ncu='${NCU}')"
else
  log "profiling with $NCU (default cache flush and clock control: base clocks)"
  for c in "${GEMM_CASES[@]}"; do
    read -r name m n k of <<<"$c"
    [[ "$name" =~ $ONLY ]] || continue
    log "ncu $name"
    ncu_case "$name" gemm_order_kernel "$BUILD/gemm_order" "$m" "$n" "$k" "$of" --warmup 0 --iters 1
  done
  for c in "${STREAM_CASES[@]}"; do
    read -r name b p ch <<<"$c"
    [[ "$name" =~ $ONLY ]] || continue
    log "ncu $name"
    ncu_case "$name" l2_stream_kernel "$BUILD/l2_stream" "$b" "$p" "$ch" --warmup 0 --iters 1
  done
fi

# ---------------------------------------------------------------- (e2) summary
{
  echo "case,kind,m,n,k,order_file,bytes,passes,chunk,median_us,check_rel_fro_error,ncu"
  for c in "${GEMM_CASES[@]}"; do
    read -r name m n k of <<<"$c"
    [[ "$name" =~ $ONLY ]] || continue
    echo "$name,gemm,$m,$n,$k,calibration/orders/$(basename "$of"),,,,${MEDIAN[$name]:-},${CHECKERR[$name]:-},${NCUSTATUS[$name]:-skipped}"
  done
  for c in "${STREAM_CASES[@]}"; do
    read -r name b p ch <<<"$c"
    [[ "$name" =~ $ONLY ]] || continue
    echo "$name,stream,,,,,$b,$p,$ch,${MEDIAN[$name]:-},,${NCUSTATUS[$name]:-skipped}"
  done
} > "$OUT/summary.csv"

# One row per profiled case with just the requested metrics (python3 stdlib only; optional).
if command -v python3 >/dev/null 2>&1 && ls "$OUT"/ncu_*.csv >/dev/null 2>&1; then
  python3 - "$OUT" "$METRICS_FULL" > "$OUT/ncu_metrics.csv" <<'PY' || log "ncu_metrics.csv: extraction failed"
import csv, glob, os, sys
out, metrics = sys.argv[1], sys.argv[2].split(",")
w = csv.writer(sys.stdout, lineterminator="\n")
w.writerow(["case", "kernel"] + metrics + ["units"])
for path in sorted(glob.glob(os.path.join(out, "ncu_*.csv"))):
    if os.path.basename(path) == "ncu_metrics.csv":
        continue
    case = os.path.basename(path)[4:-4]
    rows = list(csv.reader(open(path, newline="")))
    hdr_i = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
    if hdr_i is None or len(rows) < hdr_i + 3:
        w.writerow([case, "NO DATA"]); continue
    hdr, units, data = rows[hdr_i], rows[hdr_i + 1], rows[hdr_i + 2]
    col = {h: i for i, h in enumerate(hdr)}
    vals = [data[col[m]].replace(",", "") if m in col else "" for m in metrics]
    us = ";".join(f"{m}={units[col[m]]}" for m in metrics if m in col and units[col[m]])
    w.writerow([case, data[col["Kernel Name"]]] + vals + [us])
PY
fi

# Pack: a few files only in $FINAL.
cp "$OUT/summary.csv" "$OUT/env.txt" "$FINAL/"
[ -f "$OUT/ncu_metrics.csv" ] && cp "$OUT/ncu_metrics.csv" "$FINAL/"
( cd "$OUT" && ls *.ncu-rep >/dev/null 2>&1 && tar czf "$FINAL/ncu_reps.tar.gz" *.ncu-rep )
( cd "$OUT" && tar czf "$FINAL/results.tar.gz" --exclude='*.ncu-rep' . )
log "done in $(($(date +%s) - T0)) s; outputs in $FINAL: $(cd "$FINAL" && ls | tr '\n' ' ')"
cp "$OUT/run.log" "$FINAL/"
cat "$FINAL/summary.csv"
[ -f "$FINAL/ncu_metrics.csv" ] && cat "$FINAL/ncu_metrics.csv"
exit 0
