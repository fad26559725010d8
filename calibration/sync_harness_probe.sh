#!/usr/bin/env bash
# Where does RowSync's extra time at M = 16 come from? The event-timed chain (summary.csv) is
# 312 us against stream's 255, but the per-block timeline of one chain spans 252 us in both
# (calibration/measurements/h100/sync/run2). The timed chains are enqueued back to back, and
# under RowSync the next chain's producer waits, through an event, for this chain's consumer on
# the other stream. This probe times every mode both ways: back to back, and with the host
# waiting for each chain (--sync-each), which leaves only the kernels and their launches; and
# RowSync back to back with both streams at one priority (--no-prio).
#   OUT=$OUT bash calibration/sync_harness_probe.sh        (device machine, repository root)
source calibration/probe_build.sh
LOGS=$(mktemp -d)   # per-run logs, tarred into $OUT at the end
probe_build ffn_chain ffn_chain.cu -lcublas
echo "m,bm,mode,harness,median_us,min_us" > "$OUT/sync_harness.csv"
for c in ${CASES:-16:64 4096:128}; do
  m=${c%%:*}; bm=${c##*:}
  for mode in ${MODES:-stream rowsync dataflow}; do
    for h in back_to_back sync_each back_to_back_noprio; do
      case $h in sync_each) flag="--sync-each" ;; back_to_back_noprio) flag="--no-prio" ;; *) flag="" ;; esac
      [ "$h" = back_to_back_noprio ] && [ "$mode" != rowsync ] && continue  # one stream: no priorities
      log="$LOGS/${m}_${mode}_${h}.log"
      timeout 120 "$BUILD/ffn_chain" "$m" 4096 14336 "$mode" --bm "$bm" --warmup 5 --iters 30 $flag > "$log" 2>&1
      med=$(awk '/^median_us/ {print $2}' "$log"); mn=$(awk '/^min_us/ {print $2}' "$log")
      echo "$m,$bm,$mode,$h,${med:-},${mn:-}" >> "$OUT/sync_harness.csv"
    done
  done
done
tar -C "$LOGS" -czf "$OUT/logs.tar.gz" .
cat "$OUT/sync_harness.csv"
