#!/usr/bin/env bash
# The phases of a pair (calibration/kernels/sync_pair.cu --stamps): when every block's step data is
# in and when the step ends, alone and two synchronous blocks on each SM, to tell whether a pair
# runs in phase (both copy at once) or in turns (one copies while the other computes), and which
# phase a pair stretches, the copy's wait or the MMAs (docs/validation.md, "Two blocks that share
# a port"; calibration/sync_pair_phase_table.py prints it).
#   OUT=$OUT bash calibration/sync_pair_phase_probe.sh        (device machine, repository root)
source calibration/probe_build.sh
probe_build sync_pair sync_pair.cu
CSV="$OUT/sync_pair_phase.csv"
echo "mode,active,bytes,mmas,threads,per_sm,partner,rep,lone_ns,first_ns,second_ns,pairs" > "$CSV"
# active bytes mmas per_sm partner (1: the second block copies only, 2: computes only)
for cfg in "8 32768 64 2 0" "8 32768 64 1 0" "8 32768 0 2 0" "8 32768 0 1 0" "1000 32768 64 2 0" "1000 32768 64 1 0" \
           "8 8192 16 2 0" "8 32768 64 2 1" "8 32768 64 2 2"; do
  set -- $cfg
  name="stamps_a$1_b$2_m$3_p$4_r$5.csv"
  "$BUILD/sync_pair" --mode l2 --active $1 --bytes $2 --mmas $3 --threads 256 --per-sm $4 --partner $5 --steps 256 \
    --reps 3 --stamps "$BUILD/$name" >> "$CSV"
done
tar -C "$BUILD" -czf "$OUT/stamps.tar.gz" $(cd "$BUILD" && ls stamps_*.csv)
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.txt"
cat "$CSV"
