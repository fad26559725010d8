#!/usr/bin/env python3
"""Writes one tilesim experiment per measured production case (python3 stdlib only).

  make_experiments.py [--gpu h100|h200|all] [-o calibration/production/experiments]

Each experiment describes the same work as its measured case: shape, tile, warps, stages,
registers and shared memory as Triton compiled them (time.csv), the launch order, the main-loop
kind (`wgmma_cp_async` for Triton's tl.dot on Hopper, `wgmma_tma_ws` for cuBLAS and CUTLASS 3),
`sim: {cold_l2: kernel}` where Nsight Compute flushed the L2, and a `validate:` section naming
its case, family, group (cases of one shape, compared by rank) and subset, and that its event
times were taken after do_bench's 256 MB write (`events_after: write_flush`).

The subsets are split by family, tile configuration and K range, never case by case:
  calibration: Triton matmuls with tiles 128x128 (8 warps) and 64x64 at K <= 8192 on the
               squares and the Llama3-8B shapes; the CUTLASS 3 cooperative kernels with cluster
               1x1 (the TMA/warp-specialised main loop); W4A16 at M = 4096 on the up projection;
               flash attention at N = 4096, BLOCK 128x64 (both masks and grid orders: the
               serialised-wgmma wait is derived from two of them);
  validation:  everything else: the other tiles (128x64, 128x256, 128x128 with 4 warps), GPT-3
               shapes, K >= 16384, persistent kernels, the other attention cases, the FFN pairs,
               cuBLAS (its kernels named by their nvjet names), CUTLASS ping-pong and 2x1
               clusters, and every H200 case.
Regenerate after new measurements; the files are committed so `tilesim validate` needs no
Python.
"""
import argparse
import csv
import functools
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cases import TILES, cdiv  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))


def order_node(c):
    if c["order"] == "row":
        return "{kind: row}"
    if c["order"] == "column":
        return "{kind: column}"
    return "{kind: grouped, group_m: %d}" % c["group_m"]


def subset_of(c, gpu):
    if gpu != "h100":
        return "validation"
    f = c["family"]
    if f == "triton_mm":
        shape_ok = c["case"].startswith(("mm_sq", "mm_l8b", "mm_k"))
        return "calibration" if c["tile"] in ("t128x128", "t64x64") and c["k"] <= 8192 and shape_ok else "validation"
    if f == "triton_w4a16":
        return "calibration" if c["m"] == 4096 and "l8b_up" in c["case"] else "validation"
    if f == "triton_attn":
        return "calibration" if c["seq"] == 4096 and c["block_n"] == 64 else "validation"
    return "validation"


def resources(t):
    return (f"threads: {32 * int(t['num_warps'])}, registers_per_thread: {t['n_regs']}, "
            f"shared_memory_bytes: {t['shared_bytes']}")


def gemm_yaml(c, t, gpu, dtype="fp16"):
    bm, bn, bk, _, stages = TILES[c["tile"]]
    if c["family"] == "triton_persistent" and c["flatten"]:
        # Triton 3.6 compiles the flattened loop's B load synchronously (tt.load into registers,
        # then to shared memory, and waits for each wgmma: persistent_ir_probe.py,
        # measurements/h100/persistent_ir): no k-step overlaps its loads with the MMA.
        stages = 1
    wl = (f"{{kind: gemm, m: {c['m']}, n: {c['n']}, k: {c['k']}, dtype: {dtype}, layout: {{a: row, b: row, c: row}}, "
          f"tile: [{bm}, {bn}, {bk}], stages: {stages}, {resources(t)}, mainloop: wgmma_cp_async")
    # The Triton kernels index A's rows and B's columns modulo M and N (triton_kernels.py): a
    # tile past the edge reads its rows again (row_wrap_probe.py, measurements/h100/row_wrap).
    wl += ", ragged: wrap"
    if dtype == "w4a16":
        # matmul_w4a16_kernel stores two k-rows of 4-bit weights per byte ([K/2, N] int8).
        wl += f", group_size: {c['group_size']}, weight_pack: k2"
    if c["family"] == "triton_persistent":
        wl += f", persistent: {min(c['programs'], cdiv(c['m'], bm) * cdiv(c['n'], bn))}"
        if not c["flatten"]:
            wl += ", persistent_overlap: false"
    return wl + "}"


@functools.lru_cache(maxsize=None)
def serialized_cases():
    """Attention cases whose compiled main loop waits for every wgmma (ptxas serialised them),
    from their SASS (attn_timeline_probe.py, measurements/h100/attn_timeline/sass_loops.csv).
    The H200 runs the same compiled kernels (same Triton, sm_90a; registers and spills match)."""
    path = os.path.join(ROOT, "calibration", "measurements", "h100", "attn_timeline", "sass_loops.csv")
    return {r["case"] for r in csv.DictReader(open(path)) if r["serialized"] == "1"}


