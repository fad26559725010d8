#!/usr/bin/env bash
# Nsight Compute on the flush_split cases in application replay with --cache-control none: the
# kernel's DRAM writes and time after do_bench's 256 MB write (dirty L2) and after a 256 MB read
# (clean L2), at the clock the card runs (--clock-control none).
#   OUT=$OUT bash calibration/production/run_flush_split_ncu.sh     (device machine, repository root)
set -uo pipefail
OUT=${OUT:?set OUT}
cd "$(dirname "$0")"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,sm__cycles_elapsed.avg.per_second
echo "case,pre,gpu_time_ns,dram_read,dram_write,hit_pct,lts_read_sectors,lts_write_sectors,sm_hz" > "$OUT/flush_split_ncu.csv"
for c in $(python3 -c "import flush_split_probe as f; print(' '.join(f.CASES))"); do
  for pre in write read; do
    ncu --csv --page raw --print-units base --replay-mode application --cache-control none --clock-control none \
        --profile-from-start off --kernel-name regex:matmul_kernel --metrics $M \
        python3 flush_split_probe.py once --case "$c" --pre $pre > "$OUT/ncu_${c}_$pre.csv" 2> "$OUT/err_${c}_$pre.txt"
    python3 - "$OUT/ncu_${c}_$pre.csv" "$c" "$pre" >> "$OUT/flush_split_ncu.csv" <<'PY'
import csv, sys
rows = [l for l in open(sys.argv[1]) if l.startswith('"')]
r = list(csv.reader(rows))
v = {k: x.replace(",", "") for k, x in zip(r[0], r[-1])} if len(r) > 1 else {}
keys = ["gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sector_hit_rate.pct",
        "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum", "sm__cycles_elapsed.avg.per_second"]
print(",".join([sys.argv[2], sys.argv[3]] + [v.get(k, "") for k in keys]))
PY
  done
done
tar -czf "$OUT/ncu_raw.tar.gz" -C "$OUT" $(cd "$OUT" && ls ncu_*.csv err_*.txt) && rm -f "$OUT"/ncu_*.csv "$OUT"/err_*.txt
cat "$OUT/flush_split_ncu.csv"
