#!/usr/bin/env bash
# How long after one SM's request does another SM's request for the same data still merge into
# it in the L2 request coalescer, for bulk copies (TMA: cp.async.bulk, CUTLASS 3 and cuBLAS) and
# for 16-byte load instructions (Triton, CUTLASS 2)? The model's answer differs by path: a load's
# request stays open l2.request_coalescing_ns (20 ns) plus its wait for the crossbar, a bulk
# copy's also for the time its bytes take through the SM's port (mainloops' bulk_copies), which
# grows with the copy: 4 KiB ~45 ns, 16 KiB ~180 ns, 64 KiB ~720 ns at 91 GB/s.
# tma_stream.cu with SHARED = 1 and GRID = 2: both blocks stream the same pieces of an 8 MiB
# buffer once, in the same order, the second DELAY_NS behind the first; Nsight Compute counts the
# L2's lookups (merged share = 1 - lookups / requested sectors; 0.5 = every request of the
# second block merged), with the caches flushed first (every piece a DRAM miss: the window while
# the first request's data is on its way) and with the buffer resident (every piece a hit).
# With PAIRS (e.g. "0:1 0:16 0:6 0:2") the two streaming blocks sit on chosen SMs instead (one
# block per SM, the others idle): one TPC, one GPC, two GPCs of one L2 half, the two halves.
#   OUT=$OUT bash calibration/lrc_delay_probe.sh        (device machine, repository root)
#   PAIRS="0:1 0:16 0:6 0:2" DELAYS="1 256 512 1024 2048" SPECS="load:16384 bulk:16384" OUT=$OUT bash ...
source calibration/probe_build.sh
probe_build tma_stream tma_stream.cu
M=gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum
BYTES=8388608
mkdir -p "$OUT/ncu" "$OUT/stamps"
for spec in ${SPECS:-bulk:4096 bulk:16384 bulk:65536 load:16384}; do
  mode=${spec%%:*}; chunk=${spec##*:}; iters=$((BYTES / chunk))
  for pair in ${PAIRS:-grid}; do
    for delay in ${DELAYS:-1 32 64 128 192 256 384 512 768 1024 2048 4096}; do
      args="$mode $BYTES 1 $chunk $iters 2 1 $delay"
      [ "$pair" != grid ] && args="$args ${pair%%:*} ${pair##*:}"
      name="${mode}_${chunk}_${pair/:/-}_${delay}"
      "$BUILD/tma_stream" $args > "$OUT/stamps/$name.txt" 2>&1
      for cache in all none; do
        ncu --csv --page raw --print-units base --kernel-name regex:.*${mode}_kernel.* --launch-skip 3 --launch-count 1 \
            --cache-control $cache --clock-control none --metrics "$M" "$BUILD/tma_stream" $args \
            > "$OUT/ncu/${name}_${cache}.csv" 2>> "$OUT/ncu.err"
      done
    done
  done
done
tar -C "$OUT" -czf "$OUT/pages.tar.gz" ncu stamps
python3 - "$OUT" "$BYTES" <<'PY' | tee "$OUT/summary.csv"
import os, sys
sys.path.insert(0, "calibration")
from ncu_raw import first_kernel
d, nbytes = sys.argv[1], int(sys.argv[2])
print("mode,chunk,pair,delay_ns,cache,requested_sectors,tex_lookups,merged_share,lrc_achieved_share,tex_hit_pct,dram_mb,"
      "kernel_us,start1_ns,end0_ns,end1_ns")
def key(n):
    mode, chunk, pair, delay, cache = n[:-4].split("_")
    return mode, int(chunk), pair, int(delay), cache
for name in sorted(os.listdir(os.path.join(d, "ncu")), key=key):
    mode, chunk, pair, delay, cache = key(name)
    m = first_kernel(os.path.join(d, "ncu", name))
    if m is None:
        print(f"{mode},{chunk},{pair},{delay},{cache},no page"); continue
    stamps = {}
    for line in open(os.path.join(d, "stamps", f"{mode}_{chunk}_{pair}_{delay}.txt")):
        p = line.split()
        if p and p[0] == "block": stamps[int(p[1])] = (int(p[2]), int(p[3]))
    req = 2 * nbytes / 32
    tex = m.get("lts__t_sectors_srcunit_tex_op_read.sum", 0)
    hit = m.get("lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", 0)
    ach = m.get("lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum", 0)
    s1, e0, e1 = (stamps.get(1, (0, 0))[0], stamps.get(0, (0, 0))[1], stamps.get(1, (0, 0))[1])
    print(f"{mode},{chunk},{pair},{delay},{cache},{req:.0f},{tex:.0f},{1 - tex / req:.3f},{ach / req:.3f},"
          f"{100 * hit / tex if tex else 0:.1f},{m.get('dram__bytes_read.sum', 0) / 1e6:.1f},"
          f"{m.get('gpu__time_duration.sum', 0) / 1e3:.1f},{s1},{e0},{e1}")
PY
rm -rf "$OUT/ncu" "$OUT/stamps"   # in pages.tar.gz: the device returns few files
