#!/usr/bin/env bash
# How does a load's latency grow with the load on the memory system? loaded_latency.cu chases
# pointers from one SM (one dependent load at a time) while up to 131 other SMs stream reads,
# flat out or with a pause between rounds; each point is the chase's mean latency and the
# streams' bandwidth over the same interval. Three sweeps:
#   dram: chase and streams in DRAM   (the DRAM queueing wait: models/dram/dram_server.hpp)
#   l2:   chase and streams in the L2 (the L2 hit latency under load)
#   mix:  chase in the L2, streams in DRAM (what a block that hits sees while others miss)
#   shared: every stream reads the same 256 KiB and the chase runs through those lines (a line
#         many SMs want at once, as a GEMM's shared tiles: compare with l2, where each SM reads
#         its own lines)
#   OUT=$OUT bash calibration/loaded_latency_probe.sh        (device machine, repository root)
source calibration/probe_build.sh
probe_build loaded_latency loaded_latency.cu
CSV="$OUT/loaded_latency.csv"
echo "sweep,chase_bytes,hog_blocks,hog_bytes,pause_ns,rep,hops,latency_ns,hog_gbps,chase_sm" > "$CSV"
BLOCKS=${BLOCKS:-0 2 4 8 16 24 32 48 64 80 96 112 131}
PAUSES=${PAUSES:-8000 4000 2000 1000 500 250}
point() {  # sweep chase_bytes hog_blocks hog_bytes pause hops [extra args]
  "$BUILD/loaded_latency" --chase-bytes "$2" --hog-blocks "$3" --hog-bytes "$4" --pause-ns "$5" --hops "$6" \
    --reps 3 "${@:7}" 2>> "$OUT/errors.log" | tail -n +2 | sed "s/^/$1,/" >> "$CSV"
}
DRAM_CHASE=$((512 << 20)); L2_CHASE=$((4 << 20)); DRAM_HOG=$((4 << 30)); L2_HOG=$((24 << 20))
for sweep in ${SWEEPS:-dram l2 mix shared}; do
  case $sweep in
    dram) c=$DRAM_CHASE; h=$DRAM_HOG; hops=20000 ;;
    l2)   c=$L2_CHASE;   h=$L2_HOG;   hops=50000 ;;
    mix)  c=$L2_CHASE;   h=$DRAM_HOG; hops=50000 ;;
    shared) c=$L2_CHASE; h=0;         hops=50000 ;;
  esac
  extra=(); [ "$sweep" = shared ] && extra=(--shared-bytes $((256 << 10)))
  for n in $BLOCKS; do point $sweep $c $n $h 0 $hops "${extra[@]}"; done
  for p in $PAUSES; do point $sweep $c 131 $h $p $hops "${extra[@]}"; done
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.txt"
python3 - "$CSV" <<'PY'
import csv, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
pts = collections.defaultdict(list)
for r in rows:
    pts[(r["sweep"], int(r["hog_blocks"]), int(r["pause_ns"]))].append((float(r["latency_ns"]), float(r["hog_gbps"])))
for sweep in ("dram", "l2", "mix", "shared"):
    print(f"-- {sweep}: streams GB/s -> chase latency ns (median of 3)")
    for (s, n, p), v in sorted(pts.items(), key=lambda kv: sorted(x[1] for x in kv[1])[1]):
        if s != sweep:
            continue
        lat = sorted(x[0] for x in v)[len(v) // 2]
        bw = sorted(x[1] for x in v)[len(v) // 2]
        print(f"   blocks {n:3d} pause {p:5d}  {bw:8.1f} GB/s  {lat:8.1f} ns")
PY
