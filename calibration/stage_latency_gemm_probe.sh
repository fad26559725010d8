#!/usr/bin/env bash
# A stage's latency under real kernels' load: stage_latency.cu's measuring block on one SM while
# cuBLAS fp16 GEMMs (--gemm M,N,K) run back to back on the other SMs, against the same stage
# idle. Then Nsight Compute on one launch of each GEMM alone (its L2 and DRAM bytes and time), so
# the load can be set against the streams' of stage_latency_probe.sh. About a minute. DRAM=1:
# the batch's lines from DRAM (stage_latency --dram 1).
#   OUT=$OUT bash calibration/stage_latency_gemm_probe.sh   (device machine, repository root)
source calibration/probe_build.sh
probe_build stage_latency stage_latency.cu -lcublas
CSV="$OUT/stage_latency_gemm.csv"
echo "gemm,layout,batch_bytes,threads,hog_blocks,rep,samples,ns_per_cycle,mean_ns,p10_ns,p50_ns,p90_ns,p99_ns,max_ns,hog_gbps,sm,gemm_us" > "$CSV"
# name M,N,K launches: enough back-to-back launches to outlast the 2000 samples (~5 ms)
GEMMS=${GEMMS:-"none:0 sq8192:8192,8192,8192:12 sq4096:4096,4096,4096:60 k32768:8192,8192,32768:4 m16:16,8192,8192:400 m512:512,8192,8192:200"}
for g in $GEMMS; do
  IFS=: read -r name shape count <<< "$g"
  for b in 128:1 16384:256 65536:256; do
    args=(--layout random --batch-bytes ${b%:*} --threads-measure ${b#*:} --reps 3)
    [ "$name" != none ] && args+=(--gemm "$shape" --gemm-count "$count")
    [ "${DRAM:-0}" = 1 ] && args+=(--dram 1)  # the batch's lines from DRAM instead of the L2
    timeout 120 "$BUILD/stage_latency" "${args[@]}" 2>> "$OUT/errors.log" | tail -n +2 | sed "s/^/$name,/" >> "$CSV"
  done
done
M=lts__t_bytes.sum,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second
for g in $GEMMS; do
  IFS=: read -r name shape count <<< "$g"
  [ "$name" = none ] && continue
  ncu --csv --metrics "$M" --kernel-name regex:'^(?!stage|warm)' --launch-skip 1 --launch-count 1 \
    "$BUILD/stage_latency" --layout random --batch-bytes 128 --threads-measure 1 --reps 0 --samples 10 \
    --gemm "$shape" --gemm-count 1 > "$OUT/ncu_$name.csv" 2>> "$OUT/errors.log"
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.txt"
python3 calibration/stage_latency_table.py --summary "$CSV" gemm,batch_bytes
