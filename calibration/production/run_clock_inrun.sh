#!/usr/bin/env bash
# Device run of clock_inrun_probe.py: do_bench medians, then Nsight Compute on launch 0 (boost
# clock) and launch 200 (under the power cap) of each case's flushed loop, clocks and caches left
# as they are (--clock-control none --cache-control none), two metrics so that one pass reads
# both. Writes OUT/bench.csv, OUT/ncu.csv (every profiled launch, with case and launch columns),
# OUT/run.log, OUT/env.txt.
#   OUT=DIR bash calibration/production/run_clock_inrun.sh
set -uo pipefail
OUT=${OUT:?set OUT}
mkdir -p "$OUT"
P=calibration/production/clock_inrun_probe.py
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
{
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv
  date -u
} >"$OUT/env.txt" 2>&1
# SET=cublas: torch.matmul on the probe's cuBLAS shapes instead of the Triton kernel.
SET=${SET:-triton}
if [ "$SET" = cublas ]; then
  CASES="cublas_sq8192_m8192 cublas_l70_up_m4096 cublas_l8b_o_m2048 cublas_g3_qkv_m8192 cublas_l8b_up_m512"
  KERNEL=nvjet
else
  CASES="sq8192_t128x128_grouped8 l8b_up_m8192_t128x256_column l8b_up_m16_t128x128_column g3_o_m8192_t128x128_column"
  KERNEL=matmul_kernel
fi
python3 "$P" --mode bench --cases "$SET" --out "$OUT" >>"$OUT/run.log" 2>&1
echo "case,launch,$(echo gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second)" >"$OUT/ncu.csv"
for c in $CASES; do
  for skip in 0 200; do
    sleep 2
    tmp=$(mktemp)
    timeout -k 5 300 "$NCU" --csv --page raw --print-units base --clock-control none --cache-control none \
      -k regex:$KERNEL --launch-skip $skip --launch-count 1 \
      --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second --log-file "$tmp" \
      python3 "$P" --mode loop --case $c --launches 230 >>"$OUT/run.log" 2>&1
    echo "== $c skip $skip: exit $?" >>"$OUT/run.log"
    python3 - "$tmp" "$c" "$skip" >>"$OUT/ncu.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head = next(i for i, r in enumerate(rows) if "gpu__time_duration.sum" in r)
h = rows[head]
for r in rows[head + 2:]:
    if len(r) == len(h):
        val = lambda m: r[h.index(m)].replace(",", "")  # ncu writes thousands separators
        print(f"{sys.argv[2]},{sys.argv[3]},{val('gpu__time_duration.sum')},{val('sm__cycles_elapsed.avg.per_second')}")
PY
    cat "$tmp" >>"$OUT/run.log"
    rm -f "$tmp"
  done
done
cat "$OUT/bench.csv" "$OUT/ncu.csv"
