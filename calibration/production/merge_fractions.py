#!/usr/bin/env python3
"""The share of a Triton matmul's read sectors the L2 request coalescer merged, measured against
simulated, per case.

Measured: 1 - lts__t_sectors_srcunit_tex_op_read / the sectors the tiles hold (grid x (BM + BN)
x K x 2 bytes / 32; Triton's copies bypass L1, so every tile byte is requested once and what
the L2 does not see was merged: production/l2_requests). Simulated: coalesced_sectors over
read + coalesced sectors of `tilesim run --json`.

  python3 calibration/production/merge_fractions.py [REGEX | @FILE] [--tilesim build/tilesim]
      [--set K=V ...] [--profiler-clock] [--figures] [--summary] [-j N]

REGEX picks cases by name (default: 4096^3 and Llama3-8B up at M = 2048 in row, column and
grouped(8) order); @FILE takes the case names listed in FILE (whitespace-separated).
--profiler-clock simulates each case at the SM clock Nsight Compute recorded for it, power cap
off (sm__cycles_elapsed.avg.per_second), so that the durations compare with its
gpu__time_duration; without it the preset's clock (its power cap) is used. --figures adds the
L2 hit rate (Nsight Compute's definition, cold L2), DRAM read bytes and duration, measured and
simulated; --summary ends with the mean absolute errors by tile and order (decode, M <= 512, apart).
"""
import argparse
import collections
import concurrent.futures
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


def selected(pattern):
    paths = sorted(glob.glob(os.path.join(EXP, "*.yaml")))
    if pattern.startswith("@"):
        names = set(open(pattern[1:]).read().split())
        return [p for p in paths if os.path.basename(p)[:-5] in names]
    return [p for p in paths if re.search(pattern, os.path.basename(p)[:-5])]


def one_case(path, meas, args, tmp):
    y = yaml.safe_load(open(path))
    case = y["name"]
    r = meas[case]
    w = y["workload"]
    bm, bn, _ = w["tile"]
    tiles = math.ceil(w["m"] / bm) * math.ceil(w["n"] / bn)
    sectors = tiles * (bm + bn) * w["k"] * 2 / 32
    measured = 1 - float(r["lts__t_sectors_srcunit_tex_op_read.sum"]) / sectors
    out = os.path.join(tmp, case + ".json")
    cmd = [args.tilesim, "run", path, "-q", "--json", out]
    if args.profiler_clock:
        mhz = float(r["sm__cycles_elapsed.avg.per_second"]) / 1e6
        cmd += ["--set", f"arch_overrides.sm.clock_mhz={mhz}", "--set", "arch_overrides.power.cap_w=0"]
    for s in args.set:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    k = json.load(open(out))["kernels"][0]
    l2 = k["l2"]
    row = {"case": case, "tile_sectors": sectors, "measured_merged": measured,
           "simulated_merged": l2["coalesced_sectors"] / (l2["read_sectors"] + l2["coalesced_sectors"]),
           "measured_hit": float(r["lts__t_sector_hit_rate.pct"]), "simulated_hit": 100 * l2["lookup_hit_rate"],
           "measured_dram": float(r["dram__bytes_read.sum"]), "simulated_dram": float(k["dram"]["read_bytes"]),
           "measured_ns": float(r["gpu__time_duration.sum"]), "simulated_ns": float(k["duration_ns"])}
    return row


def summary(rows):
    groups = collections.defaultdict(list)
    for r in rows:
        tile = re.search(r"_t(\d+x\d+(w4)?)_", r["case"]).group(1)
        order = next(o for o in ("grouped", "row", "column") if o in r["case"])
        decode = re.search(r"_m(16|128|512)_", r["case"]) is not None
        groups[("decode", "-") if decode else (tile, order)].append(r)
    groups[("all", "")] = rows
    print("\ntile,order,cases,merged_mae,measured_mean,simulated_mean,hit_mae,dram_mape_pct,duration_mape_pct,duration_bias_pct")
    for (tile, order), rs in sorted(groups.items()):
        n = len(rs)
        mae = sum(abs(r["measured_merged"] - r["simulated_merged"]) for r in rs) / n
        mm = sum(r["measured_merged"] for r in rs) / n
        sm = sum(r["simulated_merged"] for r in rs) / n
        hit = sum(abs(r["measured_hit"] - r["simulated_hit"]) for r in rs) / n
        dram = 100 * sum(abs(r["simulated_dram"] / r["measured_dram"] - 1) for r in rs) / n
        dur = [r["simulated_ns"] / r["measured_ns"] - 1 for r in rs]
        print(f"{tile},{order},{n},{mae:.3f},{mm:.3f},{sm:.3f},{hit:.2f},{dram:.1f},"
              f"{100 * sum(abs(d) for d in dur) / n:.1f},{100 * sum(dur) / n:+.1f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pattern", nargs="?", default=r"^mm_(sq4096|l8b_up_m2048)_.*_(row|column|grouped8)$")
    ap.add_argument("--tilesim", default=os.path.join(ROOT, "build/tilesim"))
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--profiler-clock", action="store_true")
    ap.add_argument("--figures", action="store_true")
    ap.add_argument("--summary", action="store_true")
    ap.add_argument("-j", "--jobs", type=int, default=1)
    args = ap.parse_args()
    meas = {r["case"]: r for r in csv.DictReader(open(NCU))}
    paths = [p for p in selected(args.pattern) if os.path.basename(p)[:-5] in meas]
    head = "case,tile_sectors,measured_merged,simulated_merged"
    if args.figures:
        head += ",measured_hit,simulated_hit,measured_dram_bytes,simulated_dram_bytes,measured_ns,simulated_ns"
    print(head)
    rows = []
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for r in pool.map(lambda p: one_case(p, meas, args, tmp), paths):
            line = f"{r['case']},{r['tile_sectors']:.0f},{r['measured_merged']:.3f},{r['simulated_merged']:.3f}"
            if args.figures:
                line += (f",{r['measured_hit']:.2f},{r['simulated_hit']:.2f},{r['measured_dram']:.0f},"
                         f"{r['simulated_dram']:.0f},{r['measured_ns']:.0f},{r['simulated_ns']:.0f}")
            print(line, flush=True)
            rows.append(r)
    if args.summary and rows:
        summary(rows)


if __name__ == "__main__":
    main()
