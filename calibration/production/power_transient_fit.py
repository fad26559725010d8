#!/usr/bin/env python3
"""The power controller's window from an idle board: `power.peak_w` and `power.average_ms`.

From an idle board a large kernel first runs faster than under sustained load, until the
controller's average of the draw reaches the cap (models/power/power_clock.hpp). Two figures
describe that window: how fast the kernel runs inside it (the clock at which its draw meets
peak_w, the fast limit) and how long it lasts (average_ms, the averaging time constant).

1. peak_w, fitted on calibration/measurements/h200/clock_transient_kernels (five kernels, each
   launched back to back from idle: Triton matmuls of 128x128, 128x256 and 64x64 tiles at
   8192^3 and 128x128 at 4096^3, cuBLAS at 8192^3): the median of launches 2-11 against the
   simulated launch of `sim.timing: {launches: 10}` for each candidate, the least mean absolute
   error kept.
2. average_ms, fitted on calibration/measurements/h100/clock_transient (the 128x128 kernel,
   back to back and with a 256 MB write before each launch): the window is taken as the time
   from the first launch to the first launch slower than halfway between the window's level
   (launches 2-20) and the capped level (the last 20); the model puts it at
   average_ms * ln((P - idle) / (P - cap)), P the draw inside the window, and tilesim reports
   that log factor (a run with average_ms = 1). The H200's windows are predicted with it.
3. A check on five other kernels (clock_transient_kernels/check, never fitted on): their window
   levels at the fitted peak_w and at the boost clock, their windows at the fitted average_ms.

    python3 calibration/production/power_transient_fit.py [build/tilesim]
"""
import concurrent.futures
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
E = "calibration/production/experiments/{gpu}/"
PROBE_KERNELS = {  # the probe's kernel -> the experiment that describes it
    "tri_128x128_g8_8192": "triton_mm/mm_sq8192_m8192_t128x128_grouped8",
    "tri_128x256_g8_8192": "triton_mm/mm_sq8192_m8192_t128x256_grouped8",
    "tri_64x64_row_8192": "triton_mm/mm_sq8192_m8192_t64x64_row",
    "tri_128x128_g8_4096": "triton_mm/mm_sq4096_m4096_t128x128_grouped8",
    "cublas_8192": "cublas_mm/cublas_k8192_m8192",
}
CHECK_KERNELS = {  # the probe's `--set check`, kept out of the fit
    "tri_64x64_g8_8192": "triton_mm/mm_sq8192_m8192_t64x64_grouped8",
    "tri_128x256_row_8192": "triton_mm/mm_sq8192_m8192_t128x256_row",
    "tri_128x128_g8_l8b_up": "triton_mm/mm_l8b_up_m8192_t128x128_grouped8",
    "cublas_k16384": "cublas_mm/cublas_k16384_m8192",
    "cublas_l70_down_4096": "cublas_mm/cublas_l70_down_m4096",
}
PEAKS = range(760, 961, 20)


def simulate(tilesim, gpu, experiment, *sets):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        args = [tilesim, "run", os.path.join(ROOT, E.format(gpu=gpu) + experiment + ".yaml"), "--json", out, "--quiet"]
        for s in sets:
            args += ["--set", s]
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            return json.load(f)["total"]


def read_launches(path, kernel_column):
    runs = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            if row["start_ms"]:  # do_bench's line has its median only
                key = (row[kernel_column] if kernel_column else "", row["regime"])
                runs.setdefault(key, []).append((float(row["start_ms"]), float(row["us"])))
    return runs


def window(launches):
    level = statistics.median(us for _, us in launches[2:21])
    capped = statistics.median(us for _, us in launches[-20:])
    half = (level + capped) / 2
    first = next(start for start, us in launches[2:] if us > half)
    return first - launches[0][0], level, capped


