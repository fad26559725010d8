"""Why a decode GEMM runs below the DRAM's bandwidth: the tutorial matmul at M = 16 with its
pipeline depth (num_stages) varied, timed with do_bench (L2 flushed) and, through the timeline
kernel, per program (start, end, SM). If the main loop overlapped num_stages - 1 loads with a
latency of ~350-400 ns (calibration/measurements/h100/loaded_latency), a k-step would take
latency / (num_stages - 1); the per-step times show what it does instead.

  python3 calibration/production/decode_stages_probe.py --out DIR     (device machine)
"""
import argparse
import csv
import math
import os
import sys

import torch
from triton.testing import do_bench

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton_kernels as tk  # noqa: E402
from probe_io import write_rows  # noqa: E402

CASES = [  # (m, n, k, bm, bn, bk, warps)
    (16, 4096, 4096, 64, 64, 64, 4),
    (16, 4096, 16384, 64, 64, 64, 4),
    (16, 14336, 4096, 64, 64, 64, 4),
    (16, 4096, 4096, 128, 128, 64, 8),
    (16, 4096, 16384, 128, 128, 64, 8),
    (16, 14336, 4096, 128, 128, 64, 8),
]
STAGES = [1, 2, 3, 4, 6]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows, progs = [], []
    for m, n, k, bm, bn, bk, w in CASES:
        a = torch.randn((m, k), device="cuda", dtype=torch.float16)
        b = torch.randn((k, n), device="cuda", dtype=torch.float16) / math.sqrt(k)
        c = torch.empty((m, n), device="cuda", dtype=torch.float16)
        grid = (math.ceil(m / bm) * math.ceil(n / bn),)
        tl_buf = torch.zeros(3 * grid[0], device="cuda", dtype=torch.int64)
        ref = a.float() @ b.float()
        for s in STAGES:
            def launch():
                tk.matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                                       c.stride(1), 1, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=w, num_stages=s)
            try:
                launch()
                torch.cuda.synchronize()
            except Exception as e:  # a depth that does not fit shared memory
                rows.append(dict(m=m, n=n, k=k, tile=f"{bm}x{bn}x{bk}", warps=w, stages=s, error=str(e)[:80]))
                continue
            err = float((c.float() - ref).norm() / ref.norm())
            ms = do_bench(launch, warmup=25, rep=100)
            # The timeline kernel: the same program plus %globaltimer at its start and end.
            tk.matmul_timeline_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                            c.stride(0), c.stride(1), 1, tl_buf, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                            num_warps=w, num_stages=s)
            torch.cuda.synchronize()
            t = tl_buf.view(-1, 3).cpu().tolist()
            t0 = min(x[0] for x in t)
            durs = sorted(x[1] - x[0] for x in t)
            steps = math.ceil(k / bk)
            for p, x in enumerate(t):
                progs.append(dict(m=m, n=n, k=k, tile=f"{bm}x{bn}x{bk}", warps=w, stages=s, program=p, sm=x[2],
                                  start_ns=x[0] - t0, end_ns=x[1] - t0))
            rows.append(dict(m=m, n=n, k=k, tile=f"{bm}x{bn}x{bk}", warps=w, stages=s, programs=grid[0], rel_err=err,
                             median_us=ms * 1e3, block_median_us=durs[len(durs) // 2] / 1e3,
                             ns_per_step=durs[len(durs) // 2] / steps,
                             dram_gbps=(n * k * 2 + m * k * 2) / (ms * 1e-3) / 1e9))
            r = rows[-1]
            print(f"{m}x{n}x{k} {r['tile']} w{w} s{s}: {r['median_us']:.1f} us, block {r['block_median_us']:.1f} us, "
                  f"{r['ns_per_step']:.0f} ns/step, {r['dram_gbps']:.0f} GB/s", flush=True)
    write_rows(os.path.join(args.out, "decode_stages.csv"), rows)
    with open(os.path.join(args.out, "decode_stages_timeline.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(progs[0].keys()))
        wr.writeheader()
        wr.writerows(progs)


if __name__ == "__main__":
    main()
