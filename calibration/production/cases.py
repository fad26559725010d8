"""The cases of calibration/production: every kernel launch that is timed and profiled.

A case is a dict with a unique `case` name, its `set`, its `family` and the parameters its
runner needs. Sets group cases into device calls (run_production.sh runs a list of sets).
Families: triton_mm (one tile per program, grouped/row/column order), triton_persistent,
triton_attn (flash-attention forward), cublas_mm (torch.matmul), ffn_pair (two Triton matmuls
on one stream: H = X W0, Y = H W1).
"""

# Triton tile configurations: (name, BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages).
TILES = {
    "t64x64": (64, 64, 64, 4, 4),
    "t128x64": (128, 64, 64, 4, 4),
    "t128x128": (128, 128, 64, 8, 3),
    "t128x128w4": (128, 128, 64, 4, 4),
    "t128x256": (128, 256, 64, 8, 3),
}

# Weight shapes (N, K) of the linear layers: Llama3-8B (d 4096, 32 heads, 8 KV heads, head dim
# 128, FFN 14336) and GPT-3 175B (d 12288, FFN 49152).
WEIGHTS = {
    "l8b_qkv": (6144, 4096),
    "l8b_o": (4096, 4096),
    "l8b_up": (14336, 4096),
    "l8b_down": (4096, 14336),
    "g3_qkv": (36864, 12288),
    "g3_o": (12288, 12288),
    "g3_up": (49152, 12288),
    "g3_down": (12288, 49152),
}


def cdiv(a, b):
    return (a + b - 1) // b


def order_name(group_m, grid_m):
    if group_m == 1:
        return "row"
    if group_m >= grid_m:
        return "column"
    return f"grouped{group_m}"


def mm_cases(set_name, shapes, tiles, group_ms):
    """Triton matmul cases over shapes (label, M, N, K) x tiles x orders, dropping orders that
    coincide on a grid (group_m >= grid rows is column order)."""
    out = []
    for label, m, n, k in shapes:
        for t in tiles:
            bm = TILES[t][0]
            grid_m = cdiv(m, bm)
            seen = set()
            for g in group_ms:
                gm = grid_m if g == "column" else g
                name = order_name(gm, grid_m)
                if name in seen:
                    continue
                seen.add(name)
                out.append(dict(case=f"mm_{label}_m{m}_{t}_{name}", set=set_name, family="triton_mm", m=m, n=n,
                                k=k, tile=t, group_m=min(gm, grid_m) if gm >= grid_m else gm, order=name))
    return out


def weight_shapes(ms, names=None):
    names = names or list(WEIGHTS)
    return [(w, m, WEIGHTS[w][0], WEIGHTS[w][1]) for m in ms for w in names]


