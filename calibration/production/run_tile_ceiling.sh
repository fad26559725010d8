#!/usr/bin/env bash
# The main loop's ceiling per tile (tile_ceiling_probe.py): do_bench times, then Nsight Compute
# (clocks left alone) with the SM's pipe and shared-memory counters, one profile per tile.
#   OUT=$OUT bash calibration/production/run_tile_ceiling.sh     (device machine, repository root)
set -uo pipefail
OUT=${OUT:?set OUT}
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$OUT/env.txt"
PYTHONUNBUFFERED=1 python3 tile_ceiling_probe.py time --out "$OUT" 2>&1 | grep -v -i warn
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__inst_executed_pipe_tensor_op_gmma.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed,smsp__cycles_active.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,lrc__request_sectors_op_read_coalescing_achieved.sum,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active
# Keep only metrics this ncu knows (an unknown one fails the whole run); the sections add their own.
known="$(ncu --query-metrics --csv 2>/dev/null)"
kept=""
IFS=',' read -r -a arr <<<"$M"
for m in "${arr[@]}"; do
  if grep -q "\"\?${m%%.*}\"\?[, ]" <<<"$known"; then kept="${kept:+$kept,}$m"; else echo "ncu: dropping unknown metric $m"; fi
done
[ -n "$known" ] && M="$kept"
for t in $(python3 -c "import tile_ceiling_probe as p; print(' '.join(p.TILES))"); do
  ncu --csv --page raw --print-units base --clock-control none --profile-from-start off \
      --kernel-name regex:same_panel --section SpeedOfLight --section ComputeWorkloadAnalysis --metrics $M python3 tile_ceiling_probe.py once --tile $t > "$OUT/ncu_$t.csv" 2> "$OUT/err_$t.txt"
done
python3 - "$OUT" <<'PY' > "$OUT/tile_ceiling_ncu.csv"
import csv, glob, os, sys
out = sys.argv[1]
keys = None
for f in sorted(glob.glob(os.path.join(out, "ncu_*.csv"))):
    rows = [l for l in open(f) if l.startswith('"')]
    r = list(csv.reader(rows))
    if len(r) < 3:
        continue
    v = {k: x.replace(",", "") for k, x in zip(r[0], r[-1])}
    cols = [k for k in r[0] if "__" in k]
    if keys is None:
        keys = cols
        print(",".join(["tile"] + keys))
    print(",".join([os.path.basename(f)[4:-4]] + [v.get(k, "") for k in keys]))
PY
tar -czf "$OUT/ncu_raw.tar.gz" -C "$OUT" $(cd "$OUT" && ls ncu_*.csv err_*.txt) && rm -f "$OUT"/ncu_*.csv "$OUT"/err_*.txt
cat "$OUT/tile_ceiling.csv"; cut -c1-400 "$OUT/tile_ceiling_ncu.csv"
