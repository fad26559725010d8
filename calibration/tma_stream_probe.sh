#!/usr/bin/env bash
# Does the L2 deliver more through bulk copies (TMA: CUTLASS 3, cuBLAS) than through load
# instructions (Triton, the project's kernels)? tma_stream.cu streams one buffer into every SM
# both ways, L2-resident (8 and 24 MiB) and from DRAM (2 GiB), 1 and 2 blocks per SM, 16 and
# 32 KiB pieces; then Nsight Compute counts the L2's sectors and how busy its slices were for the
# 8 MiB runs. The model's L2 ceilings (l2.crossbar_bandwidth_gbps, l2.bandwidth_gbps) were
# measured with load instructions (docs/archs.md); docs/validation.md ("CUTLASS 3 persistent
# GEMMs", swizzle 8) asks whether bulk copies see the same.
#   OUT=$OUT bash calibration/tma_stream_probe.sh        (device machine, repository root)
source calibration/probe_build.sh
probe_build tma_stream tma_stream.cu
echo "mode,bytes,blocks,chunk,iters,median_us,tb_per_s" > "$OUT/tma_stream.csv"
for bytes in 8388608 25165824 2147483648; do
  for per_sm in 1 2; do
    for chunk in 16384 32768; do
      for mode in bulk load; do
        "$BUILD/tma_stream" $mode $bytes $per_sm $chunk 2048 | tr ' ' ',' >> "$OUT/tma_stream.csv" \
          || echo "$mode,$bytes,$per_sm,$chunk,failed" >> "$OUT/tma_stream.csv"
      done
    done
  done
done
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,lts__cycles_elapsed.avg.per_second,lts__t_sectors_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_ltcfabric.sum,dram__bytes_read.sum
for mode in bulk load; do
  ncu --csv --page raw --print-units base --cache-control none --clock-control none \
      --kernel-name regex:.*${mode}_kernel.* --launch-skip 3 --launch-count 1 --metrics "$M" \
      "$BUILD/tma_stream" $mode 8388608 2 16384 2048 > "$OUT/ncu_${mode}_8MiB.csv" 2> "$OUT/ncu_${mode}_8MiB.err"
done
cat "$OUT/tma_stream.csv"
for f in "$OUT"/ncu_*.csv; do echo "== $f"; grep '^"' "$f" | head -3 | cut -c1-600; done
