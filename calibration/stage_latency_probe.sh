#!/usr/bin/env bash
# How does the latency of a batch of independent L2-hit loads (one stage of a GEMM main loop: 4-64
# KiB asked for at once by one SM, then waited for as a whole) grow with the load the other SMs put
# on the L2, against a single load's? stage_latency.cu times 2000 samples of a batch from one SM
# (clock64 around issue-all, use-all, barrier; a 2 us pause between samples) while up to 131 other
# SMs stream L2-resident reads as loaded_latency_probe.sh's l2 sweep does (24 MiB in all). Each row:
# one repetition's latency distribution (mean, p10..p99, max) and the streams' GB/s over the same
# interval; every sample also goes to stage_samples.csv.gz, to re-analyse the distributions.
# The hypothesis: a stage completes when its slowest request returns, so its latency (mean and
# tail) grows with the load much more than a single load's mean does: the maximum of many
# queueing delays at the L2 slices, which a model that charges a stage one mean loaded latency
# misses. Batch 128 with one thread is the single load (its mean: loaded_latency's l2 sweep).
# Layouts: tile (consecutive lines, a GEMM tile's rows) and random (lines anywhere in 4 MiB).
# 60 points (LAYOUTS x BATCHES x BLOCKS), 4 launches of ~5-15 ms each: about a minute, mostly
# process start-up.
#   OUT=$OUT bash calibration/stage_latency_probe.sh        (device machine, repository root)
source calibration/probe_build.sh
probe_build stage_latency stage_latency.cu -lcublas
CSV="$OUT/stage_latency.csv"
DUMP="$OUT/stage_samples.csv"  # stage_latency writes its header into the empty file
H=layout,batch_bytes,threads,hog_blocks,rep,samples,ns_per_cycle,mean_ns,p10_ns,p50_ns,p90_ns,p99_ns,max_ns,hog_gbps,sm,gemm_us
echo "$H" > "$CSV"
rm -f "$DUMP" "$DUMP.gz"
LAYOUTS=${LAYOUTS:-tile random}
BATCHES=${BATCHES:-128 4096 16384 32768 65536}
BLOCKS=${BLOCKS:-0 8 32 66 100 131}
# Threads for a batch: 128 bytes, one (the single load); else as many as make each thread's
# share 1, 2, 4, .. or 32 loads (stage_latency's kernels), at most 256.
threads_for() {
  [ "$1" -eq 128 ] && { echo 1; return; }
  local chunks=$(($1 / 16)) u
  for u in 1 2 4 8 16 32; do
    if [ $((chunks % u)) -eq 0 ] && [ $((chunks / u)) -le 256 ]; then echo $((chunks / u)); return; fi
  done
  echo 256  # stage_latency refuses it and says why (errors.log)
}
for layout in $LAYOUTS; do
  for b in $BATCHES; do
    t=$(threads_for "$b")
    for n in $BLOCKS; do
      "$BUILD/stage_latency" --layout "$layout" --batch-bytes "$b" --threads-measure "$t" --hog-blocks "$n" \
        --reps 3 --dump "$DUMP" 2>> "$OUT/errors.log" | tail -n +2 >> "$CSV"
    done
  done
done
[ -f "$DUMP" ] && gzip -f "$DUMP"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.txt"
python3 - "$CSV" <<'PY'
import csv, sys, collections, statistics
rows = list(csv.DictReader(open(sys.argv[1])))
pts = collections.defaultdict(list)
for r in rows:
    pts[(r["layout"], int(r["batch_bytes"]), int(r["threads"]), int(r["hog_blocks"]))].append(r)
med = lambda rs, col: statistics.median(float(r[col]) for r in rs)
last = None
for key in sorted(pts, key=lambda k: (k[0] != "tile", k[0], k[1], k[3])):
    layout, batch, threads, blocks = key
    if (layout, batch) != last:
        last = (layout, batch)
        base = pts.get((layout, batch, threads, 0))
        print(f"-- {layout}, batch {batch} B, {threads} threads: streams GB/s -> stage ns (median of reps);"
              " x: over 0 stream blocks")
    rs = pts[key]
    mean, p50, p99 = med(rs, "mean_ns"), med(rs, "p50_ns"), med(rs, "p99_ns")
    growth = f"   x{mean / med(base, 'mean_ns'):5.2f} mean  x{p99 / med(base, 'p99_ns'):5.2f} p99" if base else ""
    print(f"   blocks {blocks:3d}  {med(rs, 'hog_gbps'):8.1f} GB/s  mean {mean:8.1f}  p50 {p50:8.1f}"
          f"  p99 {p99:8.1f} ns{growth}")
PY
