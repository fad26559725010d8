#!/usr/bin/env python3
"""Turns calibration/measurements/h100/cutlass3_waves/run.log (CUTLASS 3 cooperative and
ping-pong GEMMs from one program to two waves, timed on the H100) into what `tilesim validate`
reads: `cases.csv` (case, median_us) beside the log, and one experiment per case under
calibration/production/experiments/h100/cutlass3_waves/. Durations only: no counters.

Usage: python3 calibration/production/cutlass3_waves_cases.py   (from the repository root)
"""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEAS = os.path.join(ROOT, "calibration/measurements/h100/cutlass3_waves")
EXP = os.path.join(ROOT, "calibration/production/experiments/h100/cutlass3_waves")
# The kernels as cutlass3_gemm.cu builds them (its ptxas and launch lines).
KERNELS = {
    "coop": dict(tile=(128, 128, 64), stages=6, smem=214016, schedule="cooperative"),
    "pingpong": dict(tile=(64, 128, 64), stages=9, smem=None, schedule="pingpong"),
}


def main():
    os.makedirs(EXP, exist_ok=True)
    rows = []
    lines = open(os.path.join(MEAS, "run.log")).read().splitlines()
    for head, result in zip(lines, lines[1:]):
        m = re.match(r"== (pingpong )?(\d+) (\d+) (\d+)$", head)
        r = re.match(r"ctas (\d+) median_us ([\d.]+)", result)
        if not m or not r:
            continue
        kind = "pingpong" if m.group(1) else "coop"
        M, N, K = (int(m.group(i)) for i in (2, 3, 4))
        ctas, median = int(r.group(1)), float(r.group(2))
        k = KERNELS[kind]
        name = f"{kind}_{M}x{N}x{K}_p{ctas}"
        tm, tn, tk = k["tile"]
        smem = f", shared_memory_bytes: {k['smem']}" if k["smem"] else ""
        waves = "one wave or less" if (M // tm) * (N // tn) <= 132 else "more than one wave"
        text = "\n".join([
            f"# CUTLASS 3 {k['schedule']} GEMM {M}x{N}x{K} on {ctas} programs ({waves}), timed by",
            "# calibration/kernels/cutlass3_gemm.cu (calibration/measurements/h100/cutlass3_waves/)",
            f"name: {name}",
            "arch: h100",
            f"workload: {{kind: gemm, m: {M}, n: {N}, k: {K}, dtype: fp16, layout: {{a: row, b: col, c: row}}, "
            f"tile: [{tm}, {tn}, {tk}], stages: {k['stages']}{smem}, schedule: {k['schedule']}, persistent: {ctas}}}",
            "order: {kind: cutlass_sm90, raster: heuristic, max_swizzle: 1}",
            # --warmup 2 --iters 10 (README.md): the median of 10 launches after 2, from idle
            "sim: {cold_l2: kernel, timing: {warmup: 2, launches: 10}}",
            f"validate: {{case: {name}, family: cutlass3_waves_{kind}, group: {kind}, subset: validation}}",
        ]) + "\n"
        open(os.path.join(EXP, name + ".yaml"), "w").write(text)
        rows.append((name, median))
    with open(os.path.join(MEAS, "cases.csv"), "w") as f:
        f.write("case,median_us\n")
        for name, median in rows:
            f.write(f"{name},{median}\n")
    print(f"{len(rows)} cases: {MEAS}/cases.csv, {EXP}/")


if __name__ == "__main__":
    main()
