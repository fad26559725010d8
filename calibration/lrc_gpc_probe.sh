#!/usr/bin/env bash
# How many of one GPC's requests for the same line one L2 lookup carries, when 2-16 of its SMs ask
# for it at once or spread out. The model merges up to l2.request_coalescing_max (4) requests of
# one GPC within l2.request_coalescing_ns (400 ns) of the first into one lookup; Triton's flash
# attention, whose 16 programs a GPC read the same K and V tiles within ~0.5 us of each other,
# merges 43% of its requests on the H100 where the model merges 68% (docs/validation.md, "Three
# trials on what keeps blocks together"), and two SMs merge whatever comes within ~0.5 us
# (lrc_delay_probe.sh). tma_stream.cu with a list of SMs: the blocks on the first N SMs of one
# GPC (sm.gpcs of models/archs/h200.yaml, GPC 2) stream the same BYTES (8 MiB) once, in the same
# order, the i-th of them i x DELAY_NS behind the first, the buffer resident in the L2 (warm-up
# launches; `--cache-control none`); Nsight Compute counts the lookups. Merged share = 1 -
# lookups / requested sectors (N x BYTES / 32 B); four to a lookup at once gives 1 - ceil(N/4)/N.
#   OUT=$OUT bash calibration/lrc_gpc_probe.sh          (device machine, repository root)
#   SIZES="2 4 8 16" SPREADS="1 16 32 64 128" SPECS="load:16384" BYTES=33554432 OUT=$OUT bash ...
source calibration/probe_build.sh
probe_build tma_stream tma_stream.cu
M=gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum
BYTES=${BYTES:-8388608}
GPC=${GPC:-2,3,18,19,34,35,50,51,64,65,78,79,92,93,106,107}
mkdir -p "$OUT/ncu" "$OUT/stamps"
run() {  # run MODE CHUNK N DELAY
  local mode=$1 chunk=$2 n=$3 delay=$4
  local sms
  sms=$(echo "$GPC" | cut -d, -f1-"$n")
  local args="$mode $BYTES 1 $chunk $((BYTES / chunk)) 2 1 $delay $sms"
  local name="${mode}_${chunk}_${n}_${delay}"
  "$BUILD/tma_stream" $args > "$OUT/stamps/$name.txt" 2>&1
  ncu --csv --page raw --print-units base --kernel-name regex:.*${mode}_kernel.* --launch-skip 3 --launch-count 1 \
      --cache-control none --clock-control none --metrics "$M" "$BUILD/tma_stream" $args \
      > "$OUT/ncu/$name.csv" 2>> "$OUT/ncu.err"
}
for spec in ${SPECS:-load:16384}; do
  mode=${spec%%:*}; chunk=${spec##*:}
  for n in ${SIZES:-2 4 8 16}; do run "$mode" "$chunk" "$n" 1; done
  for delay in ${SPREADS:-16 32 64 128}; do run "$mode" "$chunk" 16 "$delay"; done
done
tar -C "$OUT" -czf "$OUT/pages.tar.gz" ncu stamps
python3 - "$OUT" "$BYTES" <<'PY' | tee "$OUT/summary.csv"
import math, os, sys
sys.path.insert(0, "calibration")
from ncu_raw import first_kernel
d, nbytes = sys.argv[1], int(sys.argv[2])
print("mode,chunk,sms,delay_ns,requested_sectors,tex_lookups,merged_share,four_at_once_share,lrc_achieved_share,"
      "tex_hit_pct,dram_mb,kernel_us,first_start_ns,last_start_ns,last_end_ns")
def key(n):
    mode, chunk, sms, delay = n[:-4].split("_")
    return mode, int(chunk), int(sms), int(delay)
for name in sorted(os.listdir(os.path.join(d, "ncu")), key=key):
    mode, chunk, sms, delay = key(name)
    m = first_kernel(os.path.join(d, "ncu", name))
    if m is None:
        print(f"{mode},{chunk},{sms},{delay},no page"); continue
    stamps = []
    for line in open(os.path.join(d, "stamps", name[:-4] + ".txt")):
        p = line.split()
        if p and p[0] == "block": stamps.append((int(p[2]), int(p[3])))
    req = sms * nbytes / 32
    tex = m.get("lts__t_sectors_srcunit_tex_op_read.sum", 0)
    hit = m.get("lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", 0)
    ach = m.get("lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum", 0)
    starts = [s for s, _ in stamps] or [0]
    ends = [e for _, e in stamps] or [0]
    print(f"{mode},{chunk},{sms},{delay},{req:.0f},{tex:.0f},{1 - tex / req:.3f},{1 - math.ceil(sms / 4) / sms:.3f},"
          f"{ach / req:.3f},{100 * hit / tex if tex else 0:.1f},{m.get('dram__bytes_read.sum', 0) / 1e6:.1f},"
          f"{m.get('gpu__time_duration.sum', 0) / 1e3:.1f},{min(starts)},{max(starts)},{max(ends)}")
PY
rm -rf "$OUT/ncu" "$OUT/stamps"   # in pages.tar.gz: the device returns few files
