#!/usr/bin/env bash
# Where the sync_pair probe's copies and loads go on the whole GPU (Nsight Compute): the loop with
# cp.async against ld.global, alone and in pairs, 32 KB a step from the L2, all SMs.
#   OUT=$OUT bash calibration/sync_pair_ncu.sh        (device machine, repository root)
source calibration/probe_build.sh
probe_build sync_pair sync_pair.cu
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,lts__t_sectors_op_read.sum,\
lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_ltcfabric.sum,\
lrc__request_sectors_op_read_coalescable.sum,lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum,\
lrc__lrc2xbar_sectors_op_read.sum,lrc__xbar2gpc_sectors_op_read.sum,lrc__lrc2xbar_cycles_active.sum,\
lrc__lrc2xbar_cycles_stalled.sum,lrc__xbar2lrc_requests_op_read.sum,l1tex__m_xbar2l1tex_read_sectors.sum,\
lts__cycles_elapsed.avg.per_second,lts__t_requests_srcunit_tex_op_read.sum
for ldg in 0 1; do
  for per_sm in 1 2; do
    ncu --metrics "$M" --csv --page raw --launch-skip 2 --launch-count 1 \
      "$BUILD/sync_pair" --mode l2 --ldg $ldg --bytes 32768 --mmas 0 --threads 256 --per-sm $per_sm --reps 1 \
      > "$OUT/ncu_ldg${ldg}_per_sm${per_sm}.csv" 2> "$OUT/ncu_ldg${ldg}_per_sm${per_sm}.err"
  done
done
ls -l "$OUT"
