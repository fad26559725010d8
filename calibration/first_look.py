#!/usr/bin/env python3
"""Uncalibrated simulator vs the committed H100 measurements, case by case.

Runs ./build/tilesim on every calibration/experiments/*.yaml and prints measured versus
simulated L2 hit rate (Nsight Compute's lts__t_sector_hit_rate), DRAM read bytes and duration
(the profiler-free CUDA-event median). Standard library only. Usage, from the repository root:
    python3 calibration/first_look.py [BUILD_DIR]
This is the baseline before `tilesim validate` / `tilesim calibrate` exist (issue 4).
"""
import csv
import glob
import json
import os
import subprocess
import sys
import tempfile

build = sys.argv[1] if len(sys.argv) > 1 else "build"
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
meas_dir = os.path.join(root, "calibration", "measurements", "h100")
meas = {r["case"]: r for r in csv.DictReader(open(os.path.join(meas_dir, "ncu_metrics.csv")))}
summary = {r["case"]: r for r in csv.DictReader(open(os.path.join(meas_dir, "summary.csv")))}

print(f"| case | L2 hit measured | simulated | DRAM read measured GB | simulated | time measured us | simulated |")
print(f"| --- | --- | --- | --- | --- | --- | --- |")
with tempfile.TemporaryDirectory() as tmp:
    for yaml in sorted(glob.glob(os.path.join(root, "calibration", "experiments", "*.yaml"))):
        case = os.path.basename(yaml)[:-5]
        if case not in meas:
            continue
        out = os.path.join(tmp, case + ".json")
        subprocess.run([os.path.join(root, build, "tilesim"), "run", yaml, "-q", "--json", out], check=True)
        k = json.load(open(out))["kernels"][0]
        m, s = meas[case], summary[case]
        print(f"| {case} | {float(m['lts__t_sector_hit_rate.pct']):.1f}% | {100 * k['l2']['hit_rate']:.1f}% | "
              f"{float(m['dram__bytes_read.sum']) / 1e9:.2f} | {k['dram']['read_bytes'] / 1e9:.2f} | "
              f"{float(s['median_us']):.0f} | {k['duration_ns'] / 1e3:.0f} |")
