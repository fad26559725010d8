#!/usr/bin/env python3
"""Runs the cases of cases.py on a GPU.

  measure.py time    --sets orders,longk --out DIR   # check against torch, then time (do_bench, L2 flushed)
  measure.py profile --sets orders       --out DIR   # run under Nsight Compute (--profile-from-start off)
  measure.py timeline --match REGEX  --out DIR      # per-program SM, start and end of triton_mm cases
  measure.py list                                    # print the cases

time: every case is first checked against a torch reference (relative Frobenius error of the
output, fp32 accumulation on both sides; a case above 1e-2 or NaN is marked failed and not
timed), then timed with triton.testing.do_bench: warm-up 25 ms, 100 ms of repetitions, the L2
flushed (a 256 MB write) before each, CUDA events around each launch; the median and the 20th
and 80th percentiles are recorded. Compiled-kernel facts (registers, spills, shared memory,
warps, whether the PTX holds wgmma / cp.async / TMA) go in the same row.

profile: each case's launch (after an unprofiled warm-up launch, so JIT compilation and cuBLAS
heuristics stay outside) is bracketed by cudaProfilerStart/Stop and followed by a marker kernel
whose grid is (case index + 1), so collect.py can split Nsight Compute's rows into cases
whatever number of kernels a case launches. ffn_pair cases are meant for application replay
with --cache-control none: the L2 is flushed by the script before the pair, and the second
kernel sees what the first left.
"""
import argparse
import csv
import json
import math
import os
import re
import subprocess
import sys
import time
import traceback

import torch
import triton
from triton.testing import do_bench

import triton_kernels as tk
from cases import TILES, build_cases, cdiv

DEV = "cuda"


class Pool:
    """Random fp16 inputs, reused across cases of the same shape (bounded total size)."""

    def __init__(self, limit_bytes=24 << 30):
        self.t, self.limit = {}, limit_bytes

    def get(self, shape, seed, scale=1.0):
        key = (tuple(shape), seed, scale)
        if key not in self.t:
            need = math.prod(shape) * 2
            while self.t and sum(x.numel() * 2 for x in self.t.values()) + need > self.limit:
                self.t.pop(next(iter(self.t)))
            g = torch.Generator(device=DEV).manual_seed(seed)
            x = torch.rand(shape, generator=g, device=DEV, dtype=torch.float32).mul_(2).sub_(1).mul_(scale)
            self.t[key] = x.to(torch.float16)
            del x
        return self.t[key]


def tile_params(c):
    """(BLOCK_M, BLOCK_N, BLOCK_K, warps, stages) of a case: its tile's, with `warps` or `stages`
    where the case sets them (the probes' NAME@stages=N)."""
    bm, bn, bk, w, s = TILES[c["tile"]]
    return bm, bn, bk, c.get("warps", w), c.get("stages", s)


def mm_launch(a, b, out, c):
    bm, bn, bk, w, s = tile_params(c)
    m, k = a.shape
    n = b.shape[1]
    grid = (cdiv(m, bm) * cdiv(n, bn),)
    return tk.matmul_kernel[grid](a, b, out, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                  out.stride(0), out.stride(1), c["group_m"], BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                  num_warps=w, num_stages=s)