def attention_yaml(c, t, serialized):
    mainloop = "{kind: wgmma_cp_async, serialized: true}" if c["case"] in serialized else "wgmma_cp_async"
    return (f"{{kind: attention, batch: {c['batch']}, heads: {c['heads']}, kv_heads: {c['kv_heads']}, "
            f"seq_q: {c['seq']}, seq_kv: {c['seq']}, head_dim: {c['head_dim']}, dtype: fp16, "
            f"causal: {'true' if c['causal'] else 'false'}, form: fused, block_q: {c['block_m']}, "
            f"block_kv: {c['block_n']}, stages: {c['num_stages']}, {resources(t)}, mainloop: {mainloop}}}")


# cuBLAS's Hopper kernels, `nvjet_sm90_hsh_{TM}x{TN}_{BK}x{STAGES}_{CM}x{CN}_{raster}_bz[_coopA|_coopB][_splitK]_NN{T|N}`:
# persistent, TMA-fed, warp-specialised (384 threads: a producer warpgroup and two consumers).
NVJET = re.compile(r"nvjet_(?:sm\d+_)?[a-z0-9]+_(\d+)x(\d+)_(\d+)x(\d+)_(\d+)x(\d+)_([hv])_[a-z0-9]+(_coop[AB])?(_splitK)?"
                   r"_([NT])([NT])([NT])$")


SCHEDULES = {"_coopA": "cooperative", "_coopB": "cooperative_columns", None: "pingpong"}


@functools.lru_cache(maxsize=None)
def first_kernels(gpu):
    """The first profiled kernel of each cuBLAS case: its name and launch figures."""
    path = os.path.join(ROOT, "calibration", "measurements", gpu, "production", "ncu_cases.csv")
    return {r["case"]: r for r in csv.DictReader(open(path)) if r["kernel_index"] == "0"}


def nvjet_swizzle(m, n, tile, cluster):
    """The swizzle an nvjet kernel is described with: its name does not say, its DRAM reads at
    M = 8192 show bands of tiles (docs/validation.md, "cuBLAS"), and its durations where CUTLASS's
    rounding to whole bands would double the grid (M = 128, 512) show no padded tiles. So: the
    widest band, up to CUTLASS's 8, whose rounding adds at most a quarter of the grid."""
    tiles = [cdiv(cdiv(x, t), c) * c for x, t, c in zip((m, n), tile, cluster)]
    for s in (8, 4, 2):
        # CUTLASS's get_log_swizzle_size: a band no wider than the grid's smaller side allows
        if min(tiles) < {8: 6, 4: 3, 2: 2}[s]:
            continue
        rounded = [cdiv(t, s * c) * s * c for t, c in zip(tiles, cluster)]
        if rounded[0] * rounded[1] <= 1.25 * cdiv(m, tile[0]) * cdiv(n, tile[1]):
            return s
    return 1


