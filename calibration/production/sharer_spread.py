#!/usr/bin/env python3
"""How far apart the blocks that share a panel run, measured against simulated.

For the blocks running at one instant that read the same A row panel (the same B column panel),
the mean distance of each from their mean k-step, a block's k-step being its elapsed share of its
own duration times the kernel's k-steps; averaged over 200 instants and every panel. Also the
median program duration on the fast-port SMs (sm.l2_port_fast_sms of the h100 preset) over the
others'. And how many of a tile's requests come soon after another block's request of it (within
200 / 600 ns of the request that opened the tile's fill: the lookups that would find the fill
still in flight). Measured: the H100 per-program timelines (measurements/h100/production/timeline.csv.gz);
simulated: `tilesim run EXP --timeline FILE.csv` (block = tile index, row-major).

  python3 calibration/production/sharer_spread.py CASE [SIMULATED.csv ...]
"""
import csv
import gzip
import math
import os
import statistics
import sys
from collections import defaultdict

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMELINE = os.path.join(ROOT, "calibration/measurements/h100/production/timeline.csv.gz")
EXP = os.path.join(ROOT, "calibration/production/experiments/h100/triton_mm")
PRESET = os.path.join(ROOT, "models/archs/h100.yaml")


def spread(blocks, steps, fast, label):
    """blocks: (pid_m, pid_n, sm, start, end) per program."""
    span = max(b[4] for b in blocks)
    times = [span * (i + 0.5) / 200 for i in range(200)]
    out = []
    by_axis = []
    for axis in (0, 1):
        panels = defaultdict(list)
        for b in blocks:
            panels[b[axis]].append(b)
        by_axis.append(panels)
        lags = []
        for bs in panels.values():
            for t in times:
                ks = [steps * (t - s) / (e - s) for _, _, _, s, e in bs if s <= t < e]
                if len(ks) >= 2:
                    mean = statistics.mean(ks)
                    lags.append(statistics.mean(abs(k - mean) for k in ks))
        out.append(statistics.mean(lags) if lags else float("nan"))
    on_fast = [e - s for _, _, sm, s, e in blocks if sm in fast]
    others = [e - s for _, _, sm, s, e in blocks if sm not in fast]
    ratio = statistics.median(others) / statistics.median(on_fast) if on_fast and others else float("nan")
    near = [near_first(by_axis, steps, window) for window in (200, 600)]
    print(f"{label}: span {span / 1e3:.0f} us, spread A {out[0]:.1f} / B {out[1]:.1f} k-steps, "
          f"fast-port SMs {ratio:.3f}x, followers within 200 / 600 ns {near[0]:.2f} / {near[1]:.2f}")


def near_first(by_axis, steps, window_ns):
    """Share of a tile's later requests that come within window_ns of the request that opened its
    window (the first, or the first after a window closed), over the A and B panels' tiles of 32
    k-steps (by_axis: the blocks of each A panel, of each B panel); a block's k-step j is issued
    at start + (end - start) * j / steps."""
    near = later = 0
    for panels in by_axis:
        for bs in panels.values():
            if len(bs) < 2:
                continue
            for j in range(0, steps, max(1, steps // 32)):
                opened = None
                for t in sorted(s + (e - s) * j / steps for _, _, _, s, e in bs):
                    if opened is not None:
                        later += 1
                        if t - opened < window_ns:
                            near += 1
                            continue
                    opened = t
    return near / later if later else float("nan")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    case = sys.argv[1]
    w = yaml.safe_load(open(os.path.join(EXP, case + ".yaml")))["workload"]
    bm, bn, bk = w["tile"]
    steps = math.ceil(w["k"] / bk)
    grid_n = math.ceil(w["n"] / bn)
    fast = set(yaml.safe_load(open(PRESET))["sm"]["l2_port_fast_sms"])
    hw = [(int(r["pid_m"]), int(r["pid_n"]), int(r["sm"]), float(r["start_ns"]), float(r["end_ns"]))
          for r in csv.DictReader(gzip.open(TIMELINE, "rt")) if r["case"] == case]
    if not hw:
        sys.exit(f"sharer_spread.py: no case '{case}' in {TIMELINE}")
    spread(hw, steps, fast, "hardware")
    for path in sys.argv[2:]:
        sim = []
        for r in csv.DictReader(open(path)):
            b = int(r["block"])
            sim.append((b // grid_n, b % grid_n, int(r["sm"]), float(r["start_ns"]), float(r["end_ns"])))
        spread(sim, steps, fast, path)


if __name__ == "__main__":
    main()
