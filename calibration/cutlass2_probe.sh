#!/usr/bin/env bash
# CUTLASS 2.x (SM80-style mma.sync + cp.async multistage) GEMMs on an H100: checks each
# configuration against cuBLAS once, times every case with CUDA events (L2 flushed before each
# timed launch) and profiles every case's GEMM kernel with Nsight Compute.
#
#   OUT=$OUT bash calibration/cutlass2_probe.sh BIN
#
# BIN is a prebuilt calibration/build/cutlass2_gemm (calibration/kernels/cutlass2_build.sh builds
# it on a machine without a GPU; it needs libcublas.so.13 where it runs). Nothing is compiled here.
# Environment: OUT (default ./out), NCU (tool path), ONLY (an extended regex: only the cases, and
# the checks of the configs, whose name matches), SKIP_NCU=1, TIMEOUT_S (per command, default 120),
# BUDGET_S (default 480: no new Nsight Compute case starts after this many seconds, so that the
# whole run stays inside a 600-second device command and the outputs are always packed),
# PACK (default 1, see below).
#
# Per-case files (names as in run_h100.sh): check_<config>.log, time_<case>.log, ncu_<case>.csv
# (the raw page, base units: header, units, one row for the one profiled launch) with its
# ncu_<case>.log and ncu_<case>.ncu-rep. With PACK=1 they are written to a scratch folder and $OUT
# receives only cases.csv, ncu_metrics.csv (the requested metrics, one row per case), run.log,
# env.txt, results.tar.gz (every per-case file but the reports) and ncu_reps.tar.gz: the device
# runner returns at most 8 files from $OUT. PACK=0 writes the per-case files into $OUT itself.
#
# Case names: c2_<config>_<M>x<N>x<K>. A config whose check fails (or whose check command exits
# non-zero) is skipped in timing and profiling, and the script exits 1 after packing the outputs;
# so does any failed timing.
set -uo pipefail

BIN="${1:-}"
[ -n "$BIN" ] || { echo "usage: OUT=dir $0 BIN   (BIN: the prebuilt cutlass2_gemm)" >&2; exit 2; }
[ -x "$BIN" ] || { echo "cutlass2_probe: '$BIN' is not an executable file" >&2; exit 2; }
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
OUT="${OUT:-./out}"
mkdir -p "$OUT" || exit 2
OUT="$(cd "$OUT" && pwd)"
FINAL="$OUT"
PACK="${PACK:-1}"
[ "$PACK" = 1 ] && OUT="$(mktemp -d "${TMPDIR:-/tmp}/cutlass2_probe.XXXXXX")"
ONLY="${ONLY:-.}"
SKIP_NCU="${SKIP_NCU:-0}"
TIMEOUT_S="${TIMEOUT_S:-120}"
BUDGET_S="${BUDGET_S:-480}"