def cublas_yaml(c, gpu):
    """The experiment of a torch.matmul case, read from its kernel's name (docs/validation.md,
    "cuBLAS"). torch's row-major C = A B is cuBLAS's column-major C^T = B^T A^T: the name's tile
    is TM along torch's N (cuBLAS's M) by TN along torch's M, as the launched grids confirm, and
    the cluster CM x CN likewise. The last letter is the MMA's frame: wgmma's M (64 rows a
    warpgroup) must run along a tile extent divisible by 64, and the tiles 96x64, 224x64 (no
    split) and 192x192 (coopB: 96 a warpgroup) allow that only along TN for the `N` kernels,
    while 64x16 ... 384x16 allow it only along TM for the `T` kernels. So `T` kernels are written
    in cuBLAS's frame (tilesim's m is torch's N; A' = B^T, B' = A^T and C' = C^T, all column-
    major) and `N` kernels in torch's (tilesim's m is torch's M), and tilesim's bm is wgmma's M
    in both. coopA splits the tile along wgmma's M between the two consumer warpgroups, coopB
    along its N (`cooperative` and `cooperative_columns`), no suffix is the ping-pong schedule. The
    raster letter is the direction consecutive tiles step in: h along cuBLAS's N (torch's M), v
    along cuBLAS's M; the swizzle is not in the name (nvjet_swizzle), and the clusters CUTLASS's
    rounding to whole bands adds are not run (`band_padding: skip`: at the clock Nsight Compute
    records the kernels show no such cost). A split-K kernel's slices
    are its grid over the clusters' tiles, their partials summed by a second kernel
    (`split_k_mode: parallel`); a persistent split-K grid (fewer programs) has no form: None. `tilesim import ncu` reads the
    same names the same way (sim/tools/validate/import_ncu.cpp; a test checks that the two agree
    on every committed case)."""
    r = first_kernels(gpu).get(c["case"])
    mt = NVJET.match(r["kernel"]) if r else None
    if not mt:
        return None
    tm, tn, bk, stages, cm, cn = (int(mt.group(i)) for i in range(1, 7))
    raster, coop, op_b, op_a, frame = mt.group(7), mt.group(8), mt.group(10), mt.group(11), mt.group(12)
    # cuBLAS's op letters: N leaves the operand as torch stores it row-major, T is a transposed
    # (column-major) one, as nn.Linear's weight is for B.
    a, b = ("row" if op_a == "N" else "col"), ("row" if op_b == "N" else "col")
    flip = {"row": "col", "col": "row"}
    if frame == "T":
        m, n, tile, cluster = c["n"], c["m"], (tm, tn), (cm, cn)
        layout = f"{{a: {flip[b]}, b: {flip[a]}, c: col}}"
        along = "n" if raster == "h" else "m"
    else:
        m, n, tile, cluster = c["m"], c["n"], (tn, tm), (cn, cm)
        layout = f"{{a: {a}, b: {b}, c: row}}"
        along = "m" if raster == "h" else "n"
    tiles = cdiv(m, tile[0]) * cdiv(n, tile[1])
    slots = cdiv(cdiv(m, tile[0]), cluster[0]) * cluster[0] * cdiv(cdiv(n, tile[1]), cluster[1]) * cluster[1]
    grid = int(r["launch__grid_size"])
    if mt.group(9):
        # Split-K: the grid is the clusters' tiles times the slices (a persistent split-K grid,
        # fewer programs than that, has no tilesim form); the partials meet in a second kernel.
        if grid % slots or grid // slots < 2:
            return None
        programs = f"split_k: {grid // slots}, split_k_mode: parallel"
    else:
        programs = f"persistent: {min(grid, slots)}"
    wl = (f"{{kind: gemm, m: {m}, n: {n}, k: {c['k']}, dtype: fp16, layout: {layout}, tile: [{tile[0]}, {tile[1]}, {bk}], "
          f"stages: {stages}, threads: {r['launch__block_size']}, registers_per_thread: {r['launch__registers_per_thread']}, "
          f"shared_memory_bytes: {r['launch__shared_mem_per_block_dynamic']}, "
          f"schedule: {SCHEDULES[coop]}, {programs}}}")
    order = (f"{{kind: cutlass_sm90, raster: {along}, max_swizzle: {nvjet_swizzle(m, n, tile, cluster)}, "
             f"cluster: [{cluster[0]}, {cluster[1]}], band_padding: skip}}")
    return wl, order, f"{c['m']}x{c['n']}x{c['k']}", tiles


def experiment(c, t, gpu):
    f = c["family"]
    if f in ("triton_mm", "triton_persistent"):
        wl, order, group = gemm_yaml(c, t, gpu), order_node(c), f"{c['m']}x{c['n']}x{c['k']}"
    elif f == "triton_w4a16":
        wl, order, group = gemm_yaml(c, t, gpu, "w4a16"), order_node(c), f"w4a16_{c['m']}x{c['n']}x{c['k']}"
    elif f == "triton_attn":
        # tilesim's fused grid is Q tiles x (batch*heads): column order runs Q tiles fastest
        wl, order = attention_yaml(c, t, serialized_cases()), "{kind: row}" if c["heads_fastest"] else "{kind: column}"
        group = f"attn_{c['batch']}x{c['heads']}x{c['kv_heads']}x{c['seq']}_{'causal' if c['causal'] else 'full'}"
    elif f == "cublas_mm":
        got = cublas_yaml(c, gpu)
        if got is None:
            return None
        wl, order, group, _ = got
    else:
        return None  # CUTLASS and FFN pairs: written by their own functions
    return (f"# Production case {c['case']} ({f}), measured by calibration/production/run_production.sh\n"
            f"name: {c['case']}\narch: {gpu}\nworkload: {wl}\norder: {order}\nsim: {{cold_l2: kernel}}\n"
            f"validate: {{case: {c['case']}, family: {f}, group: {group}, subset: {subset_of(c, gpu)}, "
            f"events_after: write_flush}}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpu", default="all")
    ap.add_argument("-o", "--out", default=os.path.join(HERE, "experiments"))
    a = ap.parse_args()
    for gpu in (["h100", "h200"] if a.gpu == "all" else [a.gpu]):
        path = os.path.join(ROOT, "calibration", "measurements", gpu, "production", "time.csv")
        n = 0
        for t in csv.DictReader(open(path)):
            if t["status"] != "ok":
                continue
            c = json.loads(t["params"])
            y = experiment(c, t, gpu)
            if y is None:
                continue
            d = os.path.join(a.out, gpu, c["family"])
            os.makedirs(d, exist_ok=True)
            open(os.path.join(d, c["case"] + ".yaml"), "w").write(y)
            n += 1
        print(f"{gpu}: {n} experiments", file=sys.stderr)


if __name__ == "__main__":
    main()
