#!/usr/bin/env python3
"""The decode-stages probe's cases (measurements/h100/decode_stages) through the simulator.

Prints, per tile and shape, ns per k-step measured / simulated for stages 1, 2, 3, 4 and 6: the
median block's duration over its k-steps, from `tilesim run --timeline`, against the measured
median program. Extra arguments are passed to every run as `--set` values, for example
    python3 calibration/production/decode_stages_sim.py "arch_overrides={compute: ...}"
Run from the repository root after `make build` (BIN=path overrides ./build/tilesim).
"""
import csv
import os
import statistics
import subprocess
import sys
import tempfile

BIN = os.environ.get("BIN", "./build/tilesim")
BASE = "calibration/production/experiments/h100/triton_mm/mm_l8b_o_m16_t64x64_column.yaml"
MEASURED = "calibration/measurements/h100/decode_stages/decode_stages.csv"
STAGES = [1, 2, 3, 4, 6]
TILES = [("64x64x64", 128), ("128x128x64", 256)]  # (tile, threads) as the probe ran them
SHAPES = [(16384, 4096), (4096, 14336)]  # (k, n); m = 16


def simulated_ns_per_step(tile, threads, k, n, stages, extra, timeline):
    bm, bn, bk = (int(x) for x in tile.split("x"))
    smem = max(16384, stages * (bm * bk + bk * bn) * 2)
    sets = [f"workload.k={k}", f"workload.n={n}", f"workload.tile=[{bm}, {bn}, {bk}]",
            f"workload.stages={stages}", f"workload.threads={threads}",
            f"workload.shared_memory_bytes={smem}", "order.kind=row"] + extra
    cmd = [BIN, "run", BASE, "--timeline", timeline, "-q"]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(timeline) as fh:
        durations = [float(r["end_ns"]) - float(r["start_ns"]) for r in csv.DictReader(fh)]
    return statistics.median(durations) / (k / bk)


def main():
    measured = {}
    with open(MEASURED) as fh:
        for r in csv.DictReader(fh):
            measured[(r["tile"], int(r["k"]), int(r["n"]), int(r["stages"]))] = float(r["ns_per_step"])
    print("tile k n | measured / simulated ns per k-step, stages " + " ".join(map(str, STAGES)))
    with tempfile.TemporaryDirectory() as tmp:
        timeline = os.path.join(tmp, "timeline.csv")
        for tile, threads in TILES:
            for k, n in SHAPES:
                cells = []
                for st in STAGES:
                    sim = simulated_ns_per_step(tile, threads, k, n, st, sys.argv[1:], timeline)
                    cells.append(f"{measured[(tile, k, n, st)]:.0f}/{sim:.0f}")
                print(tile, k, n, "|", " ".join(cells))


if __name__ == "__main__":
    main()
