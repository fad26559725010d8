#!/usr/bin/env bash
# Each SM's share of the memory system, alone and with every SM streaming (calibration/kernels/
# sm_share.cu): is an SM's speed its own port's, or its share of the contended L2 and DRAM?
# (docs/validation.md, "The L2 model under measured timing": 24 SMs run memory-bound matmuls
# 1.3-1.4x faster than the rest.)
#   OUT=$OUT bash calibration/sm_share_probe.sh        (device machine, repository root)
source calibration/probe_build.sh
probe_build sm_share sm_share.cu
CSV="$OUT/sm_share.csv"
L2="--mode l2 --bytes $((16 << 20)) --passes 16"
DRAM="--mode dram --bytes $((64 << 20)) --passes 2"
SMS=$(nvidia-smi --query-gpu=multiprocessor_count --format=csv,noheader 2>/dev/null || echo 132)
case "$SMS" in ''|*[!0-9]*) SMS=132 ;; esac
# variant: per_sm,threads (1,1024: bandwidth-bound streams; 2,128: few loads in flight, latency-bound)
echo "variant,rep,mode,solo,sm,ns,bytes,gbps" > "$CSV"
for v in 1,1024 2,128; do
  for rep in 0 1 2; do
    for args in "$L2" "$DRAM"; do
      "$BUILD/sm_share" $args --per-sm ${v%,*} --threads ${v#*,} | tail -n +2 | sed "s/^/$v,$rep,/;s/^\([0-9]*\),/\1x/" >> "$CSV"
    done
  done
done
# every SM on the same lines at once (shared panels): 1 and 2 blocks per SM
for v in 1,1024 2,128 2,512; do
  for rep in 0 1 2; do
    "$BUILD/sm_share" $L2 --same-lines 1 --per-sm ${v%,*} --threads ${v#*,} | tail -n +2 \
      | sed "s/^l2,/l2same,/;s/^/$v,$rep,/;s/^\([0-9]*\),/\1x/" >> "$CSV"
  done
done
[ "${SOLO:-1}" = 1 ] || SMS=0
for ((s = 0; s < SMS; ++s)); do
  for args in "$L2" "$DRAM"; do "$BUILD/sm_share" $args --solo $s | tail -n +2 | sed "s/^/1x1024,0,/" >> "$CSV"; done
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.txt"
wc -l "$CSV"
