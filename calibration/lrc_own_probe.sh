#!/usr/bin/env bash
# Does the L2 request coalescer merge the project's own mma.sync GEMM's reads as it merges
# Triton's (calibration/measurements/h100/production/l2_requests)? Builds gemm_order and profiles
# 4096^3 and 8192^3 under row and grouped(8) order with the LRC's counters beside the L2's.
#   OUT=$OUT bash calibration/lrc_own_probe.sh        (device machine, repository root)
source calibration/probe_build.sh
ORD=calibration/orders
probe_build gemm_order gemm_order.cu -lcublas
M=lrc__request_sectors_op_read_coalescable.sum,lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum,lrc__lrc2xbar_sectors_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum
for c in "4096 row_32x32" "4096 grouped8_32x32" "8192 row_64x64" "8192 grouped8_64x64"; do
  read -r s o <<<"$c"
  name="gemm_${s}_${o%%_*}"
  ncu --csv --page raw --cache-control all --clock-control none --kernel-name regex:.*gemm_order_kernel.* \
      --launch-count 1 --metrics "$M" "$BUILD/gemm_order" "$s" "$s" "$s" "$ORD/$o.order" --bm 128 --warmup 0 --iters 1 \
      > "$OUT/ncu_$name.csv" 2> "$OUT/ncu_$name.err"
  python3 - "$OUT/ncu_$name.csv" "$name" <<'PY'
import csv, sys
rows = [l for l in open(sys.argv[1]) if l.startswith('"')]
r = list(csv.reader(rows))
v = {k: x for k, x in zip(r[0], r[2])}
f = lambda k: float(v[k].replace(",", ""))
req = f("lrc__request_sectors_op_read_coalescable.sum"); co = f("lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum")
print(f"{sys.argv[2]}: requested {req/1e6:.1f} M sectors, merged {co/1e6:.1f} M ({100*co/req:.1f}%), "
      f"to L2 {f('lrc__lrc2xbar_sectors_op_read.sum')/1e6:.1f} M, hit {v['lts__t_sector_hit_rate.pct']}%")
PY
done
