#!/usr/bin/env python3
"""Turns the CUTLASS 3 measurements (calibration/measurements/h100/cutlass3/) into what
`tilesim validate` reads: one case table (`cases.csv`: Nsight Compute's metrics with their
units row, and the event-timed median of `<case>.log`) and one experiment per case under
calibration/production/experiments/h100/cutlass3/.

Each case is `calibration/kernels/cutlass3_gemm.cu` (CUTLASS 3 SM90 persistent GEMM, TN fp16:
A row-major [M, K], B an nn.Linear weight [N, K]) with the parameters its log prints: schedule
(coop = KernelTmaWarpSpecializedCooperative, pingpong = ...Pingpong), tile, cluster, stages,
shared memory, the raster order and swizzle the scheduler chose, and the grid. The experiments
describe it with `order: {kind: cutlass_sm90, ...}` and `persistent:` the launched grid.

Usage: python3 calibration/production/cutlass3_cases.py   (from the repository root)
"""
import csv
import glob
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEAS = os.path.join(ROOT, "calibration/measurements/h100/cutlass3")
EXP = os.path.join(ROOT, "calibration/production/experiments/h100/cutlass3")
METRICS = ["dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum",
           "launch__grid_size", "lts__t_sector_hit_rate.pct", "lts__t_sectors_op_read.sum",
           "lts__t_sectors_op_read_lookup_hit.sum", "lts__t_sectors_op_write.sum",
           "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
           # the SM clock over the profiled kernel: validate simulates the counters at it
           "sm__cycles_elapsed.avg.per_second"]


def read_log(path):
    """key value lines of the program's own output (the ncu page's preamble has the same)."""
    out = {}
    for line in open(path):
        parts = line.split(None, 1)
        if len(parts) == 2 and not line.startswith("=="):
            out[parts[0]] = parts[1].strip()
    return out


def read_ncu(path):
    lines = open(path).read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
    rows = list(csv.reader(lines[start:]))
    header, units, data = rows[0], rows[1], rows[2:]
    if len(data) != 1:
        sys.exit(f"{path}: expected one profiled kernel, found {len(data)}")
    row = dict(zip(header, data[0]))
    unit = dict(zip(header, units))
    return {m: (row[m].replace(",", ""), unit[m]) for m in METRICS}


def experiment(name, p):
    m, n, k = (int(x) for x in p["problem"].split("x"))
    tm, tn, tk = (int(x) for x in p["tile"].split("x"))
    cm, cn, _ = (int(x) for x in p["cluster"].split("x"))
    raster = {"AlongM": "m", "AlongN": "n"}[p["raster"]]
    family = "cutlass3_" + p["schedule"] + ("_cluster" if cm * cn > 1 else "")
    schedule = {"coop": "cooperative", "pingpong": "pingpong"}[p["schedule"]]
    # Fit nothing on these: they are a kernel family the model was never tuned on.
    lines = [
        f"# CUTLASS 3 case {name}, measured by calibration/kernels/cutlass3_gemm.cu "
        "(calibration/measurements/h100/cutlass3/)",
        f"name: {name}",
        "arch: h100",
        f"workload: {{kind: gemm, m: {m}, n: {n}, k: {k}, dtype: fp16, layout: {{a: row, b: col, c: row}}, "
        f"tile: [{tm}, {tn}, {tk}], stages: {p['stages']}, threads: {p['threads']}, "
        f"shared_memory_bytes: {p['smem_bytes']}, schedule: {schedule}, persistent: {p['ctas']}}}",
        f"order: {{kind: cutlass_sm90, raster: {raster}, max_swizzle: {p['swizzle']}, "
        f"cluster: [{cm}, {cn}]}}",
        # The harness (run_production.sh): a checked launch and cuBLAS's reference of the same
        # size, 3 warm-ups, then the median of 20 launches, from a board the previous case's
        # Nsight Compute replays left idle: timed inside the power controller's boost window.
        "sim: {cold_l2: kernel, timing: {warmup: 5, launches: 20}}",
        f"validate: {{case: {name}, family: {family}, group: {p['problem']}, subset: validation}}",
    ]
    return "\n".join(lines) + "\n"


def main():
    os.makedirs(EXP, exist_ok=True)
    rows = []
    for ncu in sorted(glob.glob(os.path.join(MEAS, "ncu_*.csv"))):
        name = os.path.basename(ncu)[4:-4]
        p = read_log(os.path.join(MEAS, name + ".log"))
        metrics = read_ncu(ncu)
        rows.append((name, p["median_us"], metrics))
        with open(os.path.join(EXP, name + ".yaml"), "w") as f:
            f.write(experiment(name, p))
    with open(os.path.join(MEAS, "cases.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["case", "median_us"] + METRICS)
        w.writerow(["", "us"] + [rows[0][2][m][1] for m in METRICS])
        for name, median, metrics in rows:
            w.writerow([name, median] + [metrics[m][0] for m in METRICS])
    print(f"{len(rows)} cases: {os.path.relpath(MEAS, ROOT)}/cases.csv, {os.path.relpath(EXP, ROOT)}/")


if __name__ == "__main__":
    main()
