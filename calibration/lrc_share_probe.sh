#!/usr/bin/env bash
# How much does the L2 request coalescer merge when several SMs ask for the same data at about
# the same time, for bulk copies (TMA: cp.async.bulk, CUTLASS 3 and cuBLAS) and for 16-byte
# load instructions (Triton, CUTLASS 2)? tma_stream.cu with SHARED = 1: GRID blocks (one per
# SM) stream the same 16 KiB pieces of an 8 MiB buffer in the same order, 256 pieces each; Nsight
# Compute (caches flushed first) counts the L2's lookups and the coalescer's merges. The model's
# bulk merge (a copy's window spans its transfer through the port) and its load merge (20 ns,
# four requests an entry) predict different shares: docs/validation.md, "What a miss fetches".
#   OUT=$OUT bash calibration/lrc_share_probe.sh        (device machine, repository root)
source calibration/probe_build.sh
probe_build tma_stream tma_stream.cu
M=gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_ltcfabric_op_read.sum,lrc__request_sectors_op_read_coalescable.sum,lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum
mkdir -p "$OUT/ncu"
echo "mode,bytes,blocks,chunk,iters,median_us,tb_per_s,shared" > "$OUT/lrc_share.csv"
for mode in bulk load; do
  for grid in 1 2 4 8 16 33 66 132; do
    for shared in 1 0; do
      [[ $shared == 0 && $grid != 132 ]] && continue
      line=$("$BUILD/tma_stream" $mode 8388608 1 16384 256 $grid $shared) && echo "$(echo $line | tr ' ' ','),$shared" >> "$OUT/lrc_share.csv"
      ncu --csv --page raw --print-units base --kernel-name regex:.*${mode}_kernel.* --launch-skip 3 --launch-count 1 \
          --metrics "$M" "$BUILD/tma_stream" $mode 8388608 1 16384 256 $grid $shared \
          > "$OUT/ncu/${mode}_${grid}_${shared}.csv" 2>> "$OUT/ncu.err"
    done
  done
done
python3 - "$OUT" <<'PY' | tee "$OUT/summary.txt"
import os, sys
sys.path.insert(0, "calibration")
from ncu_raw import first_kernel
d = sys.argv[1]
print("mode  grid shared  requested_sectors  tex_lookups  merged_share  lrc_achieved/requested  tex_hit%  dram_MB")
for name in sorted(os.listdir(os.path.join(d, "ncu")), key=lambda n: (n.split("_")[0], int(n.split("_")[1]), n)):
    mode, grid, shared = name[:-4].split("_")
    m = first_kernel(os.path.join(d, "ncu", name))
    if m is None:
        print(mode, grid, shared, "no page"); continue
    req = int(grid) * 256 * 16384 / 32
    tex = m.get("lts__t_sectors_srcunit_tex_op_read.sum", 0)
    ach = m.get("lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum", 0)
    hit = m.get("lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", 0)
    print(f"{mode:5} {grid:>4} {shared:>6}  {req:17.0f}  {tex:11.0f}  {1 - tex / req:12.3f}  {ach / req:22.3f}  {100 * hit / max(tex, 1):8.1f}  {m.get('dram__bytes_read.sum', 0) / 1e6:7.1f}")
PY
tar -C "$OUT" -czf "$OUT/ncu_pages.tar.gz" ncu && rm -r "$OUT/ncu"
cat "$OUT/lrc_share.csv"
