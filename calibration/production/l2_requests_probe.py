"""Where do a Triton matmul's L2 requests go? (calibration/production/README.md, "L2 requests")

Nsight Compute shows Triton matmuls asking the L2 for 54-91% of the sectors their tiles hold
(lts__t_sectors_srcunit_tex_op_read against (BM + BN) x K x 2 bytes per tile), while the
project's CUDA C++ kernels, whose cp.async bypass L1 (.cg), ask for all of them. This probe
runs the tutorial matmul on 4096^3 fp16 under row and grouped(8) order, three tiles, with the
loads' cache modifier left to Triton ("" default), forced to L1-bypassing ".cg", and forced to
L1-allocating ".ca", and for each records:
  - which cp.async flavour the PTX holds (cp.async.ca / cp.async.cg counts);
  - Nsight Compute: the sectors that reach the L2 from the SMs, the L1's view of the
    asynchronous copies (hits, misses, bypass) where the chip has those counters, and the L2
    request coalescer's counters (lrc__*) where it has them.
If forcing .cg brings the L2 requests to the full tile sectors, the reduction is L1 reuse; if
not, it happens after the L1 (request coalescing on the way to the L2).

Run (device machine, from the repository root):
  python3 calibration/production/l2_requests_probe.py --out $OUT
It calls ncu itself, once per case (the case runs in a child process of this script).
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys
import time

from probe_io import write_rows  # beside this script, so on sys.path when it runs

TILES = {"t64x64": (64, 64, 64, 4, 4), "t128x128": (128, 128, 64, 8, 3), "t128x256": (128, 256, 64, 8, 3)}
CACHES = {"default": "", "cg": ".cg", "ca": ".ca"}
ORDERS = {"row": 1, "grouped8": 8}
WANT = [r"^lts__t_sectors_srcunit_tex_op_read$", r"^lts__t_sectors_op_read$", r"^lts__t_sector_hit_rate$",
        r"^lts__t_sectors_srcunit_ltcfabric$", r"^l1tex__m_xbar2l1tex_read_sectors$",
        r"^l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts", r"^l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts$",
        r"^lrc__", r"^dram__bytes_read$", r"^gpu__time_duration$"]


def child(tile, cache, order):
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def mm(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, group_m, BLOCK_M: tl.constexpr,
           BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, CACHE: tl.constexpr):
        pid = tl.program_id(0)
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        num_pid_in_group = group_m * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * group_m
        group_size_m = tl.minimum(num_pid_m - first_pid_m, group_m)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
        offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
        offs_k = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + offs_am[:, None] * sam + offs_k[None, :] * sak
        b_ptrs = b_ptr + offs_k[:, None] * sbk + offs_bn[None, :] * sbn
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0, cache_modifier=CACHE)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0, cache_modifier=CACHE)
            acc = tl.dot(a, b, acc)
            a_ptrs += BLOCK_K * sak
            b_ptrs += BLOCK_K * sbk
        c = acc.to(tl.float16)
        offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        tl.store(c_ptr + scm * offs_cm[:, None] + scn * offs_cn[None, :], c,
                 mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))

    bm, bn, bk, warps, stages = TILES[tile]
    M = N = K = 4096
    torch.manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    args = (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
            ORDERS[order])
    kw = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, CACHE=CACHES[cache], num_warps=warps, num_stages=stages)
    k = mm[grid](*args, **kw)  # warm-up (compile), not profiled
    torch.cuda.synchronize()
    err = ((c.float() - (a.float() @ b.float())).norm() / (a.float() @ b.float()).norm()).item()
    ptx = k.asm.get("ptx", "")
    facts = {"case": f"{tile}_{order}_{cache}", "rel_err": err, "cp_async_ca": len(re.findall(r"cp\.async\.ca", ptx)),
             "cp_async_cg": len(re.findall(r"cp\.async\.cg", ptx)), "regs": k.n_regs, "shared": k.metadata.shared}
    mm[grid](*args, **kw)  # the profiled launch (the second)
    torch.cuda.synchronize()
    t = triton.testing.do_bench(lambda: mm[grid](*args, **kw), warmup=25, rep=100, return_mode="median")
    facts["median_us"] = t * 1e3
    print("FACTS " + json.dumps(facts), flush=True)


def metrics(out):
    q = subprocess.run(["ncu", "--query-metrics"], capture_output=True, text=True)
    open(os.path.join(out, "query_metrics.txt"), "w").write(q.stdout + q.stderr)
    names = [l.split()[0] for l in q.stdout.splitlines() if l.strip() and not l.startswith(("-", "Device", "Metric"))]
    chosen = [n for n in names if any(re.search(w, n) for w in WANT)]
    return [n + ".sum" if not n.endswith("hit_rate") else n + ".pct" for n in chosen][:40]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--child", nargs=3)
    a = ap.parse_args()
    if a.child:
        return child(*a.child)
    os.makedirs(a.out, exist_ok=True)
    ms = metrics(a.out)
    print("metrics:", ms, flush=True)
    rows = []
    t0 = time.time()
    for tile in TILES:
        for order in ORDERS:
            for cache in CACHES:
                if time.time() - t0 > 480:
                    print("budget reached", flush=True)
                    break
                cmd = ["ncu", "--csv", "--page", "raw", "--cache-control", "all", "--clock-control", "none",
                       "--kernel-name", "regex:^mm$", "--launch-skip", "1", "--launch-count", "1",
                       "--metrics", ",".join(ms), sys.executable, __file__, "--out", a.out, "--child", tile, cache,
                       order]
                r = subprocess.run(cmd, capture_output=True, text=True)
                name = f"{tile}_{order}_{cache}"
                open(os.path.join(a.out, f"ncu_{name}.log"), "w").write(r.stdout + "\n--stderr--\n" + r.stderr)
                facts = {}
                for line in r.stdout.splitlines():
                    if line.startswith("FACTS "):
                        facts = json.loads(line[6:])
                csv_lines = [l for l in r.stdout.splitlines() if l.startswith('"')]
                vals = {}
                if len(csv_lines) >= 3:
                    rd = list(csv.reader(csv_lines))
                    vals = dict(zip(rd[0], rd[2]))
                row = dict(facts)
                row["case"] = name
                for m in ms:
                    row[m] = vals.get(m, "")
                bm, bn = TILES[tile][0], TILES[tile][1]
                tile_sectors = (4096 // bm) * (4096 // bn) * (bm + bn) * 4096 * 2 / 32
                try:
                    row["tex_over_tile"] = float(str(vals.get("lts__t_sectors_srcunit_tex_op_read.sum", "")).replace(",", "")) / tile_sectors
                except ValueError:
                    row["tex_over_tile"] = ""
                rows.append(row)
                print(name, "tex/tile", row["tex_over_tile"], "ca", facts.get("cp_async_ca"), "cg",
                      facts.get("cp_async_cg"), "us", facts.get("median_us"), flush=True)
    write_rows(os.path.join(a.out, "l2_requests.csv"), rows)


if __name__ == "__main__":
    main()
