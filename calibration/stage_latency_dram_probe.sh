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
python3 - "$CSV" <<'PY'
import csv, sys, collections, statistics
rows = list(csv.DictReader(open(sys.argv[1])))
pts = collections.defaultdict(list)
for r in rows:
    pts[(r["lines_in"], int(r["hog_blocks"]), int(r["batch_bytes"]))].append(r)
for key in sorted(pts):
    rs = pts[key]
    med = lambda c: statistics.median(float(r[c]) for r in rs)
    print(f"{key[0]:4s} streams {key[1]:3d} ({med('hog_gbps'):7.1f} GB/s) batch {key[2]:6d}:"
          f" p50 {med('p50_ns'):7.0f}  p99 {med('p99_ns'):7.0f}  mean {med('mean_ns'):7.0f} ns")
PY
