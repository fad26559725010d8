#!/usr/bin/env bash
# Calibration measurements on an H100: builds the kernels, checks every GEMM and FFN chain
# against cuBLAS, times every case with CUDA events, runs the L2 near/far and DRAM probes, and
# profiles every case's kernels with Nsight Compute.
#
#   bash calibration/run_h100.sh            # from anywhere; outputs go to $OUT (default ./out)
#
# Environment: OUT (output folder), NVCC, NCU (tool paths), ONLY (an extended regex: run only the
# cases whose name matches; probe cases are l2probe_nearfar and dram_bw), SKIP_NCU=1 (no
# profiling), PROBE_SMS (SMs the near/far probe visits: auto, or a list such as $(seq -s, 0 131);
# all 132 take about 10 s), BUDGET_S (default 480: no new Nsight Compute case starts after this many seconds,
# so the outputs are always packed).
#
# $OUT receives at most 7 files (some runners return only a few files): summary.csv, env.txt,
# run.log, ncu_metrics.csv (the requested metrics, one row per profiled kernel: case, kernel,
# kernel_index, metrics..., base units), probe_summary.txt (L2 near/far and DRAM bandwidth
# probes), results.tar.gz (every per-case file: ncu_<case>.csv raw-page CSVs, check/time/ncu
# logs, probe logs and per-line latencies, build logs) and ncu_reps.tar.gz (the .ncu-rep reports).
#
# A case whose check fails (or whose program exits non-zero or times out) is reported as failed
# in summary.csv, skipped in the later phases, and the script exits 1 after packing the outputs.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
OUT="${OUT:-./out}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
FINAL="$OUT"
OUT="$(mktemp -d "${TMPDIR:-/tmp}/calib_h100.XXXXXX")"   # per-case files; packed into $FINAL at the end
BUILD="$ROOT/calibration/build"
ORD="$ROOT/calibration/orders"
ONLY="${ONLY:-.}"
SKIP_NCU="${SKIP_NCU:-0}"
BUDGET_S="${BUDGET_S:-480}"

