"""The L2 model under measured timing: every case of the per-program timelines
(measurements/h100/production/timeline.csv.gz, measure.py timeline) replayed through the L2 model
at the times the GPU ran its programs (`tilesim l2-replay`), beside the simulation of the same
experiment at the clock Nsight Compute recorded, against Nsight Compute's DRAM reads.

  python3 calibration/production/l2_replay_table.py [--tilesim build/tilesim]

Prints a markdown table (docs/validation.md, "The L2 model under measured timing").
"""
import argparse
import csv
import gzip
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MEAS = os.path.join(ROOT, "calibration", "measurements", "h100", "production")
EXP = os.path.join(HERE, "experiments", "h100", "triton_mm")


def ncu_rows():
    with open(os.path.join(MEAS, "ncu_cases.csv")) as f:
        return {r["case"]: r for r in csv.DictReader(f)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tilesim", default=os.path.join(ROOT, "build", "tilesim"))
    args = ap.parse_args()
    ncu = ncu_rows()
    with tempfile.TemporaryDirectory() as tmp:
        timeline = os.path.join(tmp, "timeline.csv")
        with gzip.open(os.path.join(MEAS, "timeline.csv.gz"), "rt") as src, open(timeline, "w") as dst:
            dst.write(src.read())
        with open(timeline) as f:
            cases = sorted({r["case"] for r in csv.DictReader(f)})
        print("| case | measured GB | replay, measured timing | simulated | replay error | simulated error |")
        print("| --- | --- | --- | --- | --- | --- |")
        errs = {"replay": [], "sim": []}
        for case in cases:
            m = ncu[case]
            measured = float(m["dram__bytes_read.sum"]) / 1e9
            clock = float(m["sm__cycles_elapsed.avg.per_second"]) / 1e6
            out = os.path.join(tmp, case + ".json")
            cmd = [args.tilesim, "l2-replay", os.path.join(EXP, case + ".yaml"), "--timeline", timeline, "--case", case,
                   "--set", "arch_overrides={sm: {clock_mhz: %.0f}, power: {cap_w: 0}}" % clock, "--json", out]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            k = json.load(open(out))["kernels"][0]
            replay = k["replay"]["dram_read_bytes"] / 1e9
            sim = k["simulated"]["dram_read_bytes"] / 1e9
            e_r, e_s = replay / measured - 1, sim / measured - 1
            errs["replay"].append(abs(e_r))
            errs["sim"].append(abs(e_s))
            print(f"| {case} | {measured:.2f} | {replay:.2f} | {sim:.2f} | {100 * e_r:+.0f}% | {100 * e_s:+.0f}% |")
            sys.stdout.flush()
        n = len(cases)
        print(f"\nDRAM read MAPE over {n} cases: replay {100 * sum(errs['replay']) / n:.1f}%, "
              f"simulated {100 * sum(errs['sim']) / n:.1f}%")


if __name__ == "__main__":
    main()
