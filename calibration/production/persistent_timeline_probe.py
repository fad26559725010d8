"""Per-program timelines of Triton's persistent matmul (the `triton_persistent` cases): the measured
kernel (triton_kernels.matmul_persistent_kernel, both loop forms) with %globaltimer and the SM
stored at each program's start and end, launched three times after a 256 MB write (as do_bench
runs it), the last kept. For `tilesim l2-replay`, whose persistent kernels' blocks are programs
(docs/validation.md, "The L2 model under measured timing").

  python3 calibration/production/persistent_timeline_probe.py --out DIR [--match REGEX]   (device machine)

DIR/persistent_timeline.csv: case, block (= program), sm, start_ns, end_ns (ns from the case's
first start).
"""
import argparse
import csv
import math
import os
import re
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases as case_list  # noqa: E402
import triton_kernels as tk  # noqa: E402


@triton.jit
def persistent_timeline_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                               stride_cn, group_m, num_progs, tl_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                               BLOCK_K: tl.constexpr, FLATTEN: tl.constexpr):
    """matmul_persistent_kernel with tl_ptr[3 p + 0..2] = start ns, end ns, SM of program p."""
    t0 = tk._globaltimer()
    tk.matmul_persistent_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                                stride_cn, group_m, num_progs, BLOCK_M, BLOCK_N, BLOCK_K, FLATTEN)
    t1 = tk._globaltimer()
    start = tl.program_id(0)
    tl.store(tl_ptr + 3 * start, t0)
    tl.store(tl_ptr + 3 * start + 1, t1)
    tl.store(tl_ptr + 3 * start + 2, tk._smid().to(tl.int64))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--match", default="^pmm_")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    chosen = [c for c in case_list.build_cases()
              if c["family"] == "triton_persistent" and re.search(args.match, c["case"])]
    with open(os.path.join(args.out, "persistent_timeline.csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case", "block", "sm", "start_ns", "end_ns"])
        for c in chosen:
            bm, bn, bk, nw, ns = case_list.TILES[c["tile"]]
            m, n, k = c["m"], c["n"], c["k"]
            a = torch.randn((m, k), device="cuda", dtype=torch.float16)
            b = torch.randn((k, n), device="cuda", dtype=torch.float16) / math.sqrt(k)
            out = torch.empty((m, n), device="cuda", dtype=torch.float16)
            progs = min(c["programs"], math.ceil(m / bm) * math.ceil(n / bn))
            buf = torch.zeros(3 * progs, device="cuda", dtype=torch.int64)
            for _ in range(3):
                flush.zero_()
                persistent_timeline_kernel[(progs,)](a, b, out, m, n, k, a.stride(0), a.stride(1), b.stride(0),
                                                     b.stride(1), out.stride(0), out.stride(1), c["group_m"], progs,
                                                     buf, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, FLATTEN=c["flatten"],
                                                     num_warps=nw, num_stages=ns)
            torch.cuda.synchronize()
            err = float((out.float() - (a.float() @ b.float())).norm() / (a.float() @ b.float()).norm())
            v = buf.view(-1, 3).cpu().tolist()
            t0 = min(r[0] for r in v)
            for p, (s0, s1, sm) in enumerate(v):
                w.writerow([c["case"], p, sm, s0 - t0, s1 - t0])
            fh.flush()
            print(f"{c['case']}: {progs} programs, {(max(r[1] for r in v) - t0) / 1e3:.1f} us, rel err {err:.1e}",
                  flush=True)


if __name__ == "__main__":
    main()
