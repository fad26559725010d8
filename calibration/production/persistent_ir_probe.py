"""What Triton made of the production persistent matmul's two loops (triton_kernels.
matmul_persistent_kernel, 4096^3, 128x128x64, 8 warps, 3 stages, GROUP_M 8, 132 programs): the
shared-memory buffers (local_alloc shapes: the first dimension is the number of stages
buffered), the asynchronous copies and their waits, and the wgmma waits, from the compiled
kernel's TTGIR, so a kernel whose loop was not software-pipelined shows as such.

  python3 persistent_ir_probe.py --out DIR     (device machine)
"""
import argparse
import os
import re
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton_kernels as tk  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    out = ap.parse_args().out
    os.makedirs(out, exist_ok=True)
    m = n = k = 4096
    a = torch.randn((m, k), device="cuda", dtype=torch.float16)
    b = torch.randn((k, n), device="cuda", dtype=torch.float16)
    c = torch.empty((m, n), device="cuda", dtype=torch.float16)
    for flat in (True, False):
        kern = tk.matmul_persistent_kernel[(132,)](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                                   c.stride(0), c.stride(1), 8, 132, BLOCK_M=128, BLOCK_N=128,
                                                   BLOCK_K=64, FLATTEN=flat, num_warps=8, num_stages=3)
        ttgir = kern.asm["ttgir"]
        name = "flat" if flat else "noflat"
        with open(os.path.join(out, f"persistent_{name}.ttgir"), "w") as f:
            f.write(ttgir)
        keys = ["local_alloc", "async_copy_global_to_local", "async_wait", "warp_group_dot_wait", "warp_group_dot ",
                "scf.for", "async_commit_group", "tt.load"]
        print(f"== {name}: shared {kern.metadata.shared} B, {kern.n_regs} registers")
        for key in keys:
            lines = [ln.strip() for ln in ttgir.splitlines() if key in ln]
            print(f"  {key}: {len(lines)}")
            for ln in lines[:3]:
                print("     ", re.sub(r"\s+", " ", ln)[:160])


if __name__ == "__main__":
    main()
