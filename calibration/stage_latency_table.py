#!/usr/bin/env python3
"""The stage-latency probe's samples as a table: is a loaded stage slow because every line waits
a little, or because a few lines wait long and the stage waits for its slowest?

For each layout, batch and number of stream blocks: quantiles of the samples, the share of
samples more than 300 ns over the idle median ("slow"), and the per-line rate f that makes
independent lines give that share for the batch's n lines: slow = 1 - (1 - f)^n.

  python3 calibration/stage_latency_table.py [calibration/measurements/h200/stage_latency]
  python3 calibration/stage_latency_table.py --summary CSV COL,COL,...   (the probes, on the device)

The folder's polled_flag/ holds the first measurements, whose streams polled their stop flag
every round (its README says what that did); the script reads either.
"""
import collections
import csv
import gzip
import os
import statistics
import sys

def read_points(path, key):
    """A probe CSV's rows grouped by key(row); None when the file is absent."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        rows = list(csv.DictReader(f))
    pts = collections.defaultdict(list)
    for r in rows:
        pts[key(r)].append(r)
    return pts


def med(rows, col):
    return statistics.median(float(r[col]) for r in rows)


def summary(path, cols):
    """A probe's CSV as it comes off the device: per group of `cols` (in the file's order), the
    medians of the repetitions' p50, p99 and mean, the streams' GB/s and the GEMM's us a launch."""
    for key, rs in read_points(path, lambda r: tuple(r[c] for c in cols)).items():
        print(" ".join(f"{c} {k}" for c, k in zip(cols, key)) + f": p50 {med(rs, 'p50_ns'):7.0f}"
              f"  p99 {med(rs, 'p99_ns'):7.0f}  mean {med(rs, 'mean_ns'):7.0f} ns"
              f"  streams {med(rs, 'hog_gbps'):7.1f} GB/s  gemm {med(rs, 'gemm_us'):8.1f} us")


if len(sys.argv) > 3 and sys.argv[1] == "--summary":
    summary(sys.argv[2], sys.argv[3].split(","))
    sys.exit(0)
folder = sys.argv[1] if len(sys.argv) > 1 else "calibration/measurements/h200/stage_latency"

samples = collections.defaultdict(list)
with gzip.open(os.path.join(folder, "stage_samples.csv.gz"), "rt") as f:
    for r in csv.DictReader(f):
        samples[(r["layout"], int(r["batch_bytes"]), int(r["hog_blocks"]))].append(float(r["ns"]))
gbps = collections.defaultdict(list)
with open(os.path.join(folder, "stage_latency.csv")) as f:
    for r in csv.DictReader(f):
        gbps[(r["layout"], int(r["batch_bytes"]), int(r["hog_blocks"]))].append(float(r["hog_gbps"]))


def quantile(xs, q):
    return xs[min(len(xs) - 1, int(q * len(xs)))]


