#!/usr/bin/env bash
# Every stage-latency measurement of calibration/measurements/h200/stage_latency in one device
# call, after the streams' stop flag was made a rare poll (2026-12-04): the main sweep
# (stage_latency_probe.sh), streams of 1024/256/128 threads (depth against rate), single lines
# with their line numbers (which lines wait), nine measuring SMs, and loaded_latency's l2 and
# shared sweeps (the pointer chase of measurements/h200/lone_wait, again). About two minutes.
#   OUT=$OUT bash calibration/run_stage_latency.sh        (device machine, repository root)
set -uo pipefail
OUT=${OUT:?set OUT}
W=$OUT/work; mkdir -p "$W/probe" "$W/chase"
# One build for every part: the main sweep builds stage_latency into $BUILD, the rest reuse it.
export BUILD=${BUILD:-$(mktemp -d)}
OUT=$W/probe bash calibration/stage_latency_probe.sh > "$W/summary.txt" 2>&1
[ -x "$BUILD/stage_latency" ] || { echo "stage_latency did not build (probe/build.log)" >&2; exit 1; }
run() { timeout 60 "$BUILD/stage_latency" "$@" 2>> "$W/errors.log" | tail -n +2; }
H=layout,batch_bytes,threads,hog_blocks,rep,samples,ns_per_cycle,mean_ns,p10_ns,p50_ns,p90_ns,p99_ns,max_ns,hog_gbps,sm,gemm_us
echo "hog_threads,$H" > "$W/stage_latency_load.csv"
for ht in 1024 256 128; do for n in 1 2 4 8 16 32 66 131; do for b in 128:1 16384:256 65536:256; do
  run --layout random --batch-bytes ${b%:*} --threads-measure ${b#*:} --hog-blocks $n --hog-threads $ht --reps 2 \
    | sed "s/^/$ht,/" >> "$W/stage_latency_load.csv"
done; done; done
echo "measure_sm,$H" > "$W/stage_latency_sm.csv"
for s in 0 33 66 124; do for b in 128:1 16384:256; do for n in 0 131; do
  run --layout random --batch-bytes ${b%:*} --threads-measure ${b#*:} --hog-blocks $n --measure-sm $s --reps 2 \
    | sed "s/^/$s,/" >> "$W/stage_latency_sm.csv"
done; done; done
for n in 0 131; do
  run --layout random --batch-bytes 128 --threads-measure 1 --hog-blocks $n --region-bytes $((8 << 20)) \
    --samples 60000 --reps 2 --dump-lines "$W/lines_h$n.csv" > /dev/null
done
OUT=$W/chase SWEEPS="l2 shared" bash calibration/loaded_latency_probe.sh > "$W/chase_summary.txt" 2>&1
tar -C "$W" -czf "$OUT/stage_latency_rerun.tar.gz" .
cp "$W/summary.txt" "$W/chase_summary.txt" "$OUT/"
