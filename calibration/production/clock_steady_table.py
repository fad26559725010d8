#!/usr/bin/env python3
"""The clock_steady cases (measurements/h200/clock_steady, its k_sweep/, and lone_wait/) through the
simulator at the SM clock each was measured at, power cap off: the main loop and the memory
system judged without the power model.

  python3 calibration/production/clock_steady_table.py [KEY=VALUE ...]      (BIN=./build/tilesim)

Each KEY=VALUE is passed to every run as a `--set`, for example
arch_overrides.compute.mainloops.wgmma_cp_async.load_use_ns=700. Prints per case the measured
duration (the median of the last second of sustained flushed launches), the simulated one and the
error, then the mean error of the persistent kernels without the flattened loop (one program per
SM) and of the one-tile-per-program kernels (two blocks per SM).
"""
import concurrent.futures
import csv
import json
import os
import subprocess
import sys
import tempfile

BIN = os.environ.get("BIN", "./build/tilesim")
E = "calibration/production/experiments/h200"
M = "calibration/measurements/h200/clock_steady"
# clock_steady_probe.py's NAME@KEY=N suffixes, as the experiments' --set overrides (a 128x128x64
# fp16 stage holds 32 KiB of A and B: Triton's shared memory grows with the stages)
SUFFIX_SETS = {"k": lambda v: [f"workload.k={v}"], "programs": lambda v: [f"workload.persistent={v}"],
               "stages": lambda v: [f"workload.stages={v}", f"workload.shared_memory_bytes={32768 * int(v)}"]}
NOFLAT, ONE_TILE = "noflat (one program per SM)", "one tile per program (two blocks per SM)"


def cases():
    rows = list(csv.DictReader(open(os.path.join(M, "steady.csv"))))
    # k_sweep/ repeats one case as it is; only its cases with other parameters are new
    rows += [r for r in csv.DictReader(open(os.path.join(M, "k_sweep", "steady.csv"))) if "@" in r["case"]]
    # lone_wait/ (another day) repeats the noflat grouped(8) case as it is, as a control
    lone = os.path.join(os.path.dirname(M), "lone_wait", "steady.csv")
    rows += [dict(r, case=r["case"] + ("@again" if "@" not in r["case"] else "")) for r in csv.DictReader(open(lone))]
    return rows


def simulate(row, extra):
    name, *suffixes = row["case"].split("@")
    folder = "triton_persistent" if name.startswith("pmm_") else "triton_mm"
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        cmd = [BIN, "run", f"{E}/{folder}/{name}.yaml", "--quiet", "--json", out,
               "--set", "arch_overrides.power.cap_w=0", "--set", f"arch_overrides.sm.clock_mhz={row['last_s_mhz']}"]
        for kv in suffixes:
            key, _, val = kv.partition("=")
            for override in SUFFIX_SETS.get(key, lambda v: [])(val):
                cmd += ["--set", override]
        for s in extra:
            cmd += ["--set", s]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return json.load(open(out))["total"]["duration_ns"] / 1e3


def main():
    rows = cases()
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as ex:
        sims = list(ex.map(lambda r: simulate(r, sys.argv[1:]), rows))
    groups = {NOFLAT: [], ONE_TILE: []}
    print(f"{'case':48s} {'MHz':>6s} {'meas us':>8s} {'sim us':>8s} {'err':>7s}")
    for r, s in zip(rows, sims):
        m = float(r["last_s_us"])
        e = 100 * (s / m - 1)
        groups[NOFLAT if "noflat" in r["case"] else ONE_TILE].append(e)
        print(f"{r['case']:48s} {float(r['last_s_mhz']):6.0f} {m:8.1f} {s:8.1f} {e:+6.1f}%")
    for g, v in groups.items():
        print(f"{g}: {len(v)} cases, mean error {sum(v) / len(v):+.1f}%, MAPE {sum(map(abs, v)) / len(v):.1f}%")


if __name__ == "__main__":
    main()
