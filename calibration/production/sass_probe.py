"""Which production kernels' main loops wait for every wgmma (ptxas serialised them).

For each compiled form of the measured Triton kernels (one case per family, tile, warps, stages
and loop form: Triton specialises on the kernel's constants, and every measured shape's sizes
are multiples of 16, so one launch compiles the code all cases of that form run), the kernel is
launched once, its SASS disassembled and its loops' instructions counted
(attn_timeline_probe.loop_rows: `serialized` = a WARPGROUP.DEPBAR for every HGMMA).

  python3 calibration/production/sass_probe.py --out DIR      (device machine)

DIR/sass_forms.csv: form, the case compiled, registers, spills, shared bytes; DIR/sass_loops.csv:
per loop of each form; DIR/sass/<form>.sass.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

import cases as case_list  # noqa: E402
from attn_timeline_probe import loop_rows, sass_of  # noqa: E402
from measure import Pool, runner  # noqa: E402
from probe_io import write_rows  # noqa: E402


def form_of(c):
    """The compiled form a case runs: family, tile (its warps and stages) and loop form."""
    f = c["family"]
    if f == "triton_persistent":
        return f"{f}_{c['tile']}_{'flat' if c['flatten'] else 'noflat'}"
    if f == "triton_w4a16":
        return f"{f}_{c['tile']}_g{c['group_size']}"
    if f == "triton_attn":
        return (f"{f}_bm{c['block_m']}bn{c['block_n']}w{c['num_warps']}_{'causal' if c['causal'] else 'full'}_"
                f"{'headsfast' if c['heads_fastest'] else 'qfast'}")
    return f"{f}_{c['tile']}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(os.path.join(args.out, "sass"), exist_ok=True)
    forms = {}
    for c in case_list.build_cases():
        if c["family"] not in ("triton_mm", "triton_persistent", "triton_w4a16", "triton_attn"):
            continue
        size = c.get("m", 1) * c.get("n", 1) * c.get("k", 1) * c.get("seq", 1)
        if form_of(c) not in forms or size < forms[form_of(c)][0]:
            forms[form_of(c)] = (size, c)
    pool, rows, loops = Pool(4 << 30), [], []
    for form, (_, c) in sorted(forms.items()):
        try:
            launch = runner(c, pool)[0]
            kernel = launch()
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001
            rows.append(dict(form=form, case=c["case"], error=repr(e)[:200]))
            print(form, "failed", e, flush=True)
            continue
        sass = sass_of(kernel)
        open(os.path.join(args.out, "sass", form + ".sass"), "w").write(sass)
        lr = loop_rows(form, sass)
        loops += lr
        rows.append(dict(form=form, case=c["case"], n_regs=getattr(kernel, "n_regs", ""),
                         n_spills=getattr(kernel, "n_spills", ""), shared_bytes=getattr(kernel.metadata, "shared", ""),
                         serialized=int(any(r["serialized"] for r in lr))))
        print(form, rows[-1], [(r["HGMMA"], r["WGWAIT"]) for r in lr], flush=True)
    write_rows(os.path.join(args.out, "sass_forms.csv"), rows)
    write_rows(os.path.join(args.out, "sass_loops.csv"), loops)


if __name__ == "__main__":
    main()
