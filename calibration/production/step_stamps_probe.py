"""How closely in step do blocks that share a panel run? The tutorial matmul with %globaltimer
stamped at every STAMP-th k-step of every program (and its SM), for tiles that merge very
differently in the L2 request coalescer (docs/validation.md, "The request coalescer by tile":
128x256 one block per SM merges 0.45 of its reads under grouped order, 128x64 two blocks per SM
0.20). The stamps give, for two programs reading the same A or B panel at the same time, how far
apart they reach the same k-step.

  python3 calibration/production/step_stamps_probe.py --out DIR     (device machine)
  python3 calibration/production/step_stamps_probe.py --out DIR --ends-only

--ends-only stamps each program once before its k-loop (written as k-step 0) and once at its
end, with no store inside the loop, and times every case by CUDA events both ways (in-loop
stamps and ends only, L2 flushed before each of 5 launches): the stores inside the loop can
disturb the software pipeline, and the ends-only run says by how much (stamp_times.csv).
"""
import argparse
import csv
import math
import os
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton_kernels as tk  # noqa: E402

STAMP = 4
CASES = [  # (name, m, n, k, bm, bn, bk, warps, stages, group_m)
    ("t128x256_grouped8", 8192, 8192, 4096, 128, 256, 64, 8, 3, 8),
    ("t128x256_row", 8192, 8192, 4096, 128, 256, 64, 8, 3, 1),
    ("t128x128w4_grouped8", 8192, 8192, 4096, 128, 128, 64, 4, 4, 8),
    ("t128x128_grouped8", 8192, 8192, 4096, 128, 128, 64, 8, 3, 8),
    ("t128x64_grouped8", 8192, 8192, 4096, 128, 64, 64, 4, 4, 8),
    ("t64x64_grouped8", 8192, 8192, 4096, 64, 64, 64, 4, 4, 8),
]


@triton.jit
def stamped_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   group_m, st_ptr, n_stamps, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   STAMP: tl.constexpr, IN_LOOP: tl.constexpr):
    """The tutorial's program; st_ptr[pid, j] = %globaltimer when k-step j * STAMP starts,
    st_ptr[pid, n_stamps] = at the end, st_ptr[pid, n_stamps + 1] = the SM."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = tk.grouped_tile(pid, num_pid_m, num_pid_n, group_m)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    row = st_ptr + pid * (n_stamps + 2)
    if not IN_LOOP:
        tl.store(row, tk._globaltimer())
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if IN_LOOP and k % STAMP == 0:
            tl.store(row + k // STAMP, tk._globaltimer())
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :], c,
             mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))
    tl.store(row + n_stamps, tk._globaltimer())
    tl.store(row + n_stamps + 1, tk._smid().to(tl.int64))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--ends-only", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    in_loop = not args.ends_only
    stamp = STAMP if in_loop else 1 << 20
    out_name = "step_stamps.csv" if in_loop else "step_stamps_ends.csv"
    times = []
    with open(os.path.join(args.out, out_name), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["case", "program", "pid_m", "pid_n", "sm", "kstep", "t_ns"])
        for name, m, n, k, bm, bn, bk, warps, stages, g in CASES:
            a = torch.randn((m, k), device="cuda", dtype=torch.float16)
            b = torch.randn((k, n), device="cuda", dtype=torch.float16) / math.sqrt(k)
            c = torch.empty((m, n), device="cuda", dtype=torch.float16)
            gm, gn = math.ceil(m / bm), math.ceil(n / bn)
            steps = math.ceil(k / bk)
            n_stamps = (steps + stamp - 1) // stamp
            st = torch.zeros((gm * gn, n_stamps + 2), device="cuda", dtype=torch.int64)

            n_loop = (steps + STAMP - 1) // STAMP  # the in-loop form's stamps, for its timing
            st_loop = torch.zeros((gm * gn, n_loop + 2), device="cuda", dtype=torch.int64)

            def launch(loop=in_loop):
                buf, n_buf = (st, n_stamps) if loop == in_loop else (st_loop, n_loop)
                stamped_matmul[(gm * gn,)](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                           c.stride(0), c.stride(1), g, buf, n_buf, BLOCK_M=bm, BLOCK_N=bn,
                                           BLOCK_K=bk, STAMP=STAMP if loop else 1 << 20, IN_LOOP=loop,
                                           num_warps=warps, num_stages=stages)
            if args.ends_only:
                for loop in (True, False):
                    launch(loop)  # compile and warm
                    us = []
                    for _ in range(5):
                        flush.zero_()
                        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        e0.record()
                        launch(loop)
                        e1.record()
                        torch.cuda.synchronize()
                        us.append(e0.elapsed_time(e1) * 1000)
                    times.append([name, "in_loop" if loop else "ends_only", f"{sorted(us)[2]:.1f}"])
                st.zero_()
            launch()  # compile and warm
            torch.cuda.synchronize()
            flush.zero_()
            launch()
            torch.cuda.synchronize()
            err = float((c.float() - (a.float() @ b.float())).norm() / (a.float() @ b.float()).norm())
            rows = st.cpu().tolist()
            t0 = min(r[0] for r in rows)
            for p, r in enumerate(rows):
                # The tutorial's grouped mapping, recomputed here for the table.
                group = g * gn
                first = (p // group) * g
                size = min(gm - first, g)
                pm, pn = first + (p % group) % size, (p % group) // size
                for j in range(n_stamps):
                    w.writerow([name, p, pm, pn, r[n_stamps + 1], j * STAMP, r[j] - t0])
                w.writerow([name, p, pm, pn, r[n_stamps + 1], steps, r[n_stamps] - t0])
            print(f"{name}: {gm * gn} programs, {n_stamps} stamps each, end {max(r[n_stamps] for r in rows) - t0} ns, "
                  f"rel err {err:.1e}", flush=True)
    if times:
        with open(os.path.join(args.out, "stamp_times.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["case", "stamps", "median_us"])
            w.writerows(times)
        for t in times:
            print(*t, flush=True)


if __name__ == "__main__":
    main()
