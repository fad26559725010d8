#!/usr/bin/env bash
# How does the L2's set hash treat power-of-two strides? l2_stream.cu reads F bytes of data as
# 4 KiB chunks spread STRIDE bytes apart (--stride), sweeping them PASSES times; Nsight Compute
# counts the DRAM bytes read. With an ideal hash, the data is reread from DRAM only once F passes
# what the L2 keeps, whatever the stride; a hash that folds too few address bits onto the set
# index crowds power-of-two strides into few sets and rereads them at smaller F. A GEMM's A panel
# is such a pattern: its rows are K x 2 bytes apart (docs/validation.md, long K).
#   OUT=$OUT bash calibration/l2_stride_probe.sh        (device machine, repository root)
source calibration/probe_build.sh
RAW=$(mktemp -d)   # the per-case Nsight CSVs, tarred into $OUT at the end
probe_build l2_stream l2_stream.cu
M=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_hit.sum,lts__t_sectors_op_write.sum,lts__t_sectors_srcunit_ltcfabric.sum,gpu__time_duration.sum
PASSES=${PASSES:-4}
CHUNK=4096
echo "footprint_mib,stride,passes,dram_read_bytes,dram_write_bytes,hit_pct,read_sectors,read_hit_sectors,write_sectors,fabric_sectors,duration_ns" > "$OUT/stride_probe.csv"
for f in ${FOOTPRINTS:-8 16 20 24 28 32 40}; do
  for s in ${STRIDES:-4096 8192 16384 32768 65536 131072 262144 36864 69632}; do
    name="f${f}_s${s}"
    bytes=$((f * 1048576))
    ncu --csv --page raw --print-units base --cache-control all --clock-control none \
        --kernel-name regex:.*l2_stream_kernel.* --launch-count 1 --metrics "$M" \
        "$BUILD/l2_stream" "$bytes" "$PASSES" "$CHUNK" --stride "$s" --warmup 0 --iters 1 \
        > "$RAW/ncu_$name.csv" 2> "$RAW/ncu_$name.err"
    python3 - "$RAW/ncu_$name.csv" "$f" "$s" "$PASSES" >> "$OUT/stride_probe.csv" <<'PY'
import csv, sys
rows = [l for l in open(sys.argv[1]) if l.startswith('"')]
r = list(csv.reader(rows))
v = {k: x.replace(",", "") for k, x in zip(r[0], r[2])}
keys = ["dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sector_hit_rate.pct", "lts__t_sectors_op_read.sum",
        "lts__t_sectors_op_read_lookup_hit.sum", "lts__t_sectors_op_write.sum", "lts__t_sectors_srcunit_ltcfabric.sum",
        "gpu__time_duration.sum"]
print(",".join(sys.argv[2:5] + [v.get(k, "") for k in keys]))
PY
  done
done
tar -C "$RAW" -czf "$OUT/ncu_raw.tar.gz" .
python3 - "$OUT/stride_probe.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("DRAM reads / footprint (1.0 = read once; PASSES = every pass misses)")
strides = sorted({int(r["stride"]) for r in rows})
print("F MiB " + " ".join(f"{s//1024:>6}K" for s in strides))
for f in sorted({int(r["footprint_mib"]) for r in rows}):
    line = []
    for s in strides:
        x = [r for r in rows if int(r["footprint_mib"]) == f and int(r["stride"]) == s]
        line.append(f"{float(x[0]['dram_read_bytes']) / (f * 1048576):7.2f}" if x and x[0]["dram_read_bytes"] else "      -")
    print(f"{f:5d} " + " ".join(line))
PY
