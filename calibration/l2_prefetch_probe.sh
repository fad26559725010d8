#!/usr/bin/env bash
# What does an L2 miss fetch from DRAM, with and without cp.async's prefetch-size qualifier
# (.L2::64B / 128B / 256B)? CUTLASS 2 and CuTe's SM80 copies (FlashAttention-2) carry .L2::128B,
# Triton's and the project's copies none. l2_prefetch.cu reads WIDTH bytes of every CHUNK-byte
# chunk of an 8 MiB buffer in one pass (what a miss fetches: DRAM bytes over requested bytes), or
# both halves of each chunk in two passes (does the second half hit?). Events time each case;
# Nsight Compute counts the L2's lookups, hits and DRAM bytes (caches flushed before each kernel).
#   OUT=$OUT bash calibration/l2_prefetch_probe.sh        (device machine, repository root)
source calibration/probe_build.sh
probe_build l2_prefetch l2_prefetch.cu
cuobjdump -sass "$BUILD/l2_prefetch" 2>/dev/null | grep -o "LDGSTS[A-Z0-9._]*" | sort | uniq -c > "$OUT/sass_ldgsts.txt"
# hint chunk width passes
CASES="none,64,32,1 none,64,32,2 none,128,32,1 none,128,64,1 none,128,64,2 none,256,128,1 none,256,128,2
64,64,32,1 64,64,32,2 64,128,32,1
128,128,64,1 128,128,64,2 128,128,32,1 128,256,64,1 128,256,128,1 128,256,128,2
256,256,128,1 256,256,128,2 256,256,64,1"
echo "hint,chunk,width,passes,bytes,requested_bytes,median_us" > "$OUT/l2_prefetch.csv"
for c in $CASES; do
  IFS=, read -r hint chunk width passes <<< "$c"
  "$BUILD/l2_prefetch" $hint $chunk $width $passes | tr ' ' ',' >> "$OUT/l2_prefetch.csv" \
    || echo "$c,failed" >> "$OUT/l2_prefetch.csv"
done
M=dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_ltcfabric_op_read.sum,lts__t_sectors_srcunit_ltcfabric_op_read_lookup_hit.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_hit.sum,lts__t_sector_hit_rate.pct,lts__t_requests_srcunit_tex_op_read.sum,gpu__time_duration.sum
mkdir -p "$OUT/ncu"
for c in $CASES; do
  IFS=, read -r hint chunk width passes <<< "$c"
  ncu --csv --page raw --print-units base --kernel-name regex:probe_kernel --launch-skip 2 --launch-count 1 \
      --metrics "$M" "$BUILD/l2_prefetch" $hint $chunk $width $passes \
      > "$OUT/ncu/${hint}_${chunk}_${width}_${passes}.csv" 2>> "$OUT/ncu.err"
done
python3 calibration/l2_prefetch_table.py "$OUT" > "$OUT/ncu.csv"
tar -C "$OUT" -czf "$OUT/ncu_pages.tar.gz" ncu && rm -r "$OUT/ncu"
cat "$OUT/sass_ldgsts.txt" "$OUT/l2_prefetch.csv"
python3 calibration/l2_prefetch_table.py "$OUT/ncu.csv" --summary
