#!/usr/bin/env bash
# Measures CUTLASS 3's stream-K scheduler (calibration/kernels/cutlass3_gemm.cu --schedule streamk:
# the cooperative 128x128x64 kernel with StreamKScheduler) against its data-parallel
# decomposition on shapes whose last wave is short, on the device machine. Each case is timed
# (median of 20 after 3 warm-ups, checked against cuBLAS) and profiled by Nsight Compute (L2
# flushed, one launch). Results: $OUT/streamk.tar.gz (streamk/<case>.log, ncu_<case>.csv).
#
#   bash calibration/production/run_streamk.sh        (OUT defaults to ./out-streamk)
#
# Uses calibration/build/cutlass3_gemm if it runs there (build it with cutlass3_build.sh and
# carry it), else builds it from carried headers in calibration/build/cutlass.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${OUT:-$ROOT/out-streamk}"
W="$(mktemp -d)/streamk"
mkdir -p "$OUT" "$W"
BIN="$ROOT/calibration/build/cutlass3_gemm"
NCU="$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)"
METRICS="dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,launch__grid_size,lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_hit.sum,lts__t_sectors_op_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_op_red.sum,lts__t_sectors_op_atom.sum"
T0=$(date +%s)
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; "$NCU" --version | tail -1; } > "$W/env.txt" 2>&1
if ! "$BIN" 128 128 128 --iters 1 --warmup 0 --schedule streamk > "$W/probe.log" 2>&1; then
  echo "carried binary does not run ($(tail -1 "$W/probe.log")); building"
  bash "$ROOT/calibration/kernels/cutlass3_build.sh" "$ROOT/calibration/build/cutlass" > "$W/build.log" 2>&1 || echo "build FAILED"
fi
FAILED=0
run_case() { # name args...
  local name="$1"; shift
  timeout -k 5 60 "$BIN" "$@" --check > "$W/$name.log" 2>&1 || { echo "$name FAILED rc $?"; tail -3 "$W/$name.log"; FAILED=1; return; }
  [ -n "$NCU" ] && timeout -k 5 120 "$NCU" -k regex:device_kernel --launch-count 1 --clock-control none --metrics "$METRICS" \
    --csv --page raw --print-units base "$BIN" "$@" --warmup 0 --iters 1 > "$W/ncu_$name.csv" 2> "$W/ncu_$name.log"
  echo "$name: $(grep -E '^(sk_tiles|sk_units|splits|sk_groups|median_us|tflops) ' "$W/$name.log" | tr '\n' ' ')"
}
# Shapes: 128x128 tiles on 132 SMs. 1536^2 (144 tiles, 1.09 waves) and 3072^2 (576, 4.36) and
# 4224^2 (1089, 8.25) have a short last wave, where the heuristic picks stream-K; 2048^2 (256,
# 1.94) a nearly full one, where it stays data-parallel unless forced; 1024^2 with long K (64
# tiles, half a wave) is split-K's case.
for spec in "1536 1536 16384" "3072 3072 4096" "4224 4224 4096" "2048 2048 8192"; do
  tag="$(echo "$spec" | tr ' ' 'x')"
  # shellcheck disable=SC2086
  run_case "sk_${tag}_heuristic" $spec --schedule streamk --decomposition heuristic
  # shellcheck disable=SC2086
  run_case "sk_${tag}_streamk" $spec --schedule streamk --decomposition streamk
  # shellcheck disable=SC2086
  run_case "sk_${tag}_dp" $spec --schedule streamk --decomposition dataparallel
done
run_case "sk_1536x1536x16384_streamk_nondet" 1536 1536 16384 --schedule streamk --decomposition streamk --reduction nondeterministic
run_case "sk_1024x1024x16384_splitk4" 1024 1024 16384 --schedule streamk --decomposition splitk --splits 4
run_case "sk_1024x1024x16384_streamk" 1024 1024 16384 --schedule streamk --decomposition streamk
run_case "sk_1024x1024x16384_dp" 1024 1024 16384 --schedule streamk --decomposition dataparallel
echo "done in $(( $(date +%s) - T0 )) s, failed=$FAILED"
(cd "$(dirname "$W")" && tar czf "$OUT/streamk.tar.gz" streamk)
exit $FAILED
