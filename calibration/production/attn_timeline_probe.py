"""Per-program timelines and compiled code of Triton's flash-attention forward (the `triton_attn`
cases): why the 128x64, 4-warp kernel runs causal attention in heads-fastest order 1.4-1.7x
slower than tilesim predicts while the same kernel's full attention and the 128x128, 8-warp
kernel in the same order land within a few percent (docs/validation.md).

For each chosen case: the measured kernel (triton_kernels.attn_fwd_kernel) is compiled and timed
as measure.py times it (do_bench, L2 flushed); its SASS is disassembled and its instructions
counted by opcode, in the whole kernel and inside each loop (a backward branch's span); then the
same kernel with %globaltimer and the SM stored at each program's start and end is launched three
times after a 256 MB write and the last timeline kept, and timed the same way (the stamps must
not change the compiled code much: its registers, spills and time are recorded beside).

  python3 calibration/production/attn_timeline_probe.py --out DIR [--match REGEX]   (device machine)

DIR/attn_timeline.csv: case, program (= pid0 + pid1 * grid0), pid0, pid1, sm, start_ns, end_ns.
DIR/attn_kernels.csv: one row per case and variant (measured / stamped): registers, spills,
shared bytes, do_bench median, SASS opcode counts (whole kernel and per loop).
DIR/sass/<case>.sass: the measured kernel's SASS; DIR/sass_loops.csv: per loop of it, opcode
counts and `serialized` (every HGMMA waited for: WARPGROUP.DEPBAR as often as HGMMA).
  python3 calibration/production/attn_timeline_probe.py --out DIR --sass-dir DIR/sass   (no GPU:
  rewrites sass_loops.csv from saved SASS)
"""
import argparse
import collections
import csv
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_io import write_rows  # noqa: E402

try:  # the GPU side; --sass-dir needs neither
    import torch
    import triton
    import triton.language as tl
    from triton.testing import do_bench

    import cases as case_list
    import triton_kernels as tk

    @triton.jit
    def attn_timeline_kernel(Q, K, V, Out, sm_scale, H, HKV, N_CTX, tl_ptr, HEADS_FASTEST: tl.constexpr,
                             CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                             BLOCK_N: tl.constexpr):
        """attn_fwd_kernel with tl_ptr[3 p + 0..2] = start ns, end ns, SM of program p."""
        t0 = tk._globaltimer()
        tk.attn_fwd_kernel(Q, K, V, Out, sm_scale, H, HKV, N_CTX, HEADS_FASTEST, CAUSAL, HEAD_DIM, BLOCK_M, BLOCK_N)
        t1 = tk._globaltimer()
        p = tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)
        tl.store(tl_ptr + 3 * p, t0)
        tl.store(tl_ptr + 3 * p + 1, t1)
        tl.store(tl_ptr + 3 * p + 2, tk._smid().to(tl.int64))
except ImportError:
    torch = None


def sass_of(kernel):
    """The compiled kernel's SASS: Triton's own disassembly if it offers one, else cuobjdump."""
    try:
        s = kernel.asm["sass"]
        if s:
            return s
    except Exception:  # noqa: BLE001
        pass
    cubin = kernel.asm.get("cubin")
    if not cubin:
        return ""
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
        path = f.name
    for tool in ("cuobjdump", "/usr/local/cuda/bin/cuobjdump"):
        try:
            return subprocess.run([tool, "-sass", path], capture_output=True, text=True, timeout=60).stdout
        except Exception:  # noqa: BLE001
            continue
    return ""


LABEL = re.compile(r"^\s*(\.?L\w+):")


def opcode_counts(sass):
    """Opcode counts of the whole kernel and of every loop: a branch back to an earlier label
    closes the span [label, branch] (Triton's SASS names branch targets LBBn). Also counts, per
    loop, the waits for wgmma results (WARPGROUP.DEPBAR): one per HGMMA when ptxas serialised
    the wgmma, one per k-step when they are pipelined."""
    labels, insns = {}, []
    for line in sass.splitlines():
        m = LABEL.match(line)
        if m:
            labels[m.group(1)] = len(insns)
            continue
        if "\t" not in line:
            continue
        ins = re.sub(r"^@!?U?P\w+\s+", "", line.split("\t", 1)[1].strip())
        if ins:
            insns.append(ins)
    op = [i.split()[0].split(".")[0].rstrip(";") for i in insns]
    whole = collections.Counter(op)
    loops = []
    for i, ins in enumerate(insns):
        if op[i] != "BRA":
            continue
        target = ins.split()[1].rstrip(";") if len(ins.split()) > 1 else ""
        if target in labels and labels[target] < i:
            body = collections.Counter(op[labels[target]:i + 1])
            body["WGWAIT"] = sum(1 for x in insns[labels[target]:i + 1] if x.startswith("WARPGROUP.DEPBAR"))
            loops.append((labels[target], i, body))
    return whole, loops


def summarise(counts):
    keys = ("HGMMA", "MUFU", "FFMA", "FMUL", "FADD", "FMNMX", "FSEL", "FSETP", "F2FP", "LDL", "STL", "LDG", "LDGSTS",
            "STG", "LDSM", "LDS", "STS", "BAR", "WARPGROUP", "WGWAIT", "SHFL", "ISETP", "IMAD", "IADD3")
    row = {k: counts.get(k, 0) for k in keys}
    row["total"] = sum(counts.values())
    return row


