#!/usr/bin/env python3
"""Fits the h200 preset's power model (`power:` in models/archs/h200.yaml) to the H200's own draws,
instead of carrying the H100's fit (power_fit.py), and says how each fit predicts the clocks of
the points it was not fitted on.

  /usr/bin/python3 calibration/production/power_fit_h200.py      (python3-numpy, python3-scipy)

Points: an SM clock and a board draw read while a kernel ran at steady load, with the rates the
kernel sustained there (tensor TFLOP/s from its time; L2 lookups, lts__t_sectors_op_read +
op_write, and DRAM bytes per second from Nsight Compute's counts of the same production case,
measurements/h200/production/ncu_cases.csv, over that time):
  - `smi`:    time.csv's clock samples read during do_bench's load (draw >= 400 W), the rates
              from do_bench's median (power_fit.py's points);
  - `steady`: clock_steady (clock_steady_probe.py): nvidia-smi sampled during 2.5 s of flushed
              launches, the last second's medians of clock, draw and duration;
  - `inrun`:  clock_inrun's Nsight Compute reads of launch 200 of a flushed loop (clock and
              duration; the draw taken as the cap, 690 W), for its two capped cases whose counts the
              H200's production set holds.
The model, as models/power/power_clock.hpp:

  draw = idle + (w_tf * TF + w_l2 * L2) * (f / 1980)^beta + w_dram * DRAM

fitted by least squares on the draws (W). Reported: the fit on every point, and two fits that
each leave one group of points out (`steady`: the persistent kernels without the flattened loop
and the one-tile-per-program kernels of their shapes, families time.csv's samples do not hold;
then `smi` + `inrun`), each with the clocks it predicts, from the measured rates scaled with the
clock (compute-bound), for the points left out.
"""
import csv
import json
import os
import sys

import numpy as np
from scipy.optimize import least_squares

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import power_fit as pf  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "measurements", "h200")
INRUN = {"sq8192_t128x128_grouped8": "mm_sq8192_m8192_t128x128_grouped8",
         "l8b_up_m8192_t128x256_column": "mm_l8b_up_m8192_t128x256_column"}  # g3_o: not in the H200's set


def points():
    """(source, case, TFLOP/s, DRAM TB/s, L2 TB/s, MHz, W)."""
    counts = pf.case_counts("h200")
    time_csv = os.path.join(ROOT, "production", "time.csv")
    params = {r["case"]: json.loads(r["params"]) for r in csv.DictReader(open(time_csv))}
    out = [("smi",) + c for c in pf.sampled_cases("h200") if c[5] >= 400]
    for r in csv.DictReader(open(os.path.join(ROOT, "clock_steady", "steady.csv"))):
        out.append(("steady", r["case"]) + pf.case_rates(params[r["case"]], counts[r["case"]], float(r["last_s_us"]))
                   + (float(r["last_s_mhz"]), float(r["last_s_w"])))
    for r in csv.DictReader(open(os.path.join(ROOT, "clock_inrun", "ncu.csv"))):
        case = INRUN.get(r["case"])
        if case and r["launch"] == "200":
            mhz = float(r["sm__cycles_elapsed.avg.per_second"]) / 1e6
            us = float(r["gpu__time_duration.sum"]) / 1e3
            out.append(("inrun", case) + pf.case_rates(params[case], counts[case], us)
                       + (mhz, pf.CAP))
    return out


def draw(x, tf, dram, l2, f):
    return pf.IDLE + pf.sm_power(x, tf, l2, f) + x[1] * dram


def fit(pts):
    tf, dram, l2, f, w = (np.array([p[i] for p in pts]) for i in (2, 3, 4, 5, 6))
    return least_squares(lambda x: draw(x, tf, dram, l2, f) - w, [0.5, 70, 40, 0.55],
                         bounds=([0, 0, 0, 0], [5, 500, 500, 4])).x


def report(name, x, pts):
    print(f"{name}: w_per_tflops {x[0]:.3f}, w_per_dram_tbps {x[1]:.1f}, w_per_l2_tbps {x[2]:.1f}, "
          f"voltage_exponent {x[3]:.2f}")
    errs = []
    for src, case, tf, dram, l2, f, w in pts:
        pred = pf.predicted_clock(x, tf, dram, l2, f) if w >= 675 else None
        if pred:
            errs.append(abs(pred / f - 1))
        print(f"  {src:6s} {case:42s} TF {tf:4.0f} L2 {l2:5.2f} DRAM {dram:4.2f}  {f:5.0f} MHz {w:4.0f} W  "
              f"model {draw(x, tf, dram, l2, f):4.0f} W" + (f", clock {pred:5.0f}" if pred else ""))
    if errs:
        print(f"  capped points' clocks: mean |error| {100 * np.mean(errs):.1f}%, max {100 * np.max(errs):.1f}% "
              f"over {len(errs)}")


def main():
    pts = points()
    h100 = [0.475, 69.6, 42.8, 0.55]
    report("the H100's fit (the h200 preset's)", h100, pts)
    for left in ("steady", "smi"):
        held = [p for p in pts if p[0] == left or (left == "smi" and p[0] == "inrun")]
        rest = [p for p in pts if p not in held]
        report(f"\nfitted without {left}{' + inrun' if left == 'smi' else ''}, on {len(rest)} points; "
               f"the {len(held)} left out", fit(rest), held)
    report(f"\nfitted on all {len(pts)} points", fit(pts), pts)


if __name__ == "__main__":
    main()