def build_cases():
    cases = []
    l8b = [w for w in WEIGHTS if w.startswith("l8b")]
    squares = [("sq4096", 4096, 4096, 4096), ("sq8192", 8192, 8192, 8192)]
    orders = [1, 4, 8, 16, "column"]
    # Launch orders over weight shapes at prefill sizes, every tile; small and 4-warp tiles on
    # the Llama3-8B shapes and the squares.
    big = weight_shapes([2048, 8192]) + squares
    cases += mm_cases("orders", big, ["t128x64", "t128x128", "t128x256"], orders)
    cases += mm_cases("orders", weight_shapes([2048, 8192], l8b) + squares, ["t64x64", "t128x128w4"], orders)
    # Long K: drift between blocks that share panels grows with the number of k-steps.
    longk = [(f"k{k}", 8192, 8192, k) for k in (1024, 2048, 4096, 8192, 16384, 32768)]
    cases += mm_cases("longk", longk, ["t64x64", "t128x64", "t128x128", "t128x256"], [1, 8, "column"])
    # Rows that start together: in row order every tile row of the first wave reads all of B at
    # once. Whether those rows share B's panels over a long k-loop (DRAM reads near one B) or
    # drift apart and each reads it (near one B per row) separates the first wave's drift from
    # that of later waves, whose rows start apart (the long-K row cases read 1.4-2.5x what the
    # simulator gives).
    rowshare = [(f"rs_k{k}", m, 8192, k) for k in (4096, 16384, 32768) for m in (128, 256, 512, 1024)]
    cases += mm_cases("rowshare", rowshare, ["t128x128", "t128x256"], [1])
    # Decode and small batches: few tile rows, memory-bound.
    cases += mm_cases("decode", weight_shapes([16, 128, 512]), ["t64x64", "t128x64", "t128x128"], [8])
    # Persistent matmul (grid = P programs) against the one-tile-per-program kernel.
    pshapes = [("sq4096", 4096, 4096, 4096), ("m16384", 16384, 4096, 4096), ("l8b_up", 4096, 14336, 4096)]
    for label, m, n, k in pshapes:
        for g in (1, 8):
            for p in (132, 264):
                cases.append(dict(case=f"pmm_{label}_t128x128_g{g}_p{p}", set="persistent",
                                  family="triton_persistent", m=m, n=n, k=k, tile="t128x128", group_m=g,
                                  order=order_name(g, cdiv(m, 128)), programs=p, flatten=True))
            cases.append(dict(case=f"pmm_{label}_t128x128_g{g}_p132_noflat", set="persistent",
                              family="triton_persistent", m=m, n=n, k=k, tile="t128x128", group_m=g,
                              order=order_name(g, cdiv(m, 128)), programs=132, flatten=False))
            cases.append(dict(case=f"mm_{label}_m{m}_t128x128_{order_name(g, cdiv(m, 128))}_p", set="persistent",
                              family="triton_mm", m=m, n=n, k=k, tile="t128x128", group_m=g,
                              order=order_name(g, cdiv(m, 128))))
    # Flash attention forward, head dim 128.
    for b, h, hkv, n in ((1, 32, 8, 4096), (1, 32, 32, 8192), (4, 32, 8, 2048), (1, 32, 8, 16384)):
        for causal in (0, 1):
            for hf in (0, 1):
                for bm, bn, w, s in ((128, 64, 4, 3),) + (((128, 128, 8, 3),) if n == 4096 else ()):
                    cases.append(dict(case=f"attn_b{b}_h{h}_kv{hkv}_n{n}_{'causal' if causal else 'full'}_"
                                           f"{'headsfast' if hf else 'qfast'}_bm{bm}bn{bn}w{w}",
                                      set="attention", family="triton_attn", batch=b, heads=h, kv_heads=hkv,
                                      seq=n, head_dim=128, causal=causal, heads_fastest=hf, block_m=bm,
                                      block_n=bn, num_warps=w, num_stages=s))
    # cuBLAS through torch.matmul on the same shapes.
    for label, m, n, k in weight_shapes([16, 128, 512, 2048, 8192]) + squares + longk:
        cases.append(dict(case=f"cublas_{label}_m{m}", set="cublas", family="cublas_mm", m=m, n=n, k=k))
    # cuBLAS on shapes nothing was inferred from (measured after the nvjet reading and its
    # swizzle rule were fixed on the set above, 2026-11-27): Llama3-70B's weights (d 8192, 64
    # heads, 8 KV heads, head dim 128, FFN 28672) at M values not in that set.
    l70 = {"l70_qkv": (10240, 8192), "l70_o": (8192, 8192), "l70_up": (28672, 8192), "l70_down": (8192, 28672)}
    for m in (32, 256, 1024, 4096):
        for label, (n, k) in l70.items():
            cases.append(dict(case=f"cublas_{label}_m{m}", set="cublas70", family="cublas_mm", m=m, n=n, k=k))
    # cuBLAS as nn.Linear calls it: the weight stored [N, K] row-major (torch.matmul(x, w.t())),
    # so B is column-major for cuBLAS.
    for m in (32, 1024, 4096):
        for label, (n, k) in l70.items():
            cases.append(dict(case=f"cublas_lin_{label}_m{m}", set="cublas_linear", family="cublas_mm", m=m, n=n,
                              k=k, linear=1))
    # FFN pairs (non-gated): GEMM0 X[M, d] W0[d, f] -> H, GEMM1 H W1[f, d] -> Y, one stream.
    for label, m, d, f, t in (("l8b", 16, 4096, 14336, "t64x64"), ("l8b", 512, 4096, 14336, "t128x64"),
                              ("l8b", 4096, 4096, 14336, "t128x128"), ("g3", 2048, 12288, 49152, "t128x128")):
        cases.append(dict(case=f"ffn_{label}_m{m}_{t}_grouped8", set="ffn", family="ffn_pair", m=m, d=d, f=f,
                          tile=t, group_m=8, order="grouped8"))
    # W4A16 (4-bit weights, fp16 activations, group 128) against fp16 of the same tiles.
    for label, m, t in (("l8b_up", 16, "t64x64"), ("l8b_up", 512, "t128x64"), ("l8b_up", 4096, "t128x128"),
                        ("l8b_down", 16, "t64x64"), ("l8b_down", 512, "t128x64"), ("l8b_down", 4096, "t128x128"),
                        ("g3_o", 512, "t128x64"), ("g3_o", 4096, "t128x128")):
        n, k = WEIGHTS[label]
        cases.append(dict(case=f"w4a16_{label}_m{m}_{t}_grouped8", set="w4a16", family="triton_w4a16", m=m, n=n,
                          k=k, tile=t, group_m=8, order=order_name(8, cdiv(m, TILES[t][0])), group_size=128))
        cases.append(dict(case=f"mm_{label}_m{m}_{t}_{order_name(8, cdiv(m, TILES[t][0]))}_w", set="w4a16",
                          family="triton_mm", m=m, n=n, k=k, tile=t, group_m=8,
                          order=order_name(8, cdiv(m, TILES[t][0]))))
    names = [c["case"] for c in cases]
    dup = {x for x in names if names.count(x) > 1}
    assert not dup, f"duplicate case names: {sorted(dup)[:5]}"
    return cases


if __name__ == "__main__":
    import collections
    cs = build_cases()
    print(len(cs), "cases:", dict(collections.Counter(c["set"] for c in cs)))
