#!/usr/bin/env bash
# The phase of a pair (calibration/kernels/sync_pair.cu --stamps): every block's step ends, two
# synchronous blocks on each SM, to tell whether a pair runs in phase (both copy at once and wait
# for each other), in turns (one copies while the other computes) or drifts (docs/validation.md,
# "Two blocks that share a port").
#   OUT=$OUT bash calibration/sync_pair_phase_probe.sh        (device machine, repository root)
source calibration/probe_build.sh
probe_build sync_pair sync_pair.cu
CSV="$OUT/sync_pair_phase.csv"
echo "mode,active,bytes,mmas,threads,per_sm,partner,rep,lone_ns,first_ns,second_ns,pairs" > "$CSV"
# active bytes mmas per_sm
for cfg in "8 32768 64 2" "8 32768 64 1" "8 32768 0 2" "1000 32768 64 2" "8 8192 16 2"; do
  set -- $cfg
  name="stamps_a$1_b$2_m$3_p$4.csv"
  "$BUILD/sync_pair" --mode l2 --active $1 --bytes $2 --mmas $3 --threads 256 --per-sm $4 --steps 256 \
    --reps 3 --stamps "$OUT/$name" >> "$CSV"
  gzip -f "$OUT/$name"
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.txt"
cat "$CSV"
