"""The main loop's own ceiling per tile configuration: the tutorial matmul's program with every
program reading the same A and B panels (one BLOCK_M x K and one K x BLOCK_N panel, 0.25-1 MB,
resident in L2 and merged by its request coalescer), each storing its own C tile. DRAM and the
L2's bandwidth are out of the way, so the time is what the SM does per k-step: tensor work,
shared-memory traffic (the asynchronous copies' writes and the wgmma operand reads), the
pipeline's waits. Timed with do_bench and profiled with Nsight Compute (clock, tensor pipe and
shared-memory activity), for the tiles the production cases use and a few more.

  python3 tile_ceiling_probe.py time --out DIR
  python3 tile_ceiling_probe.py persistent --out DIR   (the persistent kernel's loops, flattened or not)
  ncu ... python3 tile_ceiling_probe.py once --tile NAME      (run_tile_ceiling.sh)
"""
import argparse
import os

import sys

import torch
import triton
import triton.language as tl
from triton.testing import do_bench

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_io import profiled, write_rows  # noqa: E402

# name: (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages)
TILES = {
    "t64x64": (64, 64, 64, 4, 4),
    "t128x64": (128, 64, 64, 4, 4),
    "t64x128": (64, 128, 64, 4, 4),
    "t128x128": (128, 128, 64, 8, 3),
    "t128x128w4": (128, 128, 64, 4, 4),
    "t128x256": (128, 256, 64, 8, 3),
    "t256x128": (256, 128, 64, 8, 3),
    "t64x256": (64, 256, 64, 4, 3),
}
M = N = 8192
K = 4096


@triton.jit
def same_panel_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    offs_am = tl.arange(0, BLOCK_M)  # every program: the same A panel
    offs_bn = tl.arange(0, BLOCK_N)  # and the same B panel
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :], c)


@triton.jit
def _same_panel_tile(a_ptr, b_ptr, c_ptr, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, tile_id,
                     num_pid_n, k_tiles, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     MASKED: tl.constexpr):
    """One tile of the persistent form (triton_kernels._persistent_tile) reading the same panels;
    MASKED loads as the production kernel does (the k-tail mask, zeros past K)."""
    pid_m = tile_id // num_pid_n
    pid_n = tile_id % num_pid_n
    offs_k0 = tl.arange(0, BLOCK_K)
    offs_am = tl.arange(0, BLOCK_M)
    offs_bn = tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for ki in range(k_tiles):
        offs_k = ki * BLOCK_K + offs_k0
        if MASKED:
            a = tl.load(a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak,
                        mask=offs_k0[None, :] < K - ki * BLOCK_K, other=0.0)
            b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn,
                        mask=offs_k0[:, None] < K - ki * BLOCK_K, other=0.0)
        else:
            a = tl.load(a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
            b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
        acc = tl.dot(a, b, acc)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :], acc.to(tl.float16))


@triton.jit
def same_panel_persistent_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                                 stride_cn, num_progs, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                 BLOCK_K: tl.constexpr, FLATTEN: tl.constexpr, MASKED: tl.constexpr):
    """triton_kernels.matmul_persistent_kernel's loops over the same panels: with FLATTEN the
    tutorial's flattened loop across tiles, else one k-loop per tile."""
    start = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = tl.cdiv(M, BLOCK_M) * num_pid_n
    if FLATTEN:
        for tile_id in tl.range(start, num_tiles, num_progs, flatten=True):
            _same_panel_tile(a_ptr, b_ptr, c_ptr, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                             tile_id, num_pid_n, k_tiles, BLOCK_M, BLOCK_N, BLOCK_K, MASKED)
    else:
        for tile_id in range(start, num_tiles, num_progs):
            _same_panel_tile(a_ptr, b_ptr, c_ptr, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                             tile_id, num_pid_n, k_tiles, BLOCK_M, BLOCK_N, BLOCK_K, MASKED)


PERSISTENT = {  # name: (tile, programs, flatten, masked): the production persistent cases' forms
    "p132_flat": ("t128x128", 132, True, False),
    "p132_noflat": ("t128x128", 132, False, False),
    "p264_flat": ("t128x128", 264, True, False),
    "p132_flat_masked": ("t128x128", 132, True, True),
    "p132_noflat_masked": ("t128x128", 132, False, True),
    "p264_flat_masked": ("t128x128", 264, True, True),
}


def persistent_launcher(name):
    tile, progs, flat, masked = PERSISTENT[name]
    bm, bn, bk, w, s = TILES[tile]
    a = torch.randn((bm, K), device="cuda", dtype=torch.float16)
    b = torch.randn((K, bn), device="cuda", dtype=torch.float16) / K ** 0.5
    c = torch.empty((M, N), device="cuda", dtype=torch.float16)

    def launch():
        return same_panel_persistent_kernel[(progs,)](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                                                      b.stride(1), c.stride(0), c.stride(1), progs, BLOCK_M=bm,
                                                      BLOCK_N=bn, BLOCK_K=bk, FLATTEN=flat, MASKED=masked, num_warps=w,
                                                      num_stages=s)
    return launch


def time_persistent(out):
    rows = []
    for name in PERSISTENT:
        launch = persistent_launcher(name)
        kern = launch()
        torch.cuda.synchronize()
        us = do_bench(launch, warmup=25, rep=200, return_mode="median") * 1e3
        rows.append(dict(form=name, us=f"{us:.2f}", tflops=f"{2.0 * M * N * K / (us * 1e-6) / 1e12:.1f}",
                         n_regs=kern.n_regs, n_spills=kern.n_spills, shared_bytes=kern.metadata.shared))
        print(rows[-1], flush=True)
    write_rows(os.path.join(out, "tile_ceiling_persistent.csv"), rows)


def launcher(name):
    bm, bn, bk, w, s = TILES[name]
    a = torch.randn((bm, K), device="cuda", dtype=torch.float16)
    b = torch.randn((K, bn), device="cuda", dtype=torch.float16) / K ** 0.5
    c = torch.empty((M, N), device="cuda", dtype=torch.float16)
    grid = ((M // bm) * (N // bn),)

    def launch():
        return same_panel_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                                       c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=w, num_stages=s)
    return launch, (a, b, c)


def time_all(out):
    rows = []
    for name in TILES:
        launch, (a, b, c) = launcher(name)
        kern = launch()
        torch.cuda.synchronize()
        ref = (a[:64].float() @ b[:, :64].float()).half()
        err = ((c[:64, :64].float() - ref.float()).norm() / ref.float().norm()).item()
        us = do_bench(launch, warmup=25, rep=200, return_mode="median") * 1e3
        tflops = 2.0 * M * N * K / (us * 1e-6) / 1e12
        rows.append(dict(tile=name, us=f"{us:.2f}", tflops=f"{tflops:.1f}", rel_err=f"{err:.1e}",
                         n_regs=kern.n_regs, n_spills=kern.n_spills, shared_bytes=kern.metadata.shared))
        print(rows[-1], flush=True)
    write_rows(os.path.join(out, "tile_ceiling.csv"), rows)


def once(name):
    launch, _ = launcher(name)
    launch()  # compile and warm outside the profiled range
    profiled(torch, launch)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["time", "persistent", "once"])
    ap.add_argument("--out")
    ap.add_argument("--tile")
    a = ap.parse_args()
    if a.mode in ("time", "persistent"):
        os.makedirs(a.out, exist_ok=True)
        (time_all if a.mode == "time" else time_persistent)(a.out)
    else:
        once(a.tile)


if __name__ == "__main__":
    main()
