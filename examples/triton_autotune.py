#!/usr/bin/env python3
"""Simulate a Triton autotune space for a Llama3-8B GEMM, plot it, and prune it.

The space is the tutorial matmul's meta-parameters (tile, warps, stages, GROUP_SIZE_M: row
order at 1, Triton's grouped order at 8) for the up projection of Llama3-8B at a prefill batch
(M x 14336 x 4096). Each configuration is simulated by tilesim on the H100 preset; the plot shows
the simulated time and DRAM bytes of every configuration, by launch order, and marks the ones
`tilesim.prune(keep=...)` would hand to Triton's autotuner.

    PYTHONPATH=build/python python3 examples/triton_autotune.py --out OUT_DIR [--m 4096] [--small]

Writes OUT_DIR/triton_autotune.png and OUT_DIR/triton_autotune.csv. `--small` (what `make test`
runs) uses a 1024 x 1024 x 1024 problem and a few configurations. docs/python.md.
"""
import argparse
import itertools
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import tilesim  # noqa: E402


def space(small):
    tiles = [(64, 64), (128, 128)] if small else [(64, 64), (128, 64), (128, 128), (128, 256)]
    warps = [4] if small else [4, 8]
    stages = [3] if small else [3, 4]
    configs = []
    for (bm, bn), w, s, g in itertools.product(tiles, warps, stages, [1, 8]):
        configs.append({"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": g,
                        "num_warps": w, "num_stages": s})
    return configs


def label(c):
    return f"{c['BLOCK_SIZE_M']}x{c['BLOCK_SIZE_N']} w{c['num_warps']} s{c['num_stages']}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--keep", type=int, default=4)
    ap.add_argument("--small", action="store_true")
    args = ap.parse_args()
    m, n, k = (1024, 1024, 1024) if args.small else (args.m, 14336, 4096)
    configs = space(args.small)
    rows = []
    for c, e in zip(configs, tilesim.from_triton(configs, m, n, k)):
        try:
            r = tilesim.run(e).result
        except tilesim.InputError as err:  # a configuration that cannot launch
            print(f"skipped {label(c)} GROUP_SIZE_M={c['GROUP_SIZE_M']}: {err}")
            continue
        kern = r["kernels"][0]
        rows.append(dict(config=label(c), group_m=c["GROUP_SIZE_M"], us=kern["duration_ns"] / 1e3,
                         dram_gb=kern["dram"]["read_bytes"] / 1e9, tflops=kern["tflops"], cfg=c))
    kept = tilesim.prune(keep=args.keep)(configs, {"M": m, "N": n, "K": k})

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "triton_autotune.csv"), "w") as f:
        f.write("config,group_m,simulated_us,dram_read_gb,tflops,kept_by_prune\n")
        for r in rows:
            f.write(f"{r['config']},{r['group_m']},{r['us']:.2f},{r['dram_gb']:.3f},{r['tflops']:.1f},"
                    f"{int(r['cfg'] in kept)}\n")

    names = sorted({r["config"] for r in rows}, key=lambda s: min(x["us"] for x in rows if x["config"] == s))
    fig, axes = plt.subplots(1, 2, figsize=(13, 0.32 * len(names) + 1.8), sharey=True)
    for ax, key, title in ((axes[0], "us", "simulated time (us)"), (axes[1], "dram_gb", "DRAM reads (GB)")):
        for j, (g, color, name) in enumerate(((1, "#d62728", "row (GROUP_SIZE_M=1)"),
                                              (8, "#1f77b4", "grouped (GROUP_SIZE_M=8)"))):
            ys, xs = [], []
            for i, nm in enumerate(names):
                for r in rows:
                    if r["config"] == nm and r["group_m"] == g:
                        ys.append(i + (j - 0.5) * 0.4)
                        xs.append(r[key])
            ax.barh(ys, xs, height=0.4, color=color, label=name)
        ax.set_title(title)
        ax.grid(axis="x", alpha=0.3)
    for r in rows:
        if r["cfg"] in kept:
            i = names.index(r["config"]) + (0.2 if r["group_m"] == 8 else -0.2)
            axes[0].annotate("kept", (r["us"], i), xytext=(4, -3), textcoords="offset points", fontsize=8)
    axes[0].set_yticks(range(len(names)), names, fontsize=8)
    axes[0].invert_yaxis()
    axes[0].legend(loc="lower right", fontsize=8)
    fig.suptitle(f"Triton autotune space, {m} x {n} x {k} fp16 on h100 (tilesim; tilesim.prune(keep={args.keep}))",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "triton_autotune.png"), dpi=110)
    best = min(rows, key=lambda r: r["us"])
    print(f"{len(rows)} configurations simulated; fastest {best['config']} GROUP_SIZE_M={best['group_m']} "
          f"{best['us']:.1f} us; prune keeps {len(kept)}; wrote {args.out}/triton_autotune.png")


if __name__ == "__main__":
    main()