pick() { # first usable tool among the arguments
  for t in "$@"; do
    if command -v "$t" >/dev/null 2>&1; then command -v "$t"; return 0; fi
    if [ -x "$t" ]; then echo "$t"; return 0; fi
  done
  return 1
}
NCU="$(pick "${NCU:-ncu}" /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu)" || NCU=""
if command -v timeout >/dev/null 2>&1; then TO=(timeout -k 10); else TO=(); fi
limit() { # seconds cmd...: runs cmd with a time limit (when coreutils' timeout exists)
  local s="$1"; shift
  if [ ${#TO[@]} -gt 0 ]; then "${TO[@]}" "$s" "$@"; else "$@"; fi
}
# The binary was linked on another machine: make sure the toolkit's cuBLAS is found.
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/targets/x86_64-linux/lib"

log() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$OUT/run.log"; }
T0=$(date +%s)
elapsed() { echo $(($(date +%s) - T0)); }
FAILED=0

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  echo "bin: $BIN ($(stat -c %s "$BIN") bytes, sha256 $(sha256sum "$BIN" | cut -c1-16))"
  echo; echo "== ldd"; ldd "$BIN" 2>&1 || true
  echo; echo "== nvidia-smi --query-gpu"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit,persistence_mode,mig.mode.current --format=csv 2>&1 || true
  echo; echo "== ncu --version"; if [ -n "$NCU" ]; then "$NCU" --version 2>&1 || true; else echo "ncu not found"; fi
} > "$OUT/env.txt"

# ---------------------------------------------------------------- cases
# "config tile stages shapes..."; shapes are MxNxK.
DECODE="16x14336x4096 16x4096x14336 128x14336x4096"
LARGE="4096x4096x4096 8192x8192x8192"
CONFIGS=(
  "t64x128_s3 64x128x32 3 $DECODE"
  "t64x128_s4 64x128x32 4 $DECODE"
  "t64x128_s5 64x128x32 5 $DECODE"
  "t128x128_s3 128x128x32 3 $LARGE 8192x4096x14336 128x14336x4096"
  "t128x128_s4 128x128x32 4 $LARGE 8192x4096x14336 128x14336x4096"
  "t128x128_s5 128x128x32 5 $LARGE 8192x4096x14336 128x14336x4096"
  "t128x256_s3 128x256x32 3 $LARGE"
)
# M = 200 is no multiple of either tile height, so the check covers the predicated last tile row
# that the decode cases (M = 16, 128 with 64-row tiles) depend on.
CHECK_SHAPE=(200 512 1024)

CASES=()   # "name m n k config tile stages"
for c in "${CONFIGS[@]}"; do
  read -r cfg tile st shapes <<<"$c"
  for s in $shapes; do
    IFS=x read -r m n k <<<"$s"
    CASES+=("c2_${cfg}_${s} $m $n $k $cfg $tile $st")
  done
done

declare -A CHECKERR BAD MEDIAN MINUS NCUSTATUS

# ---------------------------------------------------------------- (a) correctness, once per config
for c in "${CONFIGS[@]}"; do
  read -r cfg _ <<<"$c"
  [[ "$cfg" =~ $ONLY ]] || continue
  log "check $cfg (${CHECK_SHAPE[*]})"
  if limit "$TIMEOUT_S" "$BIN" "${CHECK_SHAPE[@]}" "$cfg" --check --warmup 0 --iters 1 > "$OUT/check_$cfg.log" 2>&1; then
    CHECKERR[$cfg]=$(awk '/^rel_fro_error/ {print $2}' "$OUT/check_$cfg.log")
    log "  rel_fro_error ${CHECKERR[$cfg]}"
  else
    rc=$?
    CHECKERR[$cfg]="FAILED(rc=$rc)"; BAD[$cfg]=1; FAILED=1
    tail -5 "$OUT/check_$cfg.log" | tee -a "$OUT/run.log"
    log "  CHECK FAILED for $cfg (rc $rc; 124/137 = time limit): its cases are skipped"
  fi
done

# ---------------------------------------------------------------- (b) timing (no profiler)
# All timings before any profiling, so that a spent budget costs profiles only.
for c in "${CASES[@]}"; do
  read -r name m n k cfg tile st <<<"$c"
  [[ "$name" =~ $ONLY ]] || continue
  [ -z "${BAD[$cfg]:-}" ] || continue
  if limit "$TIMEOUT_S" "$BIN" "$m" "$n" "$k" "$cfg" --warmup 3 --iters 20 > "$OUT/time_$name.log" 2>&1; then
    MEDIAN[$name]=$(awk '/^median_us/ {print $2}' "$OUT/time_$name.log")
    MINUS[$name]=$(awk '/^min_us/ {print $2}' "$OUT/time_$name.log")
  else
    MEDIAN[$name]="failed(rc=$?)"; FAILED=1; tail -5 "$OUT/time_$name.log" | tee -a "$OUT/run.log"
  fi
  log "time $name median_us ${MEDIAN[$name]} min_us ${MINUS[$name]:-} grid $(awk '/^grid/ {print $2}' "$OUT/time_$name.log")"
done

# ---------------------------------------------------------------- (c) Nsight Compute
# The metric list of run_h100.sh, and its fallback: if ncu refuses the list, keep the metrics
# `ncu --query-metrics` knows for this GPU and retry once.
METRICS_FULL="lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_hit.sum,lts__t_sectors_op_write.sum,lts__t_sectors_srcunit_ltcfabric.sum,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,launch__grid_size,launch__waves_per_multiprocessor,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,launch__occupancy_limit_blocks,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_ltcfabric_op_read.sum,lts__t_sectors_srcunit_ltcfabric_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_write.sum,sm__cycles_elapsed.avg.per_second,dram__cycles_elapsed.avg.per_second"
METRICS="$METRICS_FULL"
FELL_BACK=0
# cutlass::Kernel<GemmKernel>, by its function name ("Kernel", ncu's default name base) or its
# demangled name; the program's only other kernel then is tile::fill_scaled.
KERNEL_RE='(^|::)Kernel(<|$)'

filter_metrics() { # prints the kept list (its log lines go to stderr)
  local known kept="" m base
  known="$("$NCU" --query-metrics --csv 2>/dev/null; "$NCU" --query-metrics --chip gh100 --csv 2>/dev/null)"
  IFS=',' read -r -a arr <<<"$METRICS_FULL"
  for m in "${arr[@]}"; do
    base="${m%%.*}"
    if [[ "$m" == launch__* ]] || grep -q "\"\?${base}\"\?[, ]" <<<"$known"; then kept="${kept:+$kept,}$m"; else log "  ncu: dropping metric $m (not listed by ncu --query-metrics)" >&2; fi
  done
  echo "$kept"
}

ncu_case() { # name cmd...: one launch of the GEMM kernel, clocks and cache control at ncu's defaults
  local name="$1"; shift
  local rep="$OUT/ncu_$name" rc
  rm -f "$rep.ncu-rep"
  limit "$TIMEOUT_S" "$NCU" -f -o "$rep" -k "regex:$KERNEL_RE" --launch-skip 0 --launch-count 1 --metrics "$METRICS" "$@" > "$rep.log" 2>&1
  rc=$?
  if { [ $rc -ne 0 ] || grep -q "==ERROR==" "$rep.log" || [ ! -f "$rep.ncu-rep" ]; } && [ $FELL_BACK -eq 0 ]; then
    log "  ncu failed for $name (rc $rc): $(grep -m1 "==ERROR==" "$rep.log")"
    FELL_BACK=1
    METRICS="$(filter_metrics)"
    log "  retrying with metrics: $METRICS"
    rm -f "$rep.ncu-rep"
    limit "$TIMEOUT_S" "$NCU" -f -o "$rep" -k "regex:$KERNEL_RE" --launch-skip 0 --launch-count 1 --metrics "$METRICS" "$@" > "$rep.log" 2>&1
    rc=$?
  fi
  if [ -f "$rep.ncu-rep" ]; then
    limit "$TIMEOUT_S" "$NCU" --import "$rep.ncu-rep" --csv --page raw --print-units base > "$rep.csv" 2>> "$rep.log" ||
      limit "$TIMEOUT_S" "$NCU" --import "$rep.ncu-rep" --csv --page raw > "$rep.csv" 2>> "$rep.log"
  fi
  if [ -f "$rep.csv" ] && [ "$(wc -l < "$rep.csv")" -ge 3 ]; then   # header, units, the kernel
    NCUSTATUS[$name]=ok
  else
    NCUSTATUS[$name]="failed(rc=$rc)"; FAILED=1
    log "  ncu FAILED for $name, see ncu_$name.log:"; tail -5 "$rep.log" | tee -a "$OUT/run.log"
  fi
}

if [ "$SKIP_NCU" = 1 ] || [ -z "$NCU" ]; then
  log "skipping Nsight Compute (SKIP_NCU=$SKIP_NCU, ncu='${NCU}')"
else
  log "profiling with $NCU (default cache flush and clock control)"
  for c in "${CASES[@]}"; do
    read -r name m n k cfg tile st <<<"$c"
    [[ "$name" =~ $ONLY ]] || continue
    [ -z "${BAD[$cfg]:-}" ] || { NCUSTATUS[$name]="skipped(check failed)"; continue; }
    if [ "$(elapsed)" -ge "$BUDGET_S" ]; then
      NCUSTATUS[$name]="skipped(budget)"; log "ncu $name skipped: $(elapsed) s elapsed >= BUDGET_S=$BUDGET_S"; continue
    fi
    log "ncu $name"
    ncu_case "$name" "$BIN" "$m" "$n" "$k" "$cfg" --launches 1 --warmup 0 --iters 1
  done
fi

# ---------------------------------------------------------------- (d) summary and packing
{
  echo "case,m,n,k,config,tile,stages,median_us,min_us,rel_fro_error"
  for c in "${CASES[@]}"; do
    read -r name m n k cfg tile st <<<"$c"
    [[ "$name" =~ $ONLY ]] || continue
    echo "$name,$m,$n,$k,$cfg,$tile,$st,${MEDIAN[$name]:-},${MINUS[$name]:-},${CHECKERR[$cfg]:-}"
  done
} > "$OUT/cases.csv"
for c in "${CASES[@]}"; do
  read -r name _ <<<"$c"
  [[ "$name" =~ $ONLY ]] && log "ncu_status $name ${NCUSTATUS[$name]:-skipped}"
done

# One row per case with just the requested metrics (python3 standard library; optional).
if command -v python3 >/dev/null 2>&1 && ls "$OUT"/ncu_c2_*.csv >/dev/null 2>&1; then
  python3 - "$OUT" "$METRICS_FULL" > "$OUT/ncu_metrics.csv" <<'PY' || log "ncu_metrics.csv: extraction failed"
import csv, glob, os, sys
out, metrics = sys.argv[1], sys.argv[2].split(",")
w = csv.writer(sys.stdout, lineterminator="\n")
w.writerow(["case", "kernel"] + metrics + ["units"])
for path in sorted(glob.glob(os.path.join(out, "ncu_c2_*.csv"))):
    case = os.path.basename(path)[len("ncu_"):-len(".csv")]
    rows = list(csv.reader(open(path, newline="")))
    hdr_i = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
    if hdr_i is None or len(rows) < hdr_i + 3:
        w.writerow([case, "NO DATA"])
        continue
    hdr, units = rows[hdr_i], rows[hdr_i + 1]
    col = {h: i for i, h in enumerate(hdr)}
    us = ";".join(f"{m}={units[col[m]]}" for m in metrics if m in col and units[col[m]])
    for data in (r for r in rows[hdr_i + 2:] if len(r) == len(hdr)):
        w.writerow([case, data[col["Kernel Name"]][:80]] + [data[col[m]].replace(",", "") if m in col else "" for m in metrics] + [us])
PY
fi

log "done in $(elapsed) s"
if [ "$PACK" = 1 ]; then
  cp "$OUT/cases.csv" "$OUT/env.txt" "$FINAL/"
  [ -f "$OUT/ncu_metrics.csv" ] && cp "$OUT/ncu_metrics.csv" "$FINAL/"
  ( cd "$OUT" && ls ./*.ncu-rep >/dev/null 2>&1 && tar czf "$FINAL/ncu_reps.tar.gz" ./*.ncu-rep )
  ( cd "$OUT" && tar czf "$FINAL/results.tar.gz" --exclude='*.ncu-rep' . )
  log "outputs in $FINAL: $(cd "$FINAL" && ls | tr '\n' ' ')run.log"
  cp "$OUT/run.log" "$FINAL/"
fi
cat "$FINAL/cases.csv"
if [ "$FAILED" != 0 ]; then echo "cutlass2_probe: some checks, timings or profiles FAILED (see run.log)" >&2; exit 1; fi
exit 0
