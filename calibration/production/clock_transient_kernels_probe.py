"""The power cap's clock transient for kernels of different draws: how long each keeps the boost
clock from an idle board, and how fast it runs meanwhile (clock_transient_probe.py did one
kernel; power.average_ms was fitted on it).

Each kernel, after 3 s asleep: launches back to back for about 250 ms, each timed alone by its
own CUDA events (per launch: index, start since the first launch in ms, duration in us); after
another 3 s asleep, do_bench's median as measure.py takes it. Kernels, all fp16:
  tri_128x128_g8_8192   the tutorial Triton matmul 8192^3, 128x128x64, 8 warps, 3 stages, GROUP_M 8
  tri_128x256_g8_8192   the same, 128x256x64, 8 warps, 3 stages
  tri_64x64_row_8192    the same, 64x64x64, 4 warps, 4 stages, GROUP_M 1 (row order)
  tri_128x128_g8_4096   128x128x64 as the first, 4096^3 (a launch of ~0.25 ms)
  cublas_8192           torch.matmul 8192^3 (cuBLAS)
`--set check` runs five others instead, kept out of the fit (power_transient_fit.py):
  tri_64x64_g8_8192     64x64x64, 4 warps, 4 stages, GROUP_M 8, 8192^3
  tri_128x256_row_8192  128x256x64, 8 warps, 3 stages, row order, 8192^3
  tri_128x128_g8_l8b_up 128x128x64 GROUP_M 8, 8192 x 14336 x 4096 (Llama3-8B's up projection)
  cublas_k16384         torch.matmul 8192 x 8192 x 16384
  cublas_l70_down_4096  torch.matmul 4096 x 8192 x 28672 (Llama3-70B's down projection)
Writes transient.csv (kernel, regime, launch, start_ms, us).

  python3 calibration/production/clock_transient_kernels_probe.py --out DIR [--set fit|check]   (device machine)
"""
import argparse
import os
import sys
import time

import torch
from triton.testing import do_bench

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton_kernels as tk  # noqa: E402
from probe_io import write_rows  # noqa: E402

BURST_MS = 250.0
KERNELS = {  # name, (M, N, K), (BM, BN, BK, warps, stages, group) or None for torch.matmul
    "fit": [
        ("tri_128x128_g8_8192", (8192, 8192, 8192), (128, 128, 64, 8, 3, 8)),
        ("tri_128x256_g8_8192", (8192, 8192, 8192), (128, 256, 64, 8, 3, 8)),
        ("tri_64x64_row_8192", (8192, 8192, 8192), (64, 64, 64, 4, 4, 1)),
        ("tri_128x128_g8_4096", (4096, 4096, 4096), (128, 128, 64, 8, 3, 8)),
        ("cublas_8192", (8192, 8192, 8192), None),
    ],
    "check": [
        ("tri_64x64_g8_8192", (8192, 8192, 8192), (64, 64, 64, 4, 4, 8)),
        ("tri_128x256_row_8192", (8192, 8192, 8192), (128, 256, 64, 8, 3, 1)),
        ("tri_128x128_g8_l8b_up", (8192, 14336, 4096), (128, 128, 64, 8, 3, 8)),
        ("cublas_k16384", (8192, 8192, 16384), None),
        ("cublas_l70_down_4096", (4096, 8192, 28672), None),
    ],
}


def launcher(shape, cfg):
    m, n, k = shape
    a = torch.randn((m, k), device="cuda", dtype=torch.float16)
    b = torch.randn((k, n), device="cuda", dtype=torch.float16) / 90.0
    c = torch.empty((m, n), device="cuda", dtype=torch.float16)
    if cfg is None:
        return lambda: torch.matmul(a, b, out=c)
    bm, bn, bk, warps, stages, group = cfg
    grid = (((m + bm - 1) // bm) * ((n + bn - 1) // bn),)

    def launch():
        tk.matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                               c.stride(0), c.stride(1), group, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                               num_warps=warps, num_stages=stages)
    return launch


def burst(launch, count):
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(count)]
    first = torch.cuda.Event(enable_timing=True)
    first.record()
    for s, e in ev:
        s.record()
        launch()
        e.record()
    torch.cuda.synchronize()
    return [(first.elapsed_time(s), s.elapsed_time(e) * 1e3) for s, e in ev]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--set", choices=sorted(KERNELS), default="fit")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for name, shape, cfg in KERNELS[args.set]:
        launch = launcher(shape, cfg)
        for _ in range(3):  # compile and settle
            launch()
        torch.cuda.synchronize()
        t = time.time()
        launch()
        torch.cuda.synchronize()
        est_ms = max((time.time() - t) * 1e3, 0.05)
        time.sleep(3.0)
        launches = burst(launch, int(BURST_MS / est_ms) + 1)
        for i, (start, us) in enumerate(launches):
            rows.append(dict(kernel=name, regime="burst", launch=i, start_ms=round(start, 4), us=round(us, 2)))
        time.sleep(3.0)
        ms = do_bench(launch, warmup=25, rep=100, return_mode="median")
        rows.append(dict(kernel=name, regime="do_bench", launch="median", start_ms="", us=round(ms * 1e3, 2)))
        us = [u for _, u in launches]
        print(f"{name}: {len(us)} launches, first 3-13 {sorted(us[3:13])[5]:.0f} us, last 20 "
              f"{sorted(us[-20:])[10]:.0f} us, do_bench {ms * 1e3:.0f} us", flush=True)
    write_rows(os.path.join(args.out, "transient.csv"), rows)


if __name__ == "__main__":
    main()
