"""How fast does the power cap bring the SM clock down? A large Triton matmul (8192^3, the
tutorial kernel, 128x128x64 tiles, 8 warps, 3 stages, GROUP_M 8) launched from an idle GPU
(2 s asleep first), each launch timed alone with its own CUDA events, while nvidia-smi samples
the SM clock and power every 20 ms. Three regimes:
  burst:    80 launches back to back (CUTLASS-harness style: the project's CUTLASS 3 timings
            are the median of 20 launches after 3 warm-ups);
  flushed:  80 launches, a 256 MB write before each (do_bench style, without its warm-up);
  do_bench: triton.testing.do_bench as measure.py runs it (25 ms warm-up, 100 ms).
Per launch: its index, start time since the first launch (ms) and duration (us).

  python3 calibration/production/clock_transient_probe.py --out DIR     (device machine)
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import torch
from triton.testing import do_bench

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton_kernels as tk  # noqa: E402
from probe_io import write_rows  # noqa: E402

M = N = K = 8192
BM, BN, BK, WARPS, STAGES, GROUP = 128, 128, 64, 8, 3, 8
LAUNCHES = 80


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    a = torch.randn((M, K), device="cuda", dtype=torch.float16)
    b = torch.randn((K, N), device="cuda", dtype=torch.float16) / 90.0
    c = torch.empty((M, N), device="cuda", dtype=torch.float16)
    flush = torch.empty(256 << 20, device="cuda", dtype=torch.uint8)
    grid = ((M // BM) * (N // BN),)

    def launch():
        tk.matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                               c.stride(1), GROUP, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, num_warps=WARPS,
                               num_stages=STAGES)
    launch()
    torch.cuda.synchronize()
    rows, smi_rows = [], []
    for regime in ("burst", "flushed", "do_bench"):
        time.sleep(2.0)
        smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw", "--format=csv,noheader,nounits",
                                "-lms", "20"], stdout=subprocess.PIPE, text=True)
        time.sleep(0.3)
        t0 = time.time()
        if regime == "do_bench":
            ms = do_bench(launch, warmup=25, rep=100, return_mode="median")
            rows.append(dict(regime=regime, launch="median", us=ms * 1e3))
        else:
            ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(LAUNCHES)]
            first = torch.cuda.Event(enable_timing=True)
            first.record()
            for s, e in ev:
                if regime == "flushed":
                    flush.zero_()
                s.record()
                launch()
                e.record()
            torch.cuda.synchronize()
            for i, (s, e) in enumerate(ev):
                rows.append(dict(regime=regime, launch=i, start_ms=first.elapsed_time(s), us=s.elapsed_time(e) * 1e3))
            durs = [r["us"] for r in rows if r["regime"] == regime]
            print(f"{regime}: first {durs[0]:.0f} us, launches 4-23 median {statistics.median(durs[3:23]):.0f} us, "
                  f"last 20 median {statistics.median(durs[-20:]):.0f} us", flush=True)
        time.sleep(0.3)
        smi.terminate()
        for line in smi.communicate()[0].splitlines():
            parts = [p.strip() for p in line.split(",")]
            if len(parts) == 3:
                smi_rows.append(dict(regime=regime, t_since_start_s=round(time.time() - t0, 3), timestamp=parts[0],
                                     sm_clock_mhz=parts[1], power_w=parts[2]))
        if regime == "do_bench":
            print(f"do_bench median {rows[-1]['us']:.0f} us", flush=True)
    write_rows(os.path.join(args.out, "clock_transient.csv"), rows)
    write_rows(os.path.join(args.out, "clock_transient_smi.csv"), smi_rows)


if __name__ == "__main__":
    main()
