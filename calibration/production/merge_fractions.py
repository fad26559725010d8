#!/usr/bin/env python3
"""The share of a Triton matmul's read sectors the L2 request coalescer merged, measured against
simulated, per case.

Measured: 1 - lts__t_sectors_srcunit_tex_op_read / the sectors the tiles hold (grid x (BM + BN)
x K x 2 bytes / 32; Triton's copies bypass L1, so every tile byte is requested once and what
the L2 does not see was merged: production/l2_requests). Simulated: coalesced_sectors over
read + coalesced sectors of `tilesim run --json`.

  python3 calibration/production/merge_fractions.py [REGEX] [--tilesim build/tilesim] [--set K=V ...]
"""
import argparse
import csv
import glob
import json
import math
import os
import re
import subprocess
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXP = os.path.join(ROOT, "calibration/production/experiments/h100/triton_mm")
NCU = os.path.join(ROOT, "calibration/measurements/h100/production/ncu_cases.csv")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("regex", nargs="?", default=r"^mm_(sq4096|l8b_up_m2048)_.*_(row|column|grouped8)$")
    ap.add_argument("--tilesim", default=os.path.join(ROOT, "build/tilesim"))
    ap.add_argument("--set", action="append", default=[])
    args = ap.parse_args()
    meas = {r["case"]: r for r in csv.DictReader(open(NCU))}
    print("case,tile_sectors,measured_merged,simulated_merged")
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted(glob.glob(os.path.join(EXP, "*.yaml"))):
            y = yaml.safe_load(open(path))
            case = y["name"]
            if not re.search(args.regex, case) or case not in meas:
                continue
            w = y["workload"]
            bm, bn, _ = w["tile"]
            tiles = math.ceil(w["m"] / bm) * math.ceil(w["n"] / bn)
            sectors = tiles * (bm + bn) * w["k"] * 2 / 32
            measured = 1 - float(meas[case]["lts__t_sectors_srcunit_tex_op_read.sum"]) / sectors
            out = os.path.join(tmp, case + ".json")
            cmd = [args.tilesim, "run", path, "-q", "--json", out]
            for s in args.set:
                cmd += ["--set", s]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            l2 = json.load(open(out))["kernels"][0]["l2"]
            sim = l2["coalesced_sectors"] / (l2["read_sectors"] + l2["coalesced_sectors"])
            print(f"{case},{sectors:.0f},{measured:.3f},{sim:.3f}", flush=True)


if __name__ == "__main__":
    main()
