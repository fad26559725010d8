#!/usr/bin/env bash
# A stage's latency when its lines come from DRAM, and an L2-hit stage's while the other SMs
# stream from DRAM: stage_latency.cu with `--dram 1` (the batch's lines anywhere in 4 GiB, the L2
# flushed before each repetition) and with its persisting 4 MiB region, under 0-131 SMs streaming
# 4 GiB (DRAM-bound; loaded_latency's dram and mix sweeps are the one-line chase of the same).
# Does a stage of DRAM lines wait for its slowest line, as an L2 stage does? About two minutes.
#   OUT=$OUT bash calibration/stage_latency_dram_probe.sh   (device machine, repository root)
source calibration/probe_build.sh
probe_build stage_latency stage_latency.cu -lcublas
CSV="$OUT/stage_latency_dram.csv"
echo "lines_in,layout,batch_bytes,threads,hog_blocks,rep,samples,ns_per_cycle,mean_ns,p10_ns,p50_ns,p90_ns,p99_ns,max_ns,hog_gbps,sm,gemm_us" > "$CSV"
for where in ${WHERE:-dram l2}; do
  extra=(); [ $where = dram ] && extra=(--dram 1)
  for n in ${BLOCKS:-0 8 16 32 64 131}; do
    for b in 128:1 4096:256 16384:256 65536:256; do
      timeout 120 "$BUILD/stage_latency" --layout random --batch-bytes ${b%:*} --threads-measure ${b#*:} \
        --hog-blocks $n --hog-bytes $((4 << 30)) --reps 3 "${extra[@]}" 2>> "$OUT/errors.log" \
        | tail -n +2 | sed "s/^/$where,/" >> "$CSV"
    done
  done
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.txt"
python3 calibration/stage_latency_table.py --summary "$CSV" lines_in,hog_blocks,batch_bytes
