#!/usr/bin/env bash
# Two latency-bound blocks on one SM (calibration/kernels/sync_pair.cu): the loop time of a block
# alone on its SM against two on one, over the bytes a step copies, the MMAs it does after the
# wait, where the bytes come from (L2 or DRAM), which half of the work the partner does, and how
# many SMs work at once (8: the L2 and DRAM unloaded; all: the whole GPU's traffic).
#   OUT=$OUT bash calibration/sync_pair_probe.sh        (device machine, repository root)
#   ACTIVE="8" / ACTIVE=" ": the contiguous sweep on 8 SMs only / not at all; TILE=1 adds tile-shaped
#   reads, SHARE=1 blocks that read the same place, STAGES=1 pipelined loops, SIZES=1 other buffer sizes,
#   LDG=1 loads instead of copies
source calibration/probe_build.sh
probe_build sync_pair sync_pair.cu
CSV="$OUT/sync_pair.csv"
echo "mode,active,bytes,mmas,threads,per_sm,partner,rep,lone_ns,first_ns,second_ns,pairs" > "$CSV"
for active in ${ACTIVE:-8 1000}; do
  for mode in l2 dram; do
    steps=256; [ "$mode" = dram ] && steps=128
    for threads in 256 128; do
      for bytes in 8192 16384 32768 65536; do
        for mmas in 0 16 64; do
          for per_sm in 1 2; do
            "$BUILD/sync_pair" --mode $mode --active $active --bytes $bytes --mmas $mmas --threads $threads \
              --per-sm $per_sm --steps $steps >> "$CSV"
          done
        done
      done
    done
    for mmas in 16 64; do
      for partner in 1 2; do
        "$BUILD/sync_pair" --mode $mode --active $active --bytes 32768 --mmas $mmas --threads 256 --per-sm 2 \
          --partner $partner --steps $steps >> "$CSV"
      done
    done
  done
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.txt"
wc -l "$CSV"
# One option's values from the L2, on 8 and on all SMs, over step sizes and MMAs, alone and in
# pairs: sweep OPTION "VALUES" "BYTES" "MMAS"
sweep() {
  for active in 8 1000; do
    for value in $2; do
      for bytes in $3; do
        for mmas in $4; do
          for per_sm in 1 2; do
            "$BUILD/sync_pair" --mode l2 "$1" "$value" --active $active --bytes $bytes --mmas $mmas \
              --threads 256 --per-sm $per_sm --steps 256 >> "$CSV"
          done
        done
      done
    done
  done
  wc -l "$CSV"
}
# Tile-shaped reads (TILE=1): rows of 128 B (a 64-wide fp16 k-slice) and 256 B, 8 KiB apart, as a
# GEMM's tile reads its operands.
[ "${TILE:-0}" = 1 ] && sweep --row-bytes "128 256" "16384 32768 65536" "0 64"
# Shared reads (SHARE=1): blocks 2, 4 or 8 at a time read the same place at each step, as tiles
# that share a panel do, alone and in pairs on all SMs.
if [ "${SHARE:-0}" = 1 ]; then
  for g in 1 2 4 8; do
    for bytes in 16384 32768; do
      for per_sm in 1 2; do
        "$BUILD/sync_pair" --mode l2 --share $g --bytes $bytes --mmas 0 --threads 256 --per-sm $per_sm \
          --steps 256 >> "$CSV"
      done
    done
  done
  wc -l "$CSV"
fi
# Pipelined loops (STAGES=1): 1-3 steps in flight per block: does the GPU-wide ceiling rise with
# the bytes in flight?
[ "${STAGES:-0}" = 1 ] && sweep --stages "1 2 3" "16384 32768" "0 64"
# The L2 buffer's size (SIZES=1): 2-32 MiB read by every SM, lone and in pairs, 16 and 32 KB a step.
if [ "${SIZES:-0}" = 1 ]; then
  for mib in 2 4 16 24 32; do
    for bytes in 16384 32768; do
      for per_sm in 1 2; do
        "$BUILD/sync_pair" --mode l2 --l2-mib $mib --bytes $bytes --mmas 0 --threads 256 --per-sm $per_sm \
          --steps 256 >> "$CSV"
      done
    done
  done
  wc -l "$CSV"
fi
# Loads instead of copies (LDG=1): ld.global.cg into registers, then shared memory, against
# cp.async, on 8 and all SMs, lone and in pairs.
if [ "${LDG:-0}" = 1 ]; then
  for active in 8 1000; do
    for ldg in 0 1; do
      for bytes in 16384 32768; do
        for per_sm in 1 2; do
          "$BUILD/sync_pair" --mode l2 --ldg $ldg --active $active --bytes $bytes --mmas 0 --threads 256 \
            --per-sm $per_sm --steps 256 >> "$CSV"
          "$BUILD/sync_pair" --mode l2 --ldg $ldg --active $active --bytes $bytes --mmas 0 --threads 1024 \
            --per-sm $per_sm --steps 256 >> "$CSV"
        done
      done
    done
  done
  wc -l "$CSV"
fi
