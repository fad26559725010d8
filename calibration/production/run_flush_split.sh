#!/usr/bin/env bash
# do_bench's excess split into events, dirty-line drain and clean-L2 parts (flush_split_probe.py).
#   OUT=$OUT bash calibration/production/run_flush_split.sh     (device machine, repository root)
set -uo pipefail
OUT=${OUT:?set OUT}
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv > "$OUT/env.txt"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)" >> "$OUT/env.txt"
PYTHONUNBUFFERED=1 python3 flush_split_probe.py time --out "$OUT" 2>&1 | grep -v -i warn
ncu --csv --page raw --print-units base --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second \
    --kernel-name regex:empty_kernel python3 flush_split_probe.py ncu_empty > "$OUT/ncu_empty.csv" 2>/dev/null
grep -c '"empty_kernel' "$OUT/ncu_empty.csv"; tail -n 3 "$OUT/ncu_empty.csv" | cut -c1-400
