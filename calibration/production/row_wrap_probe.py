"""How many times does a Triton matmul whose tile is taller than M ask the L2 for A's rows?
(calibration/production/README.md, "Rows past M")

The tutorial matmul and the W4A16 kernel load A's rows modulo M (`offs_am % M`), so a 128-row
tile over M = 16 holds each of the 16 rows eight times, and Nsight Compute shows the decode
cases looking up more A sectors than one read of the rows and hitting on the repeats. How many
of the repeats reach the L2 depends on which warp loads which row. This probe runs each kernel
with a grid of ONE program (N = BLOCK_N, so no other SM shares A and the L2 request coalescer
has nothing to merge across SMs), K = 8192, and records:
  - Nsight Compute: the sectors that reach the L2 from the SMs (lts__t_sectors_srcunit_tex_op_read,
    its lookup hits), the L1's view of the asynchronous copies, DRAM bytes;
  - `a_repeat`: (tex sectors - B's sectors) / one read of A's M rows, the factor the model needs;
  - the TTGIR blocked layouts of the compiled kernel (which warp holds which rows), so the factor
    can be derived from the layout rather than fitted.
A second pass runs a few configurations with N = 32 tiles wide (32 programs sharing A) to show
what the request coalescer adds across SMs.

Run (device machine, from the repository root):
  python3 calibration/production/row_wrap_probe.py --out $OUT
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_io import write_rows  # noqa: E402

K = 8192
# (kernel, M, BLOCK_M, BLOCK_N, warps, stages, programs along N)
CASES = [
    ("mm", 16, 64, 64, 4, 4, 1), ("mm", 16, 128, 64, 4, 4, 1), ("mm", 16, 128, 128, 8, 3, 1),
    ("mm", 16, 128, 128, 4, 4, 1), ("mm", 16, 128, 256, 8, 3, 1), ("w4a16", 16, 64, 64, 4, 4, 1),
    ("mm", 16, 64, 64, 8, 4, 1), ("mm", 16, 128, 64, 8, 4, 1), ("mm", 16, 64, 128, 4, 4, 1),
    ("w4a16", 16, 128, 64, 4, 4, 1), ("w4a16", 16, 128, 128, 8, 3, 1),
    ("mm", 32, 64, 64, 4, 4, 1), ("mm", 32, 128, 64, 4, 4, 1), ("mm", 32, 128, 128, 8, 3, 1),
    ("mm", 64, 128, 128, 8, 3, 1), ("mm", 48, 64, 64, 4, 4, 1), ("w4a16", 32, 64, 64, 4, 4, 1),
    ("mm", 16, 64, 64, 4, 4, 32), ("mm", 16, 128, 64, 4, 4, 32), ("mm", 16, 128, 128, 8, 3, 32),
    ("w4a16", 16, 64, 64, 4, 4, 32),
]
WANT = [r"^lts__t_sectors_srcunit_tex_op_read$", r"^lts__t_sectors_srcunit_tex_op_read_lookup_hit$",
        r"^lts__t_sectors_op_read$", r"^lts__t_sector_hit_rate$", r"^l1tex__m_xbar2l1tex_read_sectors$",
        r"^l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts", r"^l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts$",
        r"^l1tex__t_sectors_pipe_lsu_mem_global_op_ld$", r"^l1tex__t_requests_pipe_lsu_mem_global_op_ld$",
        r"^l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_(hit|miss)$",
        r"^lrc__request_sectors_op_read", r"^dram__bytes_read$", r"^gpu__time_duration$"]


def name_of(kern, m, bm, bn, w, s, progs):
    return f"{kern}_m{m}_t{bm}x{bn}w{w}s{s}_p{progs}"


def child(kern, m, bm, bn, w, s, progs):
    import torch
    import triton
    import triton_kernels as tk
    n = bn * progs
    torch.manual_seed(0)
    a = torch.randn(m, K, device="cuda", dtype=torch.float16)
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    if kern == "mm":
        b = torch.randn(K, n, device="cuda", dtype=torch.float16) / K ** 0.5
        args = (a, b, c, m, n, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1), 8)
        fn = tk.matmul_kernel
        b_bytes = K * n * 2
    else:
        q = torch.randint(-128, 128, (K // 2, n), device="cuda", dtype=torch.int16).to(torch.int8)
        sc = (torch.rand((K // 128, n), device="cuda") * 0.01).to(torch.float16)
        args = (a, q, sc, c, m, n, K, a.stride(0), a.stride(1), q.stride(0), q.stride(1), sc.stride(0), sc.stride(1),
                c.stride(0), c.stride(1), 8)
        fn = tk.matmul_w4a16_kernel
        b_bytes = K // 2 * n + K // 128 * n * 2
    kw = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=64, num_warps=w, num_stages=s)
    if kern == "w4a16":
        kw["GROUP_SIZE"] = 128
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    k = fn[grid](*args, **kw)  # warm-up (compile), not profiled
    torch.cuda.synchronize()
    ttgir = k.asm.get("ttgir", "")
    ptx = k.asm.get("ptx", "")
    facts = {"layouts": re.findall(r"^#\w+ = #ttg\.\w+<\{[^\n]*\}>", ttgir, re.M)[:8],
             "cp_async": len(re.findall(r"cp\.async\.c[ag]", ptx)), "ld_global": len(re.findall(r"ld\.global", ptx)),
             "regs": k.n_regs, "b_bytes": b_bytes}
    fn[grid](*args, **kw)  # the profiled launch (the second)
    torch.cuda.synchronize()
    print("FACTS " + json.dumps(facts), flush=True)
    return ttgir


def metrics(out):
    q = subprocess.run(["ncu", "--query-metrics"], capture_output=True, text=True)
    names = [l.split()[0] for l in q.stdout.splitlines() if l.strip() and not l.startswith(("-", "Device", "Metric"))]
    chosen = [n for n in names if any(re.search(w, n) for w in WANT)]
    return [n + ".sum" if not n.endswith("hit_rate") else n + ".pct" for n in chosen][:40]


def num(v):
    try:
        return float(str(v).replace(",", ""))
    except ValueError:
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--child", nargs=7)
    ap.add_argument("--budget-s", type=float, default=420)
    a = ap.parse_args()
    if a.child:
        kern, *rest = a.child
        ttgir = child(kern, *map(int, rest))
        os.makedirs(os.path.join(a.out, "ttgir"), exist_ok=True)
        open(os.path.join(a.out, "ttgir", name_of(kern, *map(int, rest)) + ".txt"), "w").write(ttgir)
        return
    os.makedirs(a.out, exist_ok=True)
    ms = metrics(a.out)
    print("metrics:", ms, flush=True)
    rows, t0 = [], time.time()
    for case in CASES:
        if time.time() - t0 > a.budget_s:
            print("budget reached", flush=True)
            break
        name = name_of(*case)
        cmd = ["ncu", "--csv", "--page", "raw", "--cache-control", "all", "--clock-control", "base",
               "--kernel-name", "regex:^matmul(_w4a16)?_kernel$", "--launch-skip", "1", "--launch-count", "1",
               "--metrics", ",".join(ms), sys.executable, __file__, "--out", a.out, "--child", *map(str, case)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        facts, vals = {}, {}
        for line in r.stdout.splitlines():
            if line.startswith("FACTS "):
                facts = json.loads(line[6:])
        csv_lines = [l for l in r.stdout.splitlines() if l.startswith('"')]
        if len(csv_lines) >= 3:
            rd = list(csv.reader(csv_lines))
            vals = dict(zip(rd[0], rd[2]))
        if not vals:
            os.makedirs(os.path.join(a.out, "ttgir"), exist_ok=True)
            open(os.path.join(a.out, "ttgir", f"fail_{name}.log"), "w").write(r.stdout[-4000:] + r.stderr[-4000:])
        kern, m, bm, bn, w, s, progs = case
        row = {"case": name, "kernel": kern, "m": m, "block_m": bm, "block_n": bn, "warps": w, "stages": s,
               "programs": progs, "k": K, "cp_async": facts.get("cp_async"), "ld_global": facts.get("ld_global"),
               "regs": facts.get("regs"), "layouts": " | ".join(facts.get("layouts", []))}
        for mname in ms:
            row[mname] = vals.get(mname, "")
        tex = num(vals.get("lts__t_sectors_srcunit_tex_op_read.sum", ""))
        if tex is not None and facts.get("b_bytes"):
            a_once = m * K * 2 / 32 * progs
            row["a_repeat"] = (tex - facts["b_bytes"] / 32) / a_once
        rows.append(row)
        print(name, "a_repeat", row.get("a_repeat"), "cp.async", facts.get("cp_async"), flush=True)
    write_rows(os.path.join(a.out, "row_wrap.csv"), rows)


if __name__ == "__main__":
    main()
