#!/usr/bin/env bash
# The SM clock the project's own mma.sync GEMMs ran at when summary.csv timed them. Their CUDA
# events (gemm_order --warmup 3 --iters 20, back to back, no flush) were taken to run at the boost
# clock; Nsight Compute's runs of the same kernels record ~1430-1460 MHz. Row and column orders
# of 8192^3 take 15% longer than grouped under the events, 1% longer under Nsight Compute: a
# power cap that lowers the clock more for the orders that move more data would do that. This
# probe repeats the summary's timing command while nvidia-smi samples the SM clock and the
# board's draw every 10 ms, then the same command with 200 iterations (the steady state).
#   OUT=$OUT bash calibration/clock_own_probe.sh [GEMM_ORDER_BIN]   (device machine, repo root)
source calibration/probe_build.sh
BIN=${1:-}
if [ -z "$BIN" ]; then probe_build gemm_order gemm_order.cu -lcublas; BIN="$BUILD/gemm_order"; fi
ORD=calibration/orders
CASES=(
  "gemm_8192x8192x8192_row 8192 8192 8192 row_64x64 128"
  "gemm_8192x8192x8192_grouped8 8192 8192 8192 grouped8_64x64 128"
  "gemm_8192x8192x8192_column 8192 8192 8192 column_64x64 128"
  "gemm_8192x4096x14336_row 8192 4096 14336 row_64x32 128"
  "gemm_8192x4096x14336_grouped8 8192 4096 14336 grouped8_64x32 128"
  "gemm_4096x4096x4096_row 4096 4096 4096 row_32x32 128"
  "gemm_4096x4096x4096_grouped8 4096 4096 4096 grouped8_32x32 128"
  "gemm_16x14336x4096_row 16 14336 4096 row_1x112 64"
)
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader,nounits -lms 10 \
  > "$OUT/smi_samples.csv" 2>&1 &
SMI=$!
sleep 2
echo "case,iters,start_epoch_ms,end_epoch_ms,median_us,min_us" > "$OUT/clock_own.csv"
for iters in 20 200; do
  for c in "${CASES[@]}"; do
    read -r name m n k of bm <<<"$c"
    t0=$(date +%s%3N)
    timeout 120 "$BIN" "$m" "$n" "$k" "$ORD/$of.order" --bm "$bm" --warmup 3 --iters "$iters" > "$OUT/log_${name}_$iters.txt" 2>&1
    t1=$(date +%s%3N)
    med=$(awk '/^median_us/ {print $2}' "$OUT/log_${name}_$iters.txt"); mn=$(awk '/^min_us/ {print $2}' "$OUT/log_${name}_$iters.txt")
    echo "$name,$iters,$t0,$t1,${med:-},${mn:-}" >> "$OUT/clock_own.csv"
    sleep 1   # let the clock recover between cases, as between the summary's cases
  done
done
kill $SMI 2>/dev/null
tar -czf "$OUT/clock_own_logs.tar.gz" -C "$OUT" $(cd "$OUT" && ls log_*.txt) && rm -f "$OUT"/log_*.txt
cat "$OUT/clock_own.csv"
