"""The L2 model under measured timing: every case of a set of per-program timelines (measure.py
timeline: measurements/h100/production/, h100/timeline_b/ (with its own counters), h200/timeline/)
that Nsight Compute also measured, replayed through the L2 model at the times the GPU ran its
programs (`tilesim l2-replay`), beside the simulation of the same experiment at the clock Nsight
Compute recorded, against Nsight Compute's DRAM reads.

  python3 calibration/production/l2_replay_table.py [--gpu h100|h100b|h100p|h200] [--tilesim build/tilesim] [--set KEY=VALUE]

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
# set: (timelines, Nsight Compute cases, the experiments' folder). h100b and h100p (Triton's
# persistent matmul, a program per row): timelines and counters of one run on one GPU; the others
# timelines of a later run than their counters.
SETS = {"h100": ("h100/production/timeline.csv.gz", "h100/production/ncu_cases.csv", "h100/triton_mm"),
        "h100b": ("h100/timeline_b/timeline.csv.gz", "h100/timeline_b/ncu_cases.csv", "h100/triton_mm"),
        "h100p": ("h100/persistent_timeline/persistent_timeline.csv.gz", "h100/persistent_timeline/ncu_cases.csv",
                  "h100/triton_persistent"),
        "h200": ("h200/timeline/timeline.csv.gz", "h200/production/ncu_cases.csv", "h200/triton_mm")}
MEAS = os.path.join(ROOT, "calibration", "measurements")


def ncu_rows(path):
    with open(os.path.join(MEAS, path)) as f:
        return {r["case"]: r for r in csv.DictReader(f)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpu", default="h100", choices=sorted(SETS), help="which timelines and counters")
    ap.add_argument("--tilesim", default=os.path.join(ROOT, "build", "tilesim"))
    ap.add_argument("--set", action="append", default=[],
                    help="another --set for replay and simulation, with a dotted key so that it merges "
                         "(arch_overrides.l2.replacement=lru); repeatable")
    args = ap.parse_args()
    timelines, counters, family = SETS[args.gpu]
    ncu = ncu_rows(counters)
    exp = os.path.join(HERE, "experiments", family)
    with tempfile.TemporaryDirectory() as tmp:
        timeline = os.path.join(tmp, "timeline.csv")
        with gzip.open(os.path.join(MEAS, timelines), "rt") as src, open(timeline, "w") as dst:
            dst.write(src.read())
        with open(timeline) as f:
            cases = sorted({r["case"] for r in csv.DictReader(f)} & set(ncu))
        print("| case | measured GB | replay, measured timing | simulated | replay error | simulated error |")
        print("| --- | --- | --- | --- | --- | --- |")
        errs = {"replay": [], "sim": []}
        for case in cases:
            m = ncu[case]
            measured = float(m["dram__bytes_read.sum"]) / 1e9
            clock = float(m["sm__cycles_elapsed.avg.per_second"]) / 1e6
            out = os.path.join(tmp, case + ".json")
            cmd = [args.tilesim, "l2-replay", os.path.join(exp, case + ".yaml"), "--timeline", timeline, "--case", case,
                   "--set", "arch_overrides={sm: {clock_mhz: %.0f}, power: {cap_w: 0}}" % clock, "--json", out]
            for extra in args.set:
                cmd += ["--set", extra]
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