def loop_rows(case, sass):
    """One row per loop of a kernel's SASS: its instruction counts and whether its wgmma are
    serialised (a wait for every HGMMA)."""
    rows = []
    for i, (a0, a1, body) in enumerate(opcode_counts(sass)[1]):
        row = dict(case=case, loop=i, first=a0, last=a1, serialized=int(body["HGMMA"] > 1 and
                                                                       body["WGWAIT"] >= body["HGMMA"]))
        row.update(summarise(body))
        rows.append(row)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--match", default="")
    ap.add_argument("--sass-dir", default="", help="only rewrite OUT/sass_loops.csv from saved SASS files (no GPU)")
    args = ap.parse_args()
    if args.sass_dir:
        rows = []
        for name in sorted(os.listdir(args.sass_dir)):
            if name.endswith(".sass"):
                rows += loop_rows(name[:-5], open(os.path.join(args.sass_dir, name)).read())
        write_rows(os.path.join(args.out, "sass_loops.csv"), rows)
        return
    os.makedirs(os.path.join(args.out, "sass"), exist_ok=True)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    chosen = [c for c in case_list.build_cases() if c["family"] == "triton_attn" and re.search(args.match, c["case"])]
    rows = []
    with open(os.path.join(args.out, "attn_timeline.csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case", "program", "pid0", "pid1", "sm", "start_ns", "end_ns"])
        for c in chosen:
            bsz, h, hkv, n, d = c["batch"], c["heads"], c["kv_heads"], c["seq"], c["head_dim"]
            g = torch.Generator(device="cuda").manual_seed(3)
            q = torch.rand((bsz, h, n, d), generator=g, device="cuda").mul_(2).sub_(1).half()
            kk = torch.rand((bsz, hkv, n, d), generator=g, device="cuda").mul_(2).sub_(1).half()
            v = torch.rand((bsz, hkv, n, d), generator=g, device="cuda").mul_(2).sub_(1).half()
            out = torch.empty_like(q)
            tiles_q = n // c["block_m"]
            grid = (bsz * h, tiles_q) if c["heads_fastest"] else (tiles_q, bsz * h)
            scale = 1.0 / math.sqrt(d)
            meta = dict(HEADS_FASTEST=bool(c["heads_fastest"]), CAUSAL=bool(c["causal"]), HEAD_DIM=d,
                        BLOCK_M=c["block_m"], BLOCK_N=c["block_n"], num_warps=c["num_warps"],
                        num_stages=c["num_stages"])
            buf = torch.zeros(3 * grid[0] * grid[1], device="cuda", dtype=torch.int64)
            launches = {
                "measured": lambda: tk.attn_fwd_kernel[grid](q, kk, v, out, scale, h, hkv, n, **meta),
                "stamped": lambda: attn_timeline_kernel[grid](q, kk, v, out, scale, h, hkv, n, buf, **meta),
            }
            for variant, launch in launches.items():
                kernel = launch()
                torch.cuda.synchronize()
                ms = do_bench(launch, warmup=25, rep=100, return_mode="median")
                row = dict(case=c["case"], variant=variant, n_regs=getattr(kernel, "n_regs", ""),
                           n_spills=getattr(kernel, "n_spills", ""),
                           shared_bytes=getattr(kernel.metadata, "shared", ""), median_us=round(ms * 1e3, 3))
                sass = sass_of(kernel)
                if variant == "measured" and sass:
                    with open(os.path.join(args.out, "sass", c["case"] + ".sass"), "w") as f:
                        f.write(sass)
                whole, loops = opcode_counts(sass)
                row.update({f"all_{k}": x for k, x in summarise(whole).items()})
                for i, (a0, a1, body) in enumerate(loops[:4]):
                    row[f"loop{i}_span"] = f"{a0}-{a1}"
                    row.update({f"loop{i}_{k}": x for k, x in summarise(body).items()})
                rows.append(row)
                print(c["case"], variant, {k: row[k] for k in ("n_regs", "n_spills", "median_us", "all_STL",
                                                                 "all_LDL")}, len(loops), "loops", flush=True)
            for _ in range(3):
                flush.zero_()
                launches["stamped"]()
            torch.cuda.synchronize()
            vals = buf.view(-1, 3).cpu().tolist()
            t0 = min(r[0] for r in vals)
            for p, (s0, s1, sm) in enumerate(vals):
                w.writerow([c["case"], p, p % grid[0], p // grid[0], sm, s0 - t0, s1 - t0])
            fh.flush()
            print(f"{c['case']}: {len(vals)} programs, {(max(r[1] for r in vals) - t0) / 1e3:.1f} us", flush=True)
    write_rows(os.path.join(args.out, "attn_kernels.csv"), rows)
    sass_dir = os.path.join(args.out, "sass")
    write_rows(os.path.join(args.out, "sass_loops.csv"),
               [r for name in sorted(os.listdir(sass_dir))
                for r in loop_rows(name[:-5], open(os.path.join(sass_dir, name)).read())])


if __name__ == "__main__":
    main()
