#!/usr/bin/env python3
"""Fits the power-cap model of the h100 preset (`power:` in models/archs/h100.yaml) to the SM
clocks nvidia-smi sampled right after do_bench, and checks it on the H200's samples.

  python3 calibration/production/power_fit.py            (needs numpy and scipy: python3-scipy)

The production timings (measurements/<gpu>/production/time.csv) record, for every 20th case,
`clocks` = SM clock / memory clock / temperature / board power read right after the case's
do_bench loop. A case read at 675 W or more ran under the cap (the limit is 700 W). For each,
the rates the board sustained come from the case's do_bench time and Nsight Compute's counts
(ncu_cases.csv): tensor TFLOP/s, L2 lookups (lts__t_sectors_op_read + op_write) and DRAM bytes
per second. The model (models/power/power_clock.hpp):

  cap - idle = (w_tf * TF + w_l2 * L2) * (f / 1980)^beta + w_dram * DRAM

is fitted by least squares over the H100's capped cases (w_* in W per TFLOP/s or TB/s with
cap - idle = 690 - 145 W). Then, for every sampled case of both GPUs, the clock the model
predicts from the case's rates, assuming they scale with the clock (compute-bound), is printed
against the sampled one. The H200 is not used in the fit.
"""
import csv
import json
import os
from collections import defaultdict

import numpy as np
from scipy.optimize import brentq, least_squares

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "measurements")
CAP, IDLE, F_MAX = 690.0, 145.0, 1980.0
COUNTS = ["dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum"]


def case_counts(gpu):
    """Nsight Compute's DRAM byte and L2 sector counts (COUNTS) of each production case, summed
    over its kernels: {case: {metric: count}}."""
    counts = defaultdict(lambda: defaultdict(float))
    for r in csv.DictReader(open(os.path.join(ROOT, gpu, "production", "ncu_cases.csv"))):
        for k in COUNTS:
            if r.get(k):
                counts[r["case"]][k] += float(r[k])
    return counts


def case_rates(p, c, us):
    """(TFLOP/s, DRAM TB/s, L2 TB/s) of a GEMM with params `p` whose counts `c` took `us`."""
    tf = 2.0 * p["m"] * p["n"] * p["k"] / us / 1e6
    dram = (c["dram__bytes_read.sum"] + c["dram__bytes_write.sum"]) / us / 1e6
    l2 = (c["lts__t_sectors_op_read.sum"] + c["lts__t_sectors_op_write.sum"]) * 32 / us / 1e6
    return tf, dram, l2


def sampled_cases(gpu):
    """(case, TFLOP/s, DRAM TB/s, L2 TB/s, sampled MHz, sampled W) of every case with a clock sample."""
    counts = case_counts(gpu)
    out = []
    for r in csv.DictReader(open(os.path.join(ROOT, gpu, "production", "time.csv"))):
        if r["status"] != "ok" or not r["clocks"] or r["case"] not in counts:
            continue
        p = json.loads(r["params"])
        if not all(k in p for k in "mnk"):
            continue
        clock, _, _, watts = (float(x) for x in r["clocks"].split("/"))
        out.append((r["case"],) + case_rates(p, counts[r["case"]], float(r["median_us"])) + (clock, watts))
    return out


def sm_power(x, tf, l2, f):
    w_tf, _, w_l2, beta = x
    return (w_tf * tf + w_l2 * l2) * (f / F_MAX) ** beta


def predicted_clock(x, tf, dram, l2, f):
    """The clock at which the case's draw meets the cap, its rates scaled with the clock."""
    g = lambda F: sm_power(x, tf * F / f, l2 * F / f, F) + x[1] * dram - (CAP - IDLE)  # noqa: E731
    return F_MAX if g(F_MAX) <= 0 else brentq(g, 100, F_MAX)


def main():
    h100 = sampled_cases("h100")
    capped = [c for c in h100 if c[5] >= 675]
    tf, dram, l2, f = (np.array([c[i] for c in capped]) for i in (1, 2, 3, 4))
    fit = least_squares(lambda x: sm_power(x, tf, l2, f) + x[1] * dram - (CAP - IDLE), [0.5, 70, 40, 1.0],
                        bounds=([0, 0, 0, 0], [5, 500, 500, 4]))
    x = fit.x
    print(f"fit on {len(capped)} capped H100 cases: w_per_tflops {x[0]:.3f}, w_per_dram_tbps {x[1]:.1f}, "
          f"w_per_l2_tbps {x[2]:.1f}, voltage_exponent {x[3]:.2f}")
    for gpu, cases in (("h100", h100), ("h200", sampled_cases("h200"))):
        errs = []
        print(f"\n{gpu}: case, TFLOP/s, DRAM TB/s, L2 TB/s, sampled W, sampled MHz, predicted MHz")
        for name, t, d, l, clk, w in cases:
            pred = predicted_clock(x, t, d, l, clk)
            note = "" if w >= 400 else "  (read after the load ended: not used)"
            if not note:
                errs.append(abs(pred / clk - 1))
            print(f"  {name:46s} {t:5.0f} {d:5.2f} {l:5.2f} {w:5.0f} {clk:6.0f} {pred:6.0f}{note}")
        print(f"  {gpu}: mean |error| {100 * np.mean(errs):.1f}%, max {100 * np.max(errs):.1f}% over {len(errs)} cases")


if __name__ == "__main__":
    main()
