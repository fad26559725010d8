#!/usr/bin/env bash
# Where do RowSync's extra 54 us go when FFN chains run back to back (M = 16: 311.7 us against
# 258.6 one chain at a time, stream order 254.9 either way; measurements/h100/sync/harness)?
# Per-block timelines (%globaltimer) of six consecutive chains, enqueued as the timed ones are,
# with each chain's CUDA event pair: whether the time is inside the kernels (blocks slower), in
# a gap between them, or outside every block (between an event and the first block).
#   OUT=$OUT bash calibration/handoff_probe.sh [FFN_CHAIN_BIN]   (device machine, repository root)
source calibration/probe_build.sh
BIN=${1:-}
if [ -z "$BIN" ]; then probe_build ffn_chain ffn_chain.cu -lcublas; BIN="$BUILD/ffn_chain"; fi
W=$(mktemp -d)
run() {  # name m bm mode chains [flags]
  local name=$1 m=$2 bm=$3 mode=$4 chains=$5; shift 5
  timeout 120 "$BIN" "$m" 4096 14336 "$mode" --bm "$bm" --warmup 5 --iters 30 \
    --timeline "$W/tl_$name.csv" --timeline-chains "$chains" "$@" > "$W/log_$name.txt" 2>&1
  echo "$name rc=$? $(awk '/^median_us/ {print "median_us", $2}' "$W/log_$name.txt")"
}
run 16_stream 16 64 stream 6
run 16_rowsync 16 64 rowsync 6
run 16_rowsync_synceach 16 64 rowsync 6 --sync-each
run 16_dataflow 16 64 dataflow 6
run 4096_stream 4096 128 stream 3
run 4096_rowsync 4096 128 rowsync 3
run 4096_rowsync_synceach 4096 128 rowsync 3 --sync-each
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$W/env.txt" 2>&1
tar -czf "$OUT/handoff.tar.gz" -C "$W" .
grep -h "timeline_events\|median_us" "$W"/log_16_*.txt
