#!/usr/bin/env bash
# Where does a lone persistent program's k-step lose its time? The noflat persistent Triton
# matmul (one program per SM, 3 stages) takes 525-578 ns per 128x128x64 k-step on a loaded H200
# whatever the clock or K (measurements/h200/clock_steady/k_sweep), the simulator 435-447 ns.
# One device call, four parts, everything into $OUT:
#   steady.csv  clock_steady_probe.py on the noflat kernel with 132, 66 and 33 programs, with 4
#               stages, and the GROUP_M 1 form on 33 (does the step shrink as the load goes?)
#   loaded_latency.csv  loaded_latency_probe.sh's `l2` and `shared` sweeps (a pointer chase through lines
#               the streaming SMs also read, against lines of its own)
#   stall.csv   Nsight Compute's warp-state, scheduler and memory sections (details page) of the
#               noflat and flattened persistent kernels, the two-block grouped(8) kernel and two
#               decode kernels, L2 flushed before each (--cache-control all), clocks left alone
#   source.csv  the same run's per-SASS-instruction stall samples of those kernels (source page)
#   kernels.tar.gz  Triton's compiled TTGIR and PTX of every kernel run (the loop's waits)
#   probes.tar.gz   the probes' other outputs (samples, launches, logs, measure.py's case listing)
#
#   OUT=DIR bash calibration/production/run_lone_wait.sh      (device machine, repository root)
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)"
W="$(mktemp -d)"
export TRITON_CACHE_DIR="$W/triton_cache"
PY=python3
NCU="$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)"
log() { echo "[$(date +%T)] $*" | tee -a "$OUT/run.log"; }
{ nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv; "$NCU" --version; } > "$OUT/env.txt" 2>&1

N=pmm_sq4096_t128x128_g8_p132_noflat
log "steady"
$PY "$ROOT/calibration/production/clock_steady_probe.py" --out "$W/steady" \
  --cases "$N,$N@programs=66,$N@programs=33,$N@stages=4,$N@programs=33@stages=4,pmm_sq4096_t128x128_g1_p132_noflat@programs=33" \
  > "$W/steady.log" 2>&1 || log "steady rc $?"
cat "$W/steady/steady.csv" | tee "$OUT/steady.csv"

log "latency"
mkdir -p "$W/latency"
(cd "$ROOT" && SWEEPS="l2 shared" OUT="$W/latency" bash calibration/loaded_latency_probe.sh) > "$W/latency.log" 2>&1 || log "latency rc $?"
cp "$W/latency/loaded_latency.csv" "$OUT/" 2>/dev/null; tail -45 "$W/latency.log"

log "ncu"
MATCH='^(pmm_sq4096_t128x128_g8_p132(_noflat)?|pmm_sq4096_t128x128_g1_p132_noflat|mm_sq4096_m4096_t128x128_grouped8_p|mm_l8b_(down|up)_m16_t128x128_column)$'
(cd "$ROOT/calibration/production" && timeout -k 10 300 "$NCU" --profile-from-start off --clock-control none --cache-control all \
  --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section SpeedOfLight \
  --section SourceCounters --import-source no -f -o "$W/stall" \
  $PY measure.py profile --sets persistent,decode --match "$MATCH" --out "$W/prof") > "$W/ncu.log" 2>&1 || log "ncu rc $?"
if [ -f "$W/stall.ncu-rep" ]; then
  "$NCU" --import "$W/stall.ncu-rep" --csv --page details > "$OUT/stall.csv" 2>> "$W/ncu.log"
  "$NCU" --import "$W/stall.ncu-rep" --csv --page source --print-source sass > "$W/source.csv" 2>> "$W/ncu.log" \
    && gzip -c "$W/source.csv" > "$OUT/source.csv.gz"
fi

log "kernels"
(cd "$W" && find triton_cache \( -name '*.ttgir' -o -name '*.ptx' -o -name '*.json' \) | tar czf "$OUT/kernels.tar.gz" -T -)
(cd "$W" && tar czf "$OUT/probes.tar.gz" steady latency prof steady.log latency.log ncu.log 2>/dev/null)
log "done"
