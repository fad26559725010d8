"""What do_bench's L2 flush costs the kernel it times: the production durations (time.csv) are
do_bench medians, each repetition after a 256 MB write that leaves the L2 full of dirty lines,
and timed with CUDA events; Nsight Compute's gpu__time_duration (ncu_cases.csv) times the kernel
alone after an invalidated, clean L2. This runs a few production cases both ways, plus
  - an empty kernel under do_bench (what the events add around any kernel), and
  - a `dirty` mode for Nsight Compute: the 256 MB write, then the kernel, profiled with
    --cache-control none, so gpu__time_duration includes the dirty lines' write-back.

  python3 flush_probe.py time --out DIR          # do_bench medians
  ncu ... python3 flush_probe.py once --case NAME [--dirty]   # one launch (run_flush_probe.sh)
"""
import argparse
import csv
import math
import os
import sys

import torch
import triton
import triton.language as tl
from triton.testing import do_bench

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton_kernels as tk  # noqa: E402
from probe_io import profiled  # noqa: E402

CASES = {  # name: (m, n, k, bm, bn, bk, warps, stages, group_m)
    "mm_l8b_o_m16_t64x64_column": (16, 4096, 4096, 64, 64, 64, 4, 4, 1 << 20),
    "mm_l8b_up_m16_t64x64_column": (16, 14336, 4096, 64, 64, 64, 4, 4, 1 << 20),
    "mm_l8b_down_m16_t128x128_column": (16, 4096, 14336, 128, 128, 64, 8, 3, 1 << 20),
    "mm_g3_o_m16_t64x64_column": (16, 12288, 12288, 64, 64, 64, 4, 4, 1 << 20),
    "mm_sq4096_m4096_t64x64_row": (4096, 4096, 4096, 64, 64, 64, 4, 4, 1),
    "mm_l8b_up_m2048_t128x128_grouped8": (2048, 14336, 4096, 128, 128, 64, 8, 3, 8),
}


@triton.jit
def empty_kernel(x_ptr):
    pass


def launcher(name, cases=None):
    """The case's launch (a matmul of `cases`, default CASES) with its inputs allocated."""
    m, n, k, bm, bn, bk, w, s, g = (cases or CASES)[name]
    a = torch.randn((m, k), device="cuda", dtype=torch.float16)
    b = torch.randn((k, n), device="cuda", dtype=torch.float16) / math.sqrt(k)
    c = torch.empty((m, n), device="cuda", dtype=torch.float16)
    grid = (math.ceil(m / bm) * math.ceil(n / bn),)

    def launch():
        tk.matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                               c.stride(1), g, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=w, num_stages=s)
    return launch


def time_all(out):
    rows = []
    x = torch.empty(1, device="cuda")
    empty = lambda: empty_kernel[(1,)](x)  # noqa: E731
    empty()
    rows.append(dict(case="empty_kernel", flushed_us=do_bench(empty, warmup=25, rep=100) * 1e3))
    for name in CASES:
        launch = launcher(name)
        launch()
        torch.cuda.synchronize()
        flushed = do_bench(launch, warmup=25, rep=100) * 1e3
        rows.append(dict(case=name, flushed_us=flushed))
        print(name, f"{flushed:.1f} us", flush=True)
    with open(os.path.join(out, "flush_time.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=["case", "flushed_us"])
        wr.writeheader()
        wr.writerows(rows)


def once(name, dirty):
    launch = launcher(name)
    launch()  # compile and warm outside the profiled range
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    # do_bench's flush: the L2 ends full of dirty lines
    profiled(torch, *([flush.zero_] if dirty else []), launch)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["time", "once"])
    ap.add_argument("--out")
    ap.add_argument("--case")
    ap.add_argument("--dirty", action="store_true")
    args = ap.parse_args()
    if args.mode == "time":
        os.makedirs(args.out, exist_ok=True)
        time_all(args.out)
    else:
        once(args.case, args.dirty)


if __name__ == "__main__":
    main()
