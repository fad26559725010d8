#!/usr/bin/env bash
# How far ahead does the project's mma.sync main loop prefetch? gemm_tile.cuh waits for tile kt
# (cp.async.wait_group STAGES-2, __syncthreads) before it issues the copies of tile kt+STAGES-1,
# so a step that waits for its data has STAGES-1 copies in flight, not STAGES. A latency-bound
# decode GEMM then takes about latency / (STAGES-1) per k-step: 2 stages overlap nothing. This
# probe times the FFN's two GEMMs alone (ffn_chain --alone, stream mode) built 2, 3, 4 and 5
# stages deep, at M = 16 and 128 (latency-bound: 112 and 32 blocks) and 4096 (compute-bound).
#   OUT=$OUT bash calibration/prefetch_probe.sh [BINDIR]     (device machine, repository root)
# BINDIR: prebuilt ffn_chain_s2 ... ffn_chain_s5 (calibration/kernels/ffn_chain.cu built with
# -DTILE_STAGES=S, as below); absent: built here.
source calibration/probe_build.sh
BINDIR=${1:-}
LOGS=$(mktemp -d)
echo "stages,m,bm,gemm0_alone_median_us,gemm1_alone_median_us,chain_median_us" > "$OUT/prefetch.csv"
for s in ${STAGES_LIST:-2 3 4 5}; do
  bin="$BINDIR/ffn_chain_s$s"
  if [ -z "$BINDIR" ]; then
    probe_build "ffn_chain_s$s" ffn_chain.cu -lcublas -DTILE_STAGES="$s"
    bin="$BUILD/ffn_chain_s$s"
  fi
  for c in ${CASES:-16:64 128:64 4096:128}; do
    m=${c%%:*}; bm=${c##*:}
    log="$LOGS/s${s}_m${m}.log"
    timeout 120 "$bin" "$m" 4096 14336 stream --bm "$bm" --alone --warmup 3 --iters 20 > "$log" 2>&1
    g0=$(awk '/^gemm0_alone_median_us/ {print $2}' "$log"); g1=$(awk '/^gemm1_alone_median_us/ {print $2}' "$log")
    med=$(awk '/^median_us/ {print $2}' "$log")
    echo "$s,$m,$bm,${g0:-},${g1:-},${med:-}" >> "$OUT/prefetch.csv"
  done
done
tar -C "$LOGS" -czf "$OUT/prefetch_logs.tar.gz" .
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv > "$OUT/env.txt" 2>&1
cat "$OUT/prefetch.csv"
