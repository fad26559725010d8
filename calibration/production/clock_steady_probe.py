"""The SM clock and power each kernel settles at under sustained flushed launches, sampled by
nvidia-smi while the kernel runs (not after it, as time.csv's `clocks`), with the launches'
own durations at that clock. For kernels whose clock nobody sampled: the production set's
persistent Triton matmuls without the flattened loop, whose grouped(8) forms run 12-16%
faster in the simulator than measured while their GROUP_M 1 forms are within 2-8%
(docs/validation.md), and the one-tile-per-program kernels of the same shapes for contrast.

Per case (the production set's own launch, measure.py's runner, so the kernel is the one
time.csv timed): one launch to compile, 2 s asleep, then flushed launches (256 MB written
before each, as do_bench) back to back for SUSTAIN_S seconds, each timed by its own CUDA
events, while `nvidia-smi -lms 50` samples clocks.sm and power.draw. Rows to OUT/steady.csv:
case, launches, median duration of the last second's launches (us), median sampled SM clock
and power over the last second, and the same for the first 20 ms (the window from idle).
Raw samples to OUT/samples.csv (case, t since the first launch in ms, MHz, W) and launches to
OUT/launches.csv (case, launch, start ms, us).

  python3 calibration/production/clock_steady_probe.py --out DIR [--cases NAME[@k=K][@programs=P][@stages=S],...]   (device machine)
"""
import argparse
import os
import statistics
import subprocess
import sys
import threading
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases as case_list  # noqa: E402
import measure  # noqa: E402
from probe_io import write_rows  # noqa: E402

SUSTAIN_S = 2.5


class Sampler:
    """nvidia-smi's clock and power every 50 ms, stamped on arrival (perf_counter seconds)."""

    def __init__(self):
        self.rows, self.lock = [], threading.Lock()
        self.p = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits",
                                   "-lms", "50"], stdout=subprocess.PIPE, text=True, bufsize=1)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            parts = [x.strip() for x in line.split(",")]
            try:
                mhz, w = float(parts[0]), float(parts[1])
            except (ValueError, IndexError):
                continue
            with self.lock:
                self.rows.append((time.perf_counter(), mhz, w))

    def between(self, t0, t1):
        with self.lock:
            return [(t, m, w) for t, m, w in self.rows if t0 <= t <= t1]

    def stop(self):
        self.p.terminate()


def sustain(launch, flush):
    """Flushed launches back to back for SUSTAIN_S; (host start s, [(start ms, us)]). The host
    keeps one batch of 16 queued ahead of the GPU, so the launches follow each other without gaps
    and the host clock tracks the GPU's."""
    evs = []
    torch.cuda.synchronize()
    t_host = time.perf_counter()
    first = torch.cuda.Event(enable_timing=True)
    first.record()
    while time.perf_counter() - t_host < SUSTAIN_S:
        for _ in range(16):
            flush.zero_()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            launch()
            e.record()
            evs.append((s, e))
        if len(evs) > 16:
            evs[-17][1].synchronize()
    torch.cuda.synchronize()
    return t_host, [(first.elapsed_time(s), s.elapsed_time(e) * 1e3) for s, e in evs]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", help="comma-separated production case names, each optionally with @KEY=N "
                    "suffixes (k, programs, stages, warps) for the case with other parameters (default: the noflat persistent "
                    "cases and the one-tile-per-program cases of their shapes)")
    args = ap.parse_args()
    every = [c for c in case_list.build_cases() if c["family"] in ("triton_mm", "triton_persistent")]
    if args.cases:
        by_name = {c["case"]: c for c in every}
        chosen = []
        for name in args.cases.split(","):
            # NAME@k=K@programs=P: the production case with other integer parameters (to part a
            # per-tile cost from a per-step one, or to load fewer SMs)
            base, *sets = name.split("@")
            c = dict(by_name[base], case=name)
            for kv in sets:
                key, _, val = kv.partition("=")
                c[key] = int(val)
            chosen.append(c)
    else:
        chosen = [c for c in every
                  if c["case"].endswith("_noflat") or (c["set"] == "persistent" and c["case"].endswith("_p"))]
    os.makedirs(args.out, exist_ok=True)
    flush = torch.empty(256 << 20, device="cuda", dtype=torch.uint8)
    pool = measure.Pool()
    sampler = Sampler()
    steady, samples, launches = [], [], []
    for c in chosen:
        launch = measure.runner(c, pool)[0]
        launch()
        torch.cuda.synchronize()
        time.sleep(2.0)
        t_host, evs = sustain(launch, flush)
        end_ms = evs[-1][0] + evs[-1][1] / 1e3
        last = [us for st, us in evs if st >= end_ms - 1000.0]
        first = [us for st, us in evs if st < 20.0]
        smp = sampler.between(t_host, t_host + end_ms / 1e3 + 0.05)
        for t, mhz, w in smp:
            samples.append(dict(case=c["case"], t_ms=round((t - t_host) * 1e3, 1), mhz=mhz, w=w))
        tail = [(m, w) for t, m, w in smp if (t - t_host) * 1e3 >= end_ms - 1000.0]
        head = [(m, w) for t, m, w in smp if (t - t_host) * 1e3 < 20.0]
        row = dict(case=c["case"], launches=len(evs), last_s_us=round(statistics.median(last), 2),
                   first_20ms_us=round(statistics.median(first), 2) if first else "",
                   last_s_mhz=statistics.median(m for m, _ in tail) if tail else "",
                   last_s_w=statistics.median(w for _, w in tail) if tail else "",
                   first_20ms_mhz=statistics.median(m for m, _ in head) if head else "",
                   samples_last_s=len(tail))
        steady.append(row)
        print(row, flush=True)
        for i, (st, us) in enumerate(evs):
            launches.append(dict(case=c["case"], launch=i, start_ms=round(st, 4), us=round(us, 2)))
    sampler.stop()
    write_rows(os.path.join(args.out, "steady.csv"), steady)
    write_rows(os.path.join(args.out, "samples.csv"), samples)
    write_rows(os.path.join(args.out, "launches.csv"), launches)


if __name__ == "__main__":
    main()
