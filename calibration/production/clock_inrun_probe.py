"""The SM clock a Triton matmul really runs at under do_bench, and its duration there and at the
boost clock, read by Nsight Compute from the kernel itself (sm__cycles_elapsed.avg.per_second,
gpu__time_duration.sum) instead of nvidia-smi sampled after the run. The tutorial kernel
(triton_kernels.matmul_kernel) on four production shapes; each launch is preceded by a 256 MB
write, as in do_bench.

  --mode bench:  per case, do_bench's median (25 ms warm-up, 100 ms, as measure.py) and the SM
                 clock and power nvidia-smi reads right after; rows to OUT/bench.csv.
  --mode loop:   LAUNCHES flushed launches of one case back to back, for Nsight Compute to
                 profile one of them (run_clock_inrun.sh: launch 0, from an idle GPU at the boost
                 clock, and launch 200, ~0.4-1.4 s into sustained load, under the power cap).

  python3 calibration/production/clock_inrun_probe.py --mode bench [--cases cublas] --out DIR   (device machine)

The cuBLAS set (--cases cublas; run_clock_inrun.sh with SET=cublas) is torch.matmul on five
production shapes, its kernels matched by name (nvjet).
"""
import argparse
import os
import subprocess
import sys
import time

import torch
from triton.testing import do_bench

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton_kernels as tk  # noqa: E402
from probe_io import write_rows  # noqa: E402

# name: M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, warps, stages, group_m (1: row order; the number of
# tile rows: column order), as the production set's tutorial-kernel cases (time.csv).
CASES = {
    "sq8192_t128x128_grouped8": (8192, 8192, 8192, 128, 128, 64, 8, 3, 8),
    "l8b_up_m8192_t128x256_column": (8192, 14336, 4096, 128, 256, 64, 8, 3, 64),
    "l8b_up_m16_t128x128_column": (16, 14336, 4096, 128, 128, 64, 8, 3, 1),
    "g3_o_m8192_t128x128_column": (8192, 12288, 12288, 128, 128, 64, 8, 3, 64),
}
# torch.matmul (cuBLAS's nvjet kernels) on production shapes: M, N, K (2026-11-27).
CUBLAS = {
    "cublas_sq8192_m8192": (8192, 8192, 8192),
    "cublas_l70_up_m4096": (4096, 28672, 8192),
    "cublas_l8b_o_m2048": (2048, 4096, 4096),
    "cublas_g3_qkv_m8192": (8192, 36864, 12288),
    "cublas_l8b_up_m512": (512, 14336, 4096),
}


def make_launch(case):
    if case in CUBLAS:
        m, n, k = CUBLAS[case]
        a = torch.randn((m, k), device="cuda", dtype=torch.float16)
        b = torch.randn((k, n), device="cuda", dtype=torch.float16) / 90.0
        c = torch.empty((m, n), device="cuda", dtype=torch.float16)
        return lambda: torch.matmul(a, b, out=c)
    m, n, k, bm, bn, bk, warps, stages, group = CASES[case]
    a = torch.randn((m, k), device="cuda", dtype=torch.float16)
    b = torch.randn((k, n), device="cuda", dtype=torch.float16) / 90.0
    c = torch.empty((m, n), device="cuda", dtype=torch.float16)
    grid = (((m + bm - 1) // bm) * ((n + bn - 1) // bn),)

    def launch():
        tk.matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                               c.stride(1), group, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps,
                               num_stages=stages)
    return launch


def smi():
    out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True).stdout.strip().split(",")
    return float(out[0]), float(out[1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["bench", "loop"], required=True)
    ap.add_argument("--case", choices=sorted(CASES) + sorted(CUBLAS))
    ap.add_argument("--cases", default="triton", choices=["triton", "cublas"], help="bench mode: which set")
    ap.add_argument("--launches", type=int, default=230)
    ap.add_argument("--out")
    args = ap.parse_args()
    flush = torch.empty(256 << 20, device="cuda", dtype=torch.uint8)
    if args.mode == "loop":
        launch = make_launch(args.case)
        for _ in range(args.launches):
            flush.zero_()
            launch()
        torch.cuda.synchronize()
        return
    rows = []
    for case in (CASES if args.cases == "triton" else CUBLAS):
        launch = make_launch(case)
        launch()
        torch.cuda.synchronize()
        time.sleep(2.0)  # from an idle GPU, as the production set's cases
        ms = do_bench(launch, warmup=25, rep=100, return_mode="median")
        clock, power = smi()
        rows.append(dict(case=case, do_bench_us=round(ms * 1e3, 3), smi_clock_after_mhz=clock, smi_power_after_w=power))
        print(rows[-1], flush=True)
    os.makedirs(args.out, exist_ok=True)
    write_rows(os.path.join(args.out, "bench.csv"), rows)


if __name__ == "__main__":
    main()
