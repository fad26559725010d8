"""Does a full chip of tensor work run at a lower SM clock than a few busy SMs? The tutorial
matmul (128x128x64, 8 warps, 3 stages; and 128x256x64, 8 warps, 3 stages) with its operands
resident in the L2, launched back to back for about 1.5 s with 1 to 264 programs, while
nvidia-smi samples the SM clock and the board power every 50 ms. Per program count: the time
per launch (CUDA events over the loop), the median program's ns per k-step (timeline kernel,
launched hot right after the loop), and the median SM clock and power during the loop; after
the largest run, nvidia-smi's clock-throttle reasons.

  python3 calibration/production/clock_load_probe.py --out DIR     (device machine)
"""
import argparse
import math
import os
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton_kernels as tk  # noqa: E402
from probe_io import write_rows  # noqa: E402

GRIDS = {1: (1, 1), 8: (2, 4), 32: (4, 8), 66: (6, 11), 132: (11, 12), 264: (12, 22)}
TILES = [(128, 128, 64, 8, 3), (128, 256, 64, 8, 3)]  # bm, bn, bk, warps, stages
K = 4096
LOOP_S = 1.5


def sample_clocks():
    return subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits",
                             "-lms", "50"], stdout=subprocess.PIPE, text=True)


def parse_samples(text):
    clocks, power = [], []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        try:
            clocks.append(float(parts[0]))
            power.append(float(parts[1]))
        except (ValueError, IndexError):
            pass
    return clocks, power


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for bm, bn, bk, w, s in TILES:
        for programs, (gm, gn) in GRIDS.items():
            m, n = gm * bm, gn * bn
            a = torch.randn((m, K), device="cuda", dtype=torch.float16)
            b = torch.randn((K, n), device="cuda", dtype=torch.float16) / math.sqrt(K)
            c = torch.empty((m, n), device="cuda", dtype=torch.float16)
            grid = (gm * gn,)
            tl_buf = torch.zeros(3 * grid[0], device="cuda", dtype=torch.int64)

            def launch():
                tk.matmul_kernel[grid](a, b, c, m, n, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                       c.stride(0), c.stride(1), 1, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                       num_warps=w, num_stages=s)
            try:
                launch()
                torch.cuda.synchronize()
            except Exception as e:  # does not fit
                rows.append(dict(tile=f"{bm}x{bn}x{bk}", programs=programs, error=str(e)[:80]))
                continue
            for _ in range(20):
                launch()
            torch.cuda.synchronize()
            smi = sample_clocks()
            time.sleep(0.2)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            launches, t_begin = 0, time.time()
            start.record()
            while time.time() - t_begin < LOOP_S:
                for _ in range(50):
                    launch()
                launches += 50
                torch.cuda.synchronize()
            end.record()
            torch.cuda.synchronize()
            tk.matmul_timeline_kernel[grid](a, b, c, m, n, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                            c.stride(0), c.stride(1), 1, tl_buf, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                            num_warps=w, num_stages=s)
            torch.cuda.synchronize()
            smi.terminate()
            clocks, power = parse_samples(smi.communicate()[0])
            durs = sorted(x[1] - x[0] for x in tl_buf.view(-1, 3).cpu().tolist())
            us = start.elapsed_time(end) * 1e3 / launches
            r = dict(tile=f"{bm}x{bn}x{bk}", warps=w, stages=s, programs=programs, m=m, n=n, k=K,
                     us_per_launch=us, ns_per_step=durs[len(durs) // 2] / (K // bk),
                     tflops=2.0 * m * n * K / (us * 1e-6) / 1e12,
                     sm_clock_mhz=statistics.median(clocks) if clocks else "",
                     sm_clock_min=min(clocks) if clocks else "", power_w=statistics.median(power) if power else "",
                     samples=len(clocks))
            rows.append(r)
            print(f"{r['tile']} P={programs}: {us:.1f} us/launch, {r['ns_per_step']:.0f} ns/step, "
                  f"{r['tflops']:.0f} TFLOP/s, SM {r['sm_clock_mhz']} MHz (min {r['sm_clock_min']}), "
                  f"{r['power_w']} W, {len(clocks)} samples", flush=True)
            if programs == max(GRIDS):
                q = subprocess.run(["nvidia-smi", "-q", "-d", "PERFORMANCE,CLOCK,POWER"], capture_output=True, text=True)
                with open(os.path.join(args.out, f"smi_after_{bm}x{bn}_p{programs}.txt"), "w") as f:
                    f.write(q.stdout)
    write_rows(os.path.join(args.out, "clock_load.csv"), rows)


if __name__ == "__main__":
    main()
