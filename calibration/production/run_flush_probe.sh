#!/usr/bin/env bash
# The L2 flush's cost to the timed kernel (flush_probe.py): do_bench medians, and Nsight Compute
# durations after a clean, invalidated L2 (--cache-control all) and after do_bench's 256 MB
# write (dirty: --cache-control none).
#   OUT=$OUT bash calibration/production/run_flush_probe.sh     (device machine, repository root)
set -uo pipefail
OUT=${OUT:?set OUT}
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/env.txt"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)" >> "$OUT/env.txt"
python3 flush_probe.py time --out "$OUT" 2>&1 | grep -v -i warn
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct
echo "case,l2,gpu_time_ns,dram_read,dram_write,hit_pct" > "$OUT/flush_ncu.csv"
for c in $(python3 -c "import flush_probe as f; print(' '.join(f.CASES))"); do
  for mode in clean dirty; do
    if [ $mode = clean ]; then cc=all; d=""; else cc=none; d=--dirty; fi
    ncu --csv --page raw --print-units base --cache-control $cc --clock-control none --profile-from-start off \
        --kernel-name regex:matmul_kernel --metrics $M python3 flush_probe.py once --case "$c" $d \
        > "$OUT/ncu_${c}_$mode.csv" 2> /dev/null
    python3 - "$OUT/ncu_${c}_$mode.csv" "$c" "$mode" >> "$OUT/flush_ncu.csv" <<'PY'
import csv, sys
rows = [l for l in open(sys.argv[1]) if l.startswith('"')]
r = list(csv.reader(rows))
v = {k: x.replace(",", "") for k, x in zip(r[0], r[-1])}
keys = ["gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sector_hit_rate.pct"]
print(",".join([sys.argv[2], sys.argv[3]] + [v.get(k, "") for k in keys]))
PY
  done
done
tar -czf "$OUT/ncu_raw.tar.gz" -C "$OUT" $(cd "$OUT" && ls ncu_*.csv) && rm -f "$OUT"/ncu_*.csv
cat "$OUT/flush_time.csv" "$OUT/flush_ncu.csv"