def runner(c, pool):
    """(launch, reference, output, extra launches for timing alone) of a case."""
    f = c["family"]
    if f in ("triton_mm", "triton_persistent", "cublas_mm"):
        m, n, k = c["m"], c["n"], c["k"]
        a = pool.get((m, k), 1)
        b = pool.get((k, n), 2, 1.0 / math.sqrt(k))
        out = torch.empty((m, n), device=DEV, dtype=torch.float16)
        ref = lambda: torch.matmul(a, b)  # noqa: E731
        if f == "triton_mm":
            return (lambda: mm_launch(a, b, out, c)), ref, out, {}
        if f == "cublas_mm":
            if c.get("linear"):  # nn.Linear's weight, [N, K] row-major: B = w.t() is column-major
                w = pool.get((n, k), 2, 1.0 / math.sqrt(k))
                return (lambda: torch.matmul(a, w.t(), out=out)), None, out, {}
            return (lambda: torch.matmul(a, b, out=out)), None, out, {}
        bm, bn, bk, w, s = tile_params(c)
        progs = min(c["programs"], cdiv(m, bm) * cdiv(n, bn))
        return (lambda: tk.matmul_persistent_kernel[(progs,)](
            a, b, out, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1),
            c["group_m"], progs, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, FLATTEN=c["flatten"], num_warps=w,
            num_stages=s)), ref, out, {}
    if f == "triton_w4a16":
        m, n, k, gs = c["m"], c["n"], c["k"], c["group_size"]
        bm, bn, bk, w, st = TILES[c["tile"]]
        a = pool.get((m, k), 1)
        g = torch.Generator(device=DEV).manual_seed(9)
        q = torch.randint(-128, 128, (k // 2, n), generator=g, device=DEV, dtype=torch.int16).to(torch.int8)
        sc = (torch.rand((k // gs, n), generator=g, device=DEV) * (2.0 / (8 * math.sqrt(k)))).to(torch.float16)
        out = torch.empty((m, n), device=DEV, dtype=torch.float16)
        grid = (cdiv(m, bm) * cdiv(n, bn),)

        def launch():
            return tk.matmul_w4a16_kernel[grid](a, q, sc, out, m, n, k, a.stride(0), a.stride(1), q.stride(0),
                                                q.stride(1), sc.stride(0), sc.stride(1), out.stride(0), out.stride(1),
                                                c["group_m"], GROUP_SIZE=gs, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                                num_warps=w, num_stages=st)

        def ref():
            # byte row kt * bk/2 + kk holds B rows kt * bk + kk (low nibble) and kt * bk + bk/2 + kk (high)
            qi = q.to(torch.int16)
            lo, hi = (qi & 0xF) - 8, ((qi >> 4) & 0xF) - 8
            h = bk // 2
            bdeq = torch.empty((k, n), device=DEV, dtype=torch.float32)
            bdeq.view(k // bk, bk, n)[:, :h, :] = lo.view(k // bk, h, n).float()
            bdeq.view(k // bk, bk, n)[:, h:, :] = hi.view(k // bk, h, n).float()
            bdeq *= sc.float().repeat_interleave(gs, dim=0)
            return torch.matmul(a.float(), bdeq)

        return launch, ref, out, {}
    if f == "triton_attn":
        bsz, h, hkv, n, d = c["batch"], c["heads"], c["kv_heads"], c["seq"], c["head_dim"]
        q = pool.get((bsz, h, n, d), 3)
        kk = pool.get((bsz, hkv, n, d), 4)
        v = pool.get((bsz, hkv, n, d), 5)
        out = torch.empty_like(q)
        tiles_q = n // c["block_m"]
        grid = (bsz * h, tiles_q) if c["heads_fastest"] else (tiles_q, bsz * h)
        scale = 1.0 / math.sqrt(d)

        def launch():
            return tk.attn_fwd_kernel[grid](q, kk, v, out, scale, h, hkv, n, HEADS_FASTEST=bool(c["heads_fastest"]),
                                            CAUSAL=bool(c["causal"]), HEAD_DIM=d, BLOCK_M=c["block_m"],
                                            BLOCK_N=c["block_n"], num_warps=c["num_warps"],
                                            num_stages=c["num_stages"])

        def ref():
            rep = h // hkv
            return torch.nn.functional.scaled_dot_product_attention(
                q, kk.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1), is_causal=bool(c["causal"]))

        return launch, ref, out, {}
    if f == "ffn_pair":
        m, d, ff = c["m"], c["d"], c["f"]
        x = pool.get((m, d), 6)
        w0 = pool.get((d, ff), 7, 1.0 / math.sqrt(d))
        w1 = pool.get((ff, d), 8, 1.0 / math.sqrt(ff))
        hh = torch.empty((m, ff), device=DEV, dtype=torch.float16)
        y = torch.empty((m, d), device=DEV, dtype=torch.float16)
        g0 = lambda: mm_launch(x, w0, hh, c)  # noqa: E731
        g1 = lambda: mm_launch(hh, w1, y, c)  # noqa: E731

        def pair():
            g0()
            return g1()

        return pair, (lambda: torch.matmul(torch.matmul(x, w0), w1)), y, {"gemm0": g0, "gemm1": g1}
    raise ValueError(f"unknown family {f}")


def rel_err(out, ref):
    o, r = out.float(), ref.float()
    return float(torch.linalg.vector_norm(o - r) / torch.linalg.vector_norm(r))


def kernel_facts(k):
    """Registers, spills, shared memory and instruction kinds of a compiled Triton kernel."""
    facts = {}
    if k is None or not hasattr(k, "metadata"):
        return facts
    for name in ("n_regs", "n_spills"):
        facts[name] = getattr(k, name, "")
    md = k.metadata
    facts["shared_bytes"] = getattr(md, "shared", "")
    facts["num_warps"] = getattr(md, "num_warps", "")
    facts["num_stages"] = getattr(md, "num_stages", "")
    ptx = k.asm.get("ptx", "") if hasattr(k, "asm") else ""
    facts["ptx_wgmma"] = int("wgmma.mma_async" in ptx)
    facts["ptx_mma_sync"] = int("mma.sync" in ptx)
    facts["ptx_cp_async"] = int("cp.async.cg" in ptx or "cp.async.ca" in ptx)
    facts["ptx_tma"] = int("cp.async.bulk.tensor" in ptx)
    facts["ptx_setmaxnreg"] = int("setmaxnreg" in ptx)
    return facts


def gpu_clocks():
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw",
                            "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=10)
        return r.stdout.strip().replace(", ", "/")
    except Exception:  # noqa: BLE001
        return ""


def cmd_time(cases, out_dir, budget_s, t0):
    pool = Pool()
    path = os.path.join(out_dir, "time.csv")
    new = not os.path.exists(path)
    fields = ["case", "set", "family", "status", "median_us", "p20_us", "p80_us", "check_rel_err", "gemm0_us",
              "gemm1_us", "n_regs", "n_spills", "shared_bytes", "num_warps", "num_stages", "ptx_wgmma",
              "ptx_mma_sync", "ptx_cp_async", "ptx_tma", "ptx_setmaxnreg", "clocks", "params"]
    with open(path, "a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        if new:
            w.writeheader()
        for i, c in enumerate(cases):
            row = {"case": c["case"], "set": c["set"], "family": c["family"], "params": json.dumps(c)}
            if time.time() - t0 > budget_s:
                row["status"] = "skipped(budget)"
                w.writerow(row)
                continue
            try:
                launch, ref, out, alone = runner(c, pool)
                out.fill_(float("nan"))
                k = launch()
                torch.cuda.synchronize()
                if ref is not None:
                    err = rel_err(out, ref())
                    row["check_rel_err"] = f"{err:.3e}"
                    if not err <= 1e-2:
                        row["status"] = "FAILED(check)"
                        w.writerow(row)
                        fh.flush()
                        print(f"[{i}] {c['case']}: CHECK FAILED rel_err {err}", flush=True)
                        continue
                row.update(kernel_facts(k))
                q = do_bench(launch, warmup=25, rep=100, quantiles=[0.5, 0.2, 0.8])
                row["median_us"], row["p20_us"], row["p80_us"] = (f"{x * 1e3:.3f}" for x in q)
                for name, fn in alone.items():
                    row[f"{name}_us"] = f"{do_bench(fn, warmup=25, rep=100, return_mode='median') * 1e3:.3f}"
                row["clocks"] = gpu_clocks() if i % 20 == 0 else ""
                row["status"] = "ok"
                print(f"[{i}] {c['case']}: {row['median_us']} us (err {row.get('check_rel_err', '-')}, "
                      f"regs {row.get('n_regs', '')}, smem {row.get('shared_bytes', '')})", flush=True)
            except Exception as e:  # noqa: BLE001
                row["status"] = f"FAILED({type(e).__name__})"
                print(f"[{i}] {c['case']}: FAILED {e}", flush=True)
                traceback.print_exc()
                torch.cuda.synchronize()
            w.writerow(row)
            fh.flush()


def cmd_profile(cases, out_dir, budget_s, t0):
    pool = Pool()
    marker = torch.zeros(1 << 16, device=DEV, dtype=torch.int32)
    flush = torch.empty(512 << 20, device=DEV, dtype=torch.uint8)
    tag = "+".join(sorted({c["set"] for c in cases})) or "all"
    with open(os.path.join(out_dir, f"profile_cases_{tag}.csv"), "a", newline="") as fh:
        w = csv.writer(fh)
        for i, c in enumerate(cases):
            if time.time() - t0 > budget_s:
                w.writerow([i, c["case"], "skipped(budget)"])
                continue
            try:
                launch, _, _, _ = runner(c, pool)
                launch()  # compile and warm outside the profiled range
                flush.zero_()
                torch.cuda.synchronize()
                torch.cuda.profiler.start()
                launch()
                tk.case_marker_kernel[(i + 1,)](marker)
                torch.cuda.synchronize()
                torch.cuda.profiler.stop()
                w.writerow([i, c["case"], "ok"])
            except Exception as e:  # noqa: BLE001
                w.writerow([i, c["case"], f"FAILED({type(e).__name__})"])
                traceback.print_exc()
            fh.flush()


def cmd_timeline(cases, out_dir, budget_s, t0):
    """The block timeline of triton_mm cases: matmul_timeline_kernel, launched 3 times with the L2
    flushed before each (the last is kept), as do_bench runs it."""
    pool = Pool()
    flush = torch.empty(256 << 20, device=DEV, dtype=torch.uint8)
    with open(os.path.join(out_dir, "timeline.csv"), "a", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case", "program", "pid_m", "pid_n", "sm", "start_ns", "end_ns"])
        for c in cases:
            if c["family"] != "triton_mm" or time.time() - t0 > budget_s:
                continue
            bm, bn, bk, nw, ns = TILES[c["tile"]]
            m, n, k = c["m"], c["n"], c["k"]
            a = pool.get((m, k), 1)
            b = pool.get((k, n), 2, 1.0 / math.sqrt(k))
            out = torch.empty((m, n), device=DEV, dtype=torch.float16)
            gm, gn = cdiv(m, bm), cdiv(n, bn)
            buf = torch.zeros(3 * gm * gn, device=DEV, dtype=torch.int64)
            for _ in range(3):
                flush.zero_()
                tk.matmul_timeline_kernel[(gm * gn,)](a, b, out, m, n, k, a.stride(0), a.stride(1), b.stride(0),
                                                      b.stride(1), out.stride(0), out.stride(1), c["group_m"], buf,
                                                      BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=nw, num_stages=ns)
            torch.cuda.synchronize()
            v = buf.view(-1, 3).cpu().tolist()
            start0 = min(r[0] for r in v)
            g = c["group_m"]
            for pid, (s0, s1, sm) in enumerate(v):
                # the tutorial's grouped mapping, as the kernel computes it
                grp = pid // (g * gn)
                first = grp * g
                size = min(gm - first, g)
                w.writerow([c["case"], pid, first + (pid % (g * gn)) % size, (pid % (g * gn)) // size, sm,
                            s0 - start0, s1 - start0])
            fh.flush()
            print(f"timeline {c['case']}: {gm * gn} programs, {(max(r[1] for r in v) - start0) / 1e3:.1f} us", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("verb", choices=["time", "profile", "timeline", "list"])
    ap.add_argument("--sets", default="")
    ap.add_argument("--only", default="", help="substring a case name must contain")
    ap.add_argument("--match", default="", help="regular expression a case name must match (re.search)")
    ap.add_argument("--out", default="out")
    ap.add_argument("--budget-s", type=float, default=1e9, help="no new case starts after this many seconds")
    a = ap.parse_args()
    sets = [s for s in a.sets.split(",") if s]
    cases = [c for c in build_cases() if (not sets or c["set"] in sets) and a.only in c["case"]
             and (not a.match or re.search(a.match, c["case"]))]
    if a.verb == "list":
        for c in cases:
            print(c["case"])
        return
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    props = torch.cuda.get_device_properties(0)
    with open(os.path.join(a.out, f"device_{a.verb}.json"), "w") as fh:
        json.dump({"name": props.name, "sms": props.multi_processor_count,
                   "l2_bytes": getattr(props, "L2_cache_size", None), "torch": torch.__version__,
                   "triton": triton.__version__, "cuda": torch.version.cuda, "sets": sets,
                   "cases": len(cases), "clocks_start": gpu_clocks()}, fh, indent=1)
    print(f"{a.verb}: {len(cases)} cases on {props.name}", flush=True)
    {"time": cmd_time, "profile": cmd_profile, "timeline": cmd_timeline}[a.verb](cases, a.out, a.budget_s, t0)
    print(f"{a.verb}: done in {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