def fit_peak(tilesim):
    runs = read_launches(os.path.join(ROOT, "calibration/measurements/h200/clock_transient_kernels/transient.csv"), "kernel")
    level = {k: statistics.median(us for _, us in runs[(k, "burst")][2:12]) for k in PROBE_KERNELS}
    jobs = {(p, k): (tilesim, "h200", e, "sim.timing={launches: 10}", "arch_overrides.power.peak_w=%d" % p)
            for p in [0] + list(PEAKS) for k, e in PROBE_KERNELS.items()}  # 0: no fast limit
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        sims = dict(zip(jobs, pool.map(lambda a: simulate(*a), jobs.values())))
    best = None
    for p in [0] + list(PEAKS):
        errs = [sims[(p, k)]["duration_ns"] / 1e3 / level[k] - 1 for k in PROBE_KERNELS]
        mae = statistics.mean(abs(e) for e in errs)
        print("peak_w %4s: %s  mean |error| %.1f%%" % (p or "none", " ".join("%+6.1f" % (100 * e) for e in errs), 100 * mae))
        if p and (best is None or mae < best[1]):
            best = (p, mae)
    print("(kernels: %s; the measured launches 2-11: %s us)" %
          (", ".join(PROBE_KERNELS), ", ".join("%.0f" % level[k] for k in PROBE_KERNELS)))
    print("fitted on the H200: peak_w %d" % best[0])
    return best[0], runs


def main(argv):
    tilesim = argv[1] if len(argv) > 1 else os.path.join(ROOT, "build/tilesim")
    peak, probe_runs = fit_peak(tilesim)
    factor = lambda gpu, exp: simulate(tilesim, gpu, exp, "sim.timing={launches: 80}", "arch_overrides.power.average_ms=1",
                                       "arch_overrides.power.peak_w=%d" % peak)["boost_window_ms"]
    h100 = read_launches(os.path.join(ROOT, "calibration/measurements/h100/clock_transient/clock_transient.csv"), None)
    f100 = factor("h100", PROBE_KERNELS["tri_128x128_g8_8192"])
    measured = []
    for (_, regime), launches in sorted(h100.items()):
        w, level, capped = window(launches)
        measured.append(w)
        print("h100 %-8s window %.1f ms (%.0f us a launch, then %.0f)" % (regime, w, level, capped))
    tau = statistics.mean(measured) / f100
    print("h100 model: window = average_ms x %.3f; fitted average_ms %.1f" % (f100, tau))
    h200 = read_launches(os.path.join(ROOT, "calibration/measurements/h200/clock_transient/clock_transient.csv"), None)
    f200 = factor("h200", PROBE_KERNELS["tri_128x128_g8_8192"])
    for (_, regime), launches in sorted(h200.items()):
        w = window(launches)[0]
        print("h200 %-20s window %5.1f ms, predicted %5.1f" % ("128x128 " + regime, w, tau * f200))
    for k, e in PROBE_KERNELS.items():
        w = window(probe_runs[(k, "burst")])[0]
        print("h200 %-20s window %5.1f ms, predicted %5.1f" % (k, w, tau * factor("h200", e)))
    check = read_launches(os.path.join(ROOT, "calibration/measurements/h200/clock_transient_kernels/check/transient.csv"),
                          "kernel")
    errors = {peak: [], 0: []}
    for k, e in CHECK_KERNELS.items():
        w, level, capped = window(check[(k, "burst")])
        level = statistics.median(us for _, us in check[(k, "burst")][2:12])
        sims = {p: simulate(tilesim, "h200", e, "sim.timing={launches: 10}", "arch_overrides.power.peak_w=%d" % p,
                            "arch_overrides.power.average_ms=%g" % tau) for p in (peak, 0)}
        for p in (peak, 0):
            errors[p].append(sims[p]["duration_ns"] / 1e3 / level - 1)
        print("check %-22s window's launches %5.0f us: %+5.1f%% at peak_w, %+5.1f%% at the boost clock; window %5.1f ms, "
              "predicted %5.1f" % (k, level, 100 * errors[peak][-1], 100 * errors[0][-1], w, sims[peak]["boost_window_ms"]))
    print("check: mean |error| %.1f%% at peak_w %d, %.1f%% at the boost clock" %
          (100 * statistics.mean(abs(x) for x in errors[peak]), peak, 100 * statistics.mean(abs(x) for x in errors[0])))


if __name__ == "__main__":
    main(sys.argv)