pick() { # first usable tool among the arguments
  for t in "$@"; do
    if command -v "$t" >/dev/null 2>&1; then command -v "$t"; return 0; fi
    if [ -x "$t" ]; then echo "$t"; return 0; fi
  done
  return 1
}
NVCC="$(pick "${NVCC:-nvcc}" /usr/local/cuda/bin/nvcc)" || { echo "run_h100: nvcc not found" >&2; exit 1; }
NCU="$(pick "${NCU:-ncu}" /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu)" || NCU=""
if command -v timeout >/dev/null 2>&1; then TO=(timeout -k 10); else TO=(); fi
limit() { # seconds cmd...: runs cmd with a time limit (when coreutils' timeout exists)
  local s="$1"; shift
  if [ ${#TO[@]} -gt 0 ]; then "${TO[@]}" "$s" "$@"; else "$@"; fi
}

log() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$OUT/run.log"; }
T0=$(date +%s)
elapsed() { echo $(($(date +%s) - T0)); }
FAILED=0

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

# ---------------------------------------------------------------- (a) build (four programs in parallel)
mkdir -p "$BUILD"
log "building with $NVCC"
declare -A BUILT
build() { # program [libs...]
  local p="$1"; shift
  "$NVCC" -O3 -arch=sm_90 -Xptxas -v -o "$BUILD/$p" "calibration/kernels/$p.cu" "$@" > "$OUT/build_$p.log" 2>&1
}
build gemm_order -lcublas & PID_GEMM=$!
build ffn_chain -lcublas & PID_FFN=$!
build l2_stream -lcublas & PID_STREAM=$!
build l2_probe & PID_PROBE=$!
for pp in "gemm_order $PID_GEMM" "ffn_chain $PID_FFN" "l2_stream $PID_STREAM" "l2_probe $PID_PROBE"; do
  read -r p pid <<<"$pp"
  if wait "$pid"; then
    BUILT[$p]=1
  else
    BUILT[$p]=0; FAILED=1
    cat "$OUT/build_$p.log"
    log "BUILD FAILED: $p (its cases are skipped; log in results.tar.gz)"
  fi
done
# ptxas resources of every kernel: "kernel: registers, shared memory, spills" (for the YAMLs).
for p in gemm_order ffn_chain l2_stream l2_probe; do
  awk -v prog="$p" '
    /Compiling entry function/ { f = $0; sub(/.*function .?/, "", f); sub(/.? for .*/, "", f) }
    /spill stores/ { sp = $0; sub(/^ */, "", sp) }
    /Used [0-9]+ registers/ { u = $0; sub(/.*Used/, "Used", u); print "  ptxas " prog ": " f ": " u "; " sp }
  ' "$OUT/build_$p.log" 2>/dev/null | tee -a "$OUT/run.log" > /dev/null
done
log "ptxas: $(grep -c "  ptxas " "$OUT/run.log") kernel resource lines in run.log"

# ---------------------------------------------------------------- cases
# GEMM case: "name M N K orderfile bm"
GEMM_CASES=()
for s in 4096 8192; do
  g=$((s / 128))x$((s / 128))
  for o in row column swizzle3 grouped8 hilbert; do
    GEMM_CASES+=("gemm_${s}x${s}x${s}_${o} $s $s $s $ORD/${o}_${g}.order 128")
  done
done
for o in row grouped8; do
  GEMM_CASES+=("gemm_8192x14336x4096_${o} 8192 14336 4096 $ORD/${o}_64x112.order 128")
done
for o in row column swizzle3 grouped8 hilbert; do
  GEMM_CASES+=("gemm_8192x4096x14336_${o} 8192 4096 14336 $ORD/${o}_64x32.order 128")
  GEMM_CASES+=("gemm_2048x8192x8192_${o} 2048 8192 8192 $ORD/${o}_16x64.order 128")
done
for m in 16 32 64 128; do   # decode: 64-row tiles, grid ceil(M/64) x 112
  for o in row grouped8; do
    GEMM_CASES+=("gemm_${m}x14336x4096_${o} $m 14336 4096 $ORD/${o}_$(((m + 63) / 64))x112.order 64")
  done
done
# FFN chain case: "name M D F mode bm [extra flags]" (non-gated, Llama3-8B sizes)
FFN_CASES=()
for mb in "16 64" "4096 128"; do
  read -r m bm <<<"$mb"
  for mode in stream rowsync dataflow; do
    FFN_CASES+=("ffn_${m}_${mode} $m 4096 14336 $mode $bm")
  done
  FFN_CASES+=("ffn_${m}_dataflow_rowwait $m 4096 14336 dataflow $bm --df-wait row")
done
# L2 stream case: "name bytes passes chunk"; passes = ceil(1 GiB / S)
STREAM_CASES=()
GIB=$((1024 * 1024 * 1024))
for mib in 8 16 24 32 40 48 56 64 96 128; do
  b=$((mib * 1024 * 1024))
  p=$(((GIB + b - 1) / b))
  STREAM_CASES+=("l2stream_${mib}MiB $b $p 65536")
done

declare -A MEDIAN MINUS CHECKERR HCHECKERR NCUSTATUS ALONE0 ALONE1 BAD

# ---------------------------------------------------------------- (b) correctness
# Marks a case whose check failed: it is skipped in timing and profiling, and the run exits 1.
check_failed() { # name rc
  CHECKERR[$1]="FAILED(rc=$2)"; BAD[$1]="check failed"; FAILED=1
  tail -5 "$OUT/check_$1.log" | tee -a "$OUT/run.log"
  log "  CHECK FAILED for $1 (rc $2; 3 = watchdog, 124/137 = time limit): skipped in timing and profiling"
}
for c in "${GEMM_CASES[@]}"; do
  read -r name m n k of bm <<<"$c"
  [[ "$name" =~ $ONLY ]] || continue
  if [ "${BUILT[gemm_order]}" != 1 ]; then BAD[$name]="build failed"; continue; fi
  log "check $name"
  if limit 180 "$BUILD/gemm_order" "$m" "$n" "$k" "$of" --bm "$bm" --check --warmup 0 --iters 1 > "$OUT/check_$name.log" 2>&1; then
    CHECKERR[$name]=$(awk '/^rel_fro_error/ {print $2}' "$OUT/check_$name.log")
    log "  rel_fro_error ${CHECKERR[$name]}"
  else
    check_failed "$name" $?
  fi
done
for c in "${FFN_CASES[@]}"; do
  read -r name m d f mode bm extra <<<"$c"
  [[ "$name" =~ $ONLY ]] || continue
  if [ "${BUILT[ffn_chain]}" != 1 ]; then BAD[$name]="build failed"; continue; fi
  log "check $name"
  # shellcheck disable=SC2086
  if limit 180 "$BUILD/ffn_chain" "$m" "$d" "$f" "$mode" --bm "$bm" $extra --check --warmup 0 --iters 1 > "$OUT/check_$name.log" 2>&1; then
    CHECKERR[$name]=$(awk '/^rel_fro_error/ {print $2}' "$OUT/check_$name.log")
    HCHECKERR[$name]=$(awk '/^h_rel_fro_error/ {print $2}' "$OUT/check_$name.log")
    log "  rel_fro_error Y ${CHECKERR[$name]}, H ${HCHECKERR[$name]}"
  else
    check_failed "$name" $?
  fi
done

# ---------------------------------------------------------------- (c) timing (no profiler)
for c in "${GEMM_CASES[@]}"; do
  read -r name m n k of bm <<<"$c"
  [[ "$name" =~ $ONLY ]] || continue
  [ -z "${BAD[$name]:-}" ] || continue
  if limit 120 "$BUILD/gemm_order" "$m" "$n" "$k" "$of" --bm "$bm" --warmup 3 --iters 20 > "$OUT/time_$name.log" 2>&1; then
    MEDIAN[$name]=$(awk '/^median_us/ {print $2}' "$OUT/time_$name.log")
    MINUS[$name]=$(awk '/^min_us/ {print $2}' "$OUT/time_$name.log")
  else
    MEDIAN[$name]=failed; FAILED=1; tail -5 "$OUT/time_$name.log" | tee -a "$OUT/run.log"
  fi
  log "time $name median_us ${MEDIAN[$name]}"
done
for c in "${FFN_CASES[@]}"; do
  read -r name m d f mode bm extra <<<"$c"
  [[ "$name" =~ $ONLY ]] || continue
  [ -z "${BAD[$name]:-}" ] || continue
  al=""; [ "$mode" = stream ] && al="--alone"
  # shellcheck disable=SC2086
  if limit 120 "$BUILD/ffn_chain" "$m" "$d" "$f" "$mode" --bm "$bm" $extra --warmup 5 --iters 50 $al > "$OUT/time_$name.log" 2>&1; then
    MEDIAN[$name]=$(awk '/^median_us/ {print $2}' "$OUT/time_$name.log")
    MINUS[$name]=$(awk '/^min_us/ {print $2}' "$OUT/time_$name.log")
    ALONE0[$name]=$(awk '/^gemm0_alone_median_us/ {print $2}' "$OUT/time_$name.log")
    ALONE1[$name]=$(awk '/^gemm1_alone_median_us/ {print $2}' "$OUT/time_$name.log")
  else
    MEDIAN[$name]=failed; FAILED=1; tail -5 "$OUT/time_$name.log" | tee -a "$OUT/run.log"
  fi
  log "time $name median_us ${MEDIAN[$name]}${ALONE0[$name]:+ (gemm0 alone ${ALONE0[$name]}, gemm1 alone ${ALONE1[$name]:-})}"
done
for c in "${STREAM_CASES[@]}"; do
  read -r name b p ch <<<"$c"
  [[ "$name" =~ $ONLY ]] || continue
  [ "${BUILT[l2_stream]}" = 1 ] || { BAD[$name]="build failed"; continue; }
  if limit 120 "$BUILD/l2_stream" "$b" "$p" "$ch" --warmup 3 --iters 20 > "$OUT/time_$name.log" 2>&1; then
    MEDIAN[$name]=$(awk '/^median_us/ {print $2}' "$OUT/time_$name.log")
    MINUS[$name]=$(awk '/^min_us/ {print $2}' "$OUT/time_$name.log")
  else
    MEDIAN[$name]=failed; FAILED=1; tail -5 "$OUT/time_$name.log" | tee -a "$OUT/run.log"
  fi
  log "time $name median_us ${MEDIAN[$name]} ($(awk '/^gbps/ {print $2}' "$OUT/time_$name.log") GB/s)"
done

# ---------------------------------------------------------------- (c2) probes (no profiler)
echo "# l2_probe output (per-SM histograms: probe_l2probe_nearfar.log, per-line latencies: l2probe_nearfar_lines.csv, both in results.tar.gz)" > "$OUT/probe_summary.txt"
if [ "${BUILT[l2_probe]}" = 1 ]; then
  if [[ l2probe_nearfar =~ $ONLY ]]; then
    log "probe l2probe_nearfar (L2 near/far latency per SM)"
    if limit 120 "$BUILD/l2_probe" --skip-dram --sms "${PROBE_SMS:-auto}" --csv "$OUT/l2probe_nearfar_lines.csv" > "$OUT/probe_l2probe_nearfar.log" 2>&1; then
      grep -v "^  hist" "$OUT/probe_l2probe_nearfar.log" | tee -a "$OUT/probe_summary.txt" | grep -E "pass 0" | tee -a "$OUT/run.log" > /dev/null
    else
      rc=$?; FAILED=1; log "  probe l2probe_nearfar FAILED (rc $rc)"; tail -5 "$OUT/probe_l2probe_nearfar.log" | tee -a "$OUT/run.log"
      echo "l2probe_nearfar FAILED; see probe_l2probe_nearfar.log in results.tar.gz" >> "$OUT/probe_summary.txt"
    fi
  fi
  if [[ dram_bw =~ $ONLY ]]; then
    log "probe dram_bw (2 GiB read / write / copy)"
    if limit 120 "$BUILD/l2_probe" --skip-nearfar > "$OUT/probe_dram_bw.log" 2>&1; then
      tee -a "$OUT/probe_summary.txt" < "$OUT/probe_dram_bw.log" | grep "^dram_" | tee -a "$OUT/run.log" > /dev/null
    else
      rc=$?; FAILED=1; log "  probe dram_bw FAILED (rc $rc)"; tail -5 "$OUT/probe_dram_bw.log" | tee -a "$OUT/run.log"
      echo "dram_bw FAILED; see probe_dram_bw.log in results.tar.gz" >> "$OUT/probe_summary.txt"
    fi
  fi
fi

# ---------------------------------------------------------------- (d) Nsight Compute
METRICS_FULL="lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_hit.sum,lts__t_sectors_op_write.sum,lts__t_sectors_srcunit_ltcfabric.sum,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,launch__grid_size,launch__waves_per_multiprocessor,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,launch__occupancy_limit_blocks,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_ltcfabric_op_read.sum,lts__t_sectors_srcunit_ltcfabric_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_write.sum,sm__cycles_elapsed.avg.per_second,dram__cycles_elapsed.avg.per_second"
METRICS="$METRICS_FULL"
FELL_BACK=0

# Keeps only the metrics this ncu knows for the GPU (used if the full list is refused).
filter_metrics() {
  local known kept="" m base
  known="$("$NCU" --query-metrics --csv 2>/dev/null; "$NCU" --query-metrics --chip gh100 --csv 2>/dev/null)"
  IFS=',' read -r -a arr <<<"$METRICS_FULL"
  for m in "${arr[@]}"; do
    base="${m%%.*}"
    if [[ "$m" == launch__* ]] || grep -q "\"\?${base}\"\?[, ]" <<<"$known"; then kept="${kept:+$kept,}$m"; else log "  ncu: dropping metric $m (not listed by ncu --query-metrics)"; fi
  done
  echo "$kept"
}

ncu_case() { # name kernel-regex launch-count cmd...
  local name="$1" kre="$2" cnt="$3"; shift 3
  local rep="$OUT/ncu_$name"
  rm -f "$rep.ncu-rep"
  limit 240 "$NCU" -f -o "$rep" -k "regex:$kre" --launch-skip 0 --launch-count "$cnt" --metrics "$METRICS" "$@" > "$rep.log" 2>&1
  local rc=$?
  if { [ $rc -ne 0 ] || grep -q "==ERROR==" "$rep.log" || [ ! -f "$rep.ncu-rep" ]; } && [ $FELL_BACK -eq 0 ]; then
    log "  ncu failed for $name (rc $rc): $(grep -m1 "==ERROR==" "$rep.log")"
    FELL_BACK=1
    METRICS="$(filter_metrics)"
    log "  retrying with metrics: $METRICS"
    rm -f "$rep.ncu-rep"
    limit 240 "$NCU" -f -o "$rep" -k "regex:$kre" --launch-skip 0 --launch-count "$cnt" --metrics "$METRICS" "$@" > "$rep.log" 2>&1
    rc=$?
  fi
  if [ -f "$rep.ncu-rep" ]; then
    "$NCU" --import "$rep.ncu-rep" --csv --page raw --print-units base > "$rep.csv" 2>> "$rep.log" ||
      "$NCU" --import "$rep.ncu-rep" --csv --page raw > "$rep.csv" 2>> "$rep.log"
  fi
  # header + units + one row per profiled kernel
  if [ -f "$rep.ncu-rep" ] && [ -f "$rep.csv" ] && [ "$(wc -l < "$rep.csv")" -ge $((2 + cnt)) ]; then
    NCUSTATUS[$name]=ok
  elif [ -f "$rep.csv" ] && [ "$(wc -l < "$rep.csv")" -ge 3 ]; then
    NCUSTATUS[$name]="partial($(($(wc -l < "$rep.csv") - 2))of$cnt)"
    log "  ncu PARTIAL for $name: $(($(wc -l < "$rep.csv") - 2)) of $cnt kernels, see $rep.log"
  else
    NCUSTATUS[$name]="failed(rc=$rc)"
    log "  ncu FAILED for $name, see $rep.log:"; tail -5 "$rep.log" | tee -a "$OUT/run.log"
  fi
}

budget_ok() { # name: false (and status set) once the time budget is spent
  if [ "$(elapsed)" -ge "$BUDGET_S" ]; then
    NCUSTATUS[$1]="skipped(budget)"
    log "ncu $1 skipped: $(elapsed) s elapsed >= BUDGET_S=$BUDGET_S"
    return 1
  fi
}

if [ "$SKIP_NCU" = 1 ] || [ -z "$NCU" ]; then
  log "skipping Nsight Compute (SKIP_NCU=$SKIP_NCU, ncu='${NCU}')"
else
  log "profiling with $NCU (default cache flush and clock control: base clocks)"
  for c in "${GEMM_CASES[@]}"; do
    read -r name m n k of bm <<<"$c"
    [[ "$name" =~ $ONLY ]] || continue
    [ -z "${BAD[$name]:-}" ] || { NCUSTATUS[$name]="skipped(${BAD[$name]})"; continue; }
    budget_ok "$name" || continue
    log "ncu $name"
    ncu_case "$name" '.*gemm_order_kernel.*' 1 "$BUILD/gemm_order" "$m" "$n" "$k" "$of" --bm "$bm" --warmup 0 --iters 1
  done
  # FFN chains: both kernels of stream and rowsync (ncu serialises kernels in launch order: the
  # producer runs to completion first, so the rowsync consumer's counters are already satisfied
  # and it does not spin; its profile is that of a consumer that never waits), the one fused
  # kernel of dataflow. The CuSync wait kernel is not profiled.
  for c in "${FFN_CASES[@]}"; do
    read -r name m d f mode bm extra <<<"$c"
    [[ "$name" =~ $ONLY ]] || continue
    [ -z "${BAD[$name]:-}" ] || { NCUSTATUS[$name]="skipped(${BAD[$name]})"; continue; }
    budget_ok "$name" || continue
    log "ncu $name"
    if [ "$mode" = dataflow ]; then kre='.*ffn_dataflow_kernel.*'; cnt=1; else kre='.*ffn_gemm[01]_kernel.*'; cnt=2; fi
    # shellcheck disable=SC2086
    ncu_case "$name" "$kre" "$cnt" "$BUILD/ffn_chain" "$m" "$d" "$f" "$mode" --bm "$bm" $extra --warmup 0 --iters 1
  done
  for c in "${STREAM_CASES[@]}"; do
    read -r name b p ch <<<"$c"
    [[ "$name" =~ $ONLY ]] || continue
    [ -z "${BAD[$name]:-}" ] || { NCUSTATUS[$name]="skipped(${BAD[$name]})"; continue; }
    budget_ok "$name" || continue
    log "ncu $name"
    ncu_case "$name" '.*l2_stream_kernel.*' 1 "$BUILD/l2_stream" "$b" "$p" "$ch" --warmup 0 --iters 1
  done
fi

# ---------------------------------------------------------------- (e2) summary
# Columns up to `ncu` are those of the first run; later ones are appended.
{
  echo "case,kind,m,n,k,order_file,bytes,passes,chunk,median_us,check_rel_fro_error,ncu,bm,mode,d,f,min_us,h_check_rel_fro_error,gemm0_alone_median_us,gemm1_alone_median_us"
  for c in "${GEMM_CASES[@]}"; do
    read -r name m n k of bm <<<"$c"
    [[ "$name" =~ $ONLY ]] || continue
    echo "$name,gemm,$m,$n,$k,calibration/orders/$(basename "$of"),,,,${MEDIAN[$name]:-},${CHECKERR[$name]:-},${NCUSTATUS[$name]:-skipped},$bm,,,,${MINUS[$name]:-},,,"
  done
  for c in "${FFN_CASES[@]}"; do
    read -r name m d f mode bm extra <<<"$c"
    [[ "$name" =~ $ONLY ]] || continue
    md="$mode"; [ -n "$extra" ] && md="$mode $extra"
    echo "$name,ffn,$m,,,,,,,${MEDIAN[$name]:-},${CHECKERR[$name]:-},${NCUSTATUS[$name]:-skipped},$bm,$md,$d,$f,${MINUS[$name]:-},${HCHECKERR[$name]:-},${ALONE0[$name]:-},${ALONE1[$name]:-}"
  done
  for c in "${STREAM_CASES[@]}"; do
    read -r name b p ch <<<"$c"
    [[ "$name" =~ $ONLY ]] || continue
    echo "$name,stream,,,,,$b,$p,$ch,${MEDIAN[$name]:-},,${NCUSTATUS[$name]:-skipped},,,,,${MINUS[$name]:-},,,"
  done
} > "$OUT/summary.csv"

# One row per profiled kernel with just the requested metrics (python3 stdlib only; optional).
if command -v python3 >/dev/null 2>&1 && ls "$OUT"/ncu_*.csv >/dev/null 2>&1; then
  python3 - "$OUT" "$METRICS_FULL" > "$OUT/ncu_metrics.csv" <<'PY' || log "ncu_metrics.csv: extraction failed"
import csv, glob, os, sys
out, metrics = sys.argv[1], sys.argv[2].split(",")
w = csv.writer(sys.stdout, lineterminator="\n")
w.writerow(["case", "kernel", "kernel_index"] + metrics + ["units"])
for path in sorted(glob.glob(os.path.join(out, "ncu_*.csv"))):
    if os.path.basename(path) == "ncu_metrics.csv":
        continue
    case = os.path.basename(path)[4:-4]
    rows = list(csv.reader(open(path, newline="")))
    hdr_i = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
    if hdr_i is None or len(rows) < hdr_i + 3:
        w.writerow([case, "NO DATA", ""]); continue
    hdr, units = rows[hdr_i], rows[hdr_i + 1]
    col = {h: i for i, h in enumerate(hdr)}
    us = ";".join(f"{m}={units[col[m]]}" for m in metrics if m in col and units[col[m]])
    for ki, data in enumerate(r for r in rows[hdr_i + 2:] if len(r) == len(hdr)):
        vals = [data[col[m]].replace(",", "") if m in col else "" for m in metrics]
        w.writerow([case, data[col["Kernel Name"]], ki] + vals + [us])
PY
fi

# Pack: a few files only in $FINAL.
log "done in $(elapsed) s"
cp "$OUT/summary.csv" "$OUT/env.txt" "$OUT/probe_summary.txt" "$FINAL/"
[ -f "$OUT/ncu_metrics.csv" ] && cp "$OUT/ncu_metrics.csv" "$FINAL/"
( cd "$OUT" && ls *.ncu-rep >/dev/null 2>&1 && tar czf "$FINAL/ncu_reps.tar.gz" *.ncu-rep )
( cd "$OUT" && tar czf "$FINAL/results.tar.gz" --exclude='*.ncu-rep' . )
log "outputs in $FINAL: $(cd "$FINAL" && ls | tr '\n' ' ')"
cp "$OUT/run.log" "$FINAL/"
cat "$FINAL/summary.csv"
cat "$FINAL/probe_summary.txt"
[ -f "$FINAL/ncu_metrics.csv" ] && cat "$FINAL/ncu_metrics.csv"
if [ "$FAILED" != 0 ]; then echo "run_h100: some cases FAILED (see summary.csv and run.log)" >&2; exit 1; fi
exit 0