print("layout  batch  lines  blocks   TB/s    p10    p50    p90    p99   slow  f per line")
for key in sorted(samples, key=lambda k: (k[0] != "tile", k[1], k[2])):
    layout, batch, blocks = key
    xs = sorted(samples[key])
    base = statistics.median(samples[(layout, batch, 0)])
    slow = sum(x > base + 300 for x in xs) / len(xs)
    lines = max(1, batch // 128)
    rate = 1 - (1 - slow) ** (1 / lines) if slow < 1 else float("nan")
    tbps = statistics.median(gbps[key]) / 1000
    print(f"{layout:6s} {batch:6d} {lines:6d} {blocks:6d} {tbps:6.2f} "
          + " ".join(f"{quantile(xs, q):6.0f}" for q in (0.1, 0.5, 0.9, 0.99))
          + f"  {slow:5.3f}  {rate * 100:6.2f}%")


def lines(folder):
    """lines_h131.csv.gz: one-line samples with their line numbers under 131 streaming SMs. Are
    the slowest lines the same in both repetitions (tied to addresses) or not?"""
    path = os.path.join(folder, "lines_h131.csv.gz")
    if not os.path.exists(path):
        return
    with gzip.open(path, "rt") as f:
        rows = [(int(r["rep"]), int(r["line"]), float(r["ns"])) for r in csv.DictReader(f)]
    ns = sorted(r[2] for r in rows)
    cut = quantile(ns, 0.95)
    slow = collections.defaultdict(dict)
    for rep, line, t in rows:
        slow[line][rep] = t > cut
    twice = [v for v in slow.values() if len(v) == 2]
    p = sum(v[0] for v in twice) / len(twice)
    both = sum(v[0] and v[1] for v in twice) / len(twice)
    print(f"\none line, 131 SMs streaming: p50 {quantile(ns, 0.5):.0f}, p90 {quantile(ns, 0.9):.0f},"
          f" p99 {quantile(ns, 0.99):.0f} ns; of {len(twice)} lines timed in both repetitions {p:.3f} are in the"
          f" slowest 5% in the first, {both:.4f} in both ({p * p:.4f} if unrelated)")


def per_sm(folder):
    """stage_latency_sm.csv / samples_sm.csv.gz: the random layout measured from chosen SMs
    (--measure-sm). The dump has no SM column: its samples are in the run's order (SMs, batches,
    stream blocks, two repetitions of 2000 samples), which the CSV's rows give."""
    path = os.path.join(folder, "samples_sm.csv.gz")
    if not os.path.exists(path):  # the rerun kept no per-SM samples: its rows only
        path = os.path.join(folder, "stage_latency_sm.csv")
        if os.path.exists(path):
            print("\nmeasured from chosen SMs, random lines (p50 / p99 ns, first repetition)")
            with open(path) as f:
                for r in csv.DictReader(f):
                    if r["rep"] == "0":
                        print(f"  sm {int(r['measure_sm']):3d}  batch {int(r['batch_bytes']):6d}  streaming SMs"
                              f" {int(r['hog_blocks']):3d}  {float(r['p50_ns']):7.0f} {float(r['p99_ns']):7.0f}")
        return
    with open(os.path.join(folder, "stage_latency_sm.csv")) as f:
        runs = [(int(r["measure_sm"]), int(r["batch_bytes"]), int(r["hog_blocks"]), int(r["rep"]), int(r["samples"]))
                for r in csv.DictReader(f)]
    with gzip.open(path, "rt") as f:
        dump = list(csv.DictReader(f))
    got, at = {}, 0
    for sm, batch, blocks, rep, n in runs:
        chunk = dump[at:at + n]
        at += n
        assert int(chunk[0]["batch_bytes"]) == batch and int(chunk[0]["hog_blocks"]) == blocks, "dump out of order"
        got[(sm, batch, blocks, rep)] = [float(x["ns"]) for x in chunk]
    print("\nmeasured from chosen SMs, random lines, 131 SMs streaming: the slow samples (300 ns over the idle"
          " median) against the first SM's")
    print("  sm  batch  idle p50  p50    p99   slow  same samples slow as the first SM")
    for batch in sorted({k[1] for k in got}):
        first = None
        for sm in sorted({k[0] for k in got}):
            base = statistics.median(got[(sm, batch, 0, 0)])
            xs = got[(sm, batch, 131, 0)]
            slow = [x > base + 300 for x in xs]
            first = first or slow
            agree = sum(a == b for a, b in zip(slow, first)) / len(xs)
            ys = sorted(xs)
            print(f"{sm:4d} {batch:6d} {base:8.0f} {quantile(ys, 0.5):6.0f} {quantile(ys, 0.99):6.0f}"
                  f"  {sum(slow) / len(xs):5.3f}  {agree:5.3f}")


def ncu_metrics(path):
    """The first kernel's metrics from an `ncu --csv --metrics` file: (kernel name, {metric: value})."""
    with open(path) as f:
        # the probe's own output (its CSV header) precedes Nsight Compute's table
        rows = [r for r in csv.DictReader(line for line in f if line.startswith('"'))]
    if not rows:
        return "", {}
    name = rows[0]["Kernel Name"]
    return name, {r["Metric Name"]: float(r["Metric Value"].replace(",", "")) for r in rows if r["Kernel Name"] == name}


def gemm_load(folder):
    """gemm_load/: the stage under cuBLAS GEMMs run back to back on the other SMs. The L2 rate
    is Nsight Compute's lts__t_bytes for one launch (run alone) over the launch's time in the
    loaded run; the clock is the measuring SM's (clock64 against %globaltimer)."""
    sub = os.path.join(folder, "gemm_load")
    pts = read_points(os.path.join(sub, "stage_latency_gemm.csv"), lambda r: (r["gemm"], int(r["batch_bytes"])))
    if pts is None:
        return
    print("\nunder cuBLAS GEMMs on the other SMs (medians of three repetitions)")
    print("gemm      kernel                                     us/launch  L2 TB/s   MHz  batch    p50    p99   mean")
    for (gemm, batch), rs in pts.items():
        kernel, tbps = "", float("nan")
        ncu = os.path.join(sub, f"ncu_{gemm}.csv")
        if os.path.exists(ncu):
            kernel, m = ncu_metrics(ncu)
            if "lts__t_bytes.sum" in m and med(rs, "gemm_us") > 0 and not kernel.startswith("void splitK"):
                tbps = m["lts__t_bytes.sum"] / (med(rs, "gemm_us") * 1e-6) / 1e12
        print(f"{gemm:8s}  {kernel[:42]:42s} {med(rs, 'gemm_us'):9.1f} {tbps:8.2f} {1000 / med(rs, 'ns_per_cycle'):5.0f}"
              f" {batch:6d} {med(rs, 'p50_ns'):6.0f} {med(rs, 'p99_ns'):6.0f} {med(rs, 'mean_ns'):6.0f}")


def dram_stages(folder):
    """dram/: batches whose lines come from DRAM (`--dram 1`, lines anywhere in 4 GiB, the L2
    flushed before each repetition) and L2-hit batches, under 0-131 SMs streaming from DRAM."""
    pts = read_points(os.path.join(folder, "dram", "stage_latency_dram.csv"),
                      lambda r: (r["lines_in"], int(r["hog_blocks"]), int(r["batch_bytes"])))
    if pts is None:
        return
    print("\nstages from DRAM and L2 hits, under SMs streaming from DRAM (p50 ns, medians of three repetitions)")
    print("streams  DRAM TB/s   DRAM: 1 line   4 KiB  16 KiB  64 KiB    L2 hits: 1 line  16 KiB  64 KiB")
    for blocks in sorted({k[1] for k in pts}):
        d = lambda b: med(pts[("dram", blocks, b)], "p50_ns")
        h = lambda b: med(pts[("l2", blocks, b)], "p50_ns")
        tbps = med(pts[("dram", blocks, 16384)], "hog_gbps") / 1000
        print(f"{blocks:7d} {tbps:10.2f} {d(128):14.0f} {d(4096):7.0f} {d(16384):7.0f} {d(65536):7.0f}"
              f" {h(128):18.0f} {h(16384):7.0f} {h(65536):7.0f}")
    gemm = read_points(os.path.join(folder, "dram", "stage_latency_dram_gemm.csv"),
                       lambda r: (r["gemm"], int(r["batch_bytes"])))
    if gemm is None:
        return
    print("\nstages from DRAM beside cuBLAS GEMMs (p50 ns, medians of three repetitions)")
    print("gemm      us/launch  1 line  16 KiB  64 KiB")
    for name in dict.fromkeys(k[0] for k in gemm):
        p50 = lambda b: med(gemm[(name, b)], "p50_ns")
        print(f"{name:8s} {med(gemm[(name, 16384)], 'gemm_us'):10.1f} {p50(128):7.0f} {p50(16384):7.0f} {p50(65536):7.0f}")


def per_load(folder):
    """stage_latency_load.csv: the random layout under 1-131 streaming SMs of 1024, 256 or 128
    threads (64, 16 or 8 KiB in flight per SM): the same TB/s from fewer, deeper streams or more,
    shallower ones."""
    pts = read_points(os.path.join(folder, "stage_latency_load.csv"),
                      lambda r: (int(r["hog_threads"]), int(r["hog_blocks"]), int(r["batch_bytes"])))
    if pts is None:
        return
    print("\nstreams of 1024, 256 or 128 threads (64, 16, 8 KiB in flight per SM): medians of two repetitions")
    print("threads  SMs  in flight  TB/s   1 line p50  p99   16 KiB p50  p99   64 KiB p50  p99")
    for threads, blocks in sorted({k[:2] for k in pts}, key=lambda k: (-k[0], k[1])):
        tbps = statistics.median(float(r["hog_gbps"]) for b in (128, 16384, 65536)
                                 for r in pts[(threads, blocks, b)]) / 1000
        cells = "".join(f"   {med(pts[(threads, blocks, b)], 'p50_ns'):8.0f} {med(pts[(threads, blocks, b)], 'p99_ns'):5.0f}"
                        for b in (128, 16384, 65536))
        print(f"{threads:7d} {blocks:4d} {blocks * threads * 64 / 1024:7.0f} KiB {tbps:5.2f}{cells}")


lines(folder)
per_sm(folder)
gemm_load(folder)
dram_stages(folder)
per_load(folder)
