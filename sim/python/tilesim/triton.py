"""Triton autotune configurations as tilesim experiments, and a prune hook that ranks them.

    configs = [{"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8,
                "num_warps": 8, "num_stages": 3}, ...]          # or triton.Config objects
    exps = tilesim.from_triton(configs, 4096, 14336, 4096)
    ranked = tilesim.rank_configs(configs, 4096, 14336, 4096)  # [(config, simulated ns), ...]

    @triton.autotune(configs=configs, key=["M", "N", "K"],
                     prune_configs_by={"early_config_prune": tilesim.prune(keep=4)})

A config maps to the tutorial matmul Triton compiles on Hopper (`wgmma` with `cp.async`
software pipelining, the h100 preset's default main loop): tile [BLOCK_SIZE_M, BLOCK_SIZE_N,
BLOCK_SIZE_K], `stages` = num_stages, 32 x num_warps threads, shared memory num_stages x
(BM x BK + BK x BN) elements (what Triton 3 allocates for the operand ring), and Triton's grouped
launch order with group_m = GROUP_SIZE_M (row order when the config has none). Operands A [M, K]
and B [K, N] row-major, as in the tutorial.
"""
from . import InputError
from . import run as _run

_BYTES = {"fp16": 2, "bf16": 2, "fp8": 1, "fp32": 4, "tf32": 4, "int8": 1}


def _fields(config):
    """(kwargs, num_warps, num_stages) of a triton.Config or a dict."""
    if isinstance(config, dict):
        kw = {k: v for k, v in config.items() if k not in ("num_warps", "num_stages")}
        return kw, config.get("num_warps", 4), config.get("num_stages", 3)
    kw = dict(getattr(config, "kwargs", {}) or getattr(config, "all_kwargs", lambda: {})())
    return kw, getattr(config, "num_warps", 4), getattr(config, "num_stages", 3)


def _require(kw, key):
    if key not in kw:
        raise ValueError(f"config {kw}: expected {key} (the tutorial matmul's meta-parameter)")
    v = kw[key]
    if not isinstance(v, int) or v <= 0:
        raise ValueError(f"config {kw}: {key} must be a positive integer, got {v!r}")
    return v


def from_triton(configs, m, n, k, dtype="fp16", arch="h100", name="triton"):
    """One experiment dict per config (same order) for C[m, n] = A[m, k] . B[k, n]."""
    if dtype not in _BYTES:
        raise ValueError(f"dtype: expected one of {', '.join(_BYTES)}, got {dtype!r}")
    out = []
    for i, c in enumerate(configs):
        kw, warps, stages = _fields(c)
        bm, bn, bk = (_require(kw, "BLOCK_SIZE_M"), _require(kw, "BLOCK_SIZE_N"), _require(kw, "BLOCK_SIZE_K"))
        group = kw.get("GROUP_SIZE_M")
        if group is not None and (not isinstance(group, int) or group < 1):
            raise ValueError(f"config {kw}: GROUP_SIZE_M must be a positive integer, got {group!r}")
        order = {"kind": "grouped", "group_m": group} if group and group > 1 else {"kind": "row"}
        out.append({
            "name": f"{name}-{i}",
            "arch": arch,
            "workload": {"kind": "gemm", "m": int(m), "n": int(n), "k": int(k), "dtype": dtype,
                         "layout": {"a": "row", "b": "row", "c": "row"}, "tile": [bm, bn, bk],
                         "stages": int(stages), "threads": 32 * int(warps),
                         "shared_memory_bytes": int(stages) * (bm * bk + bk * bn) * _BYTES[dtype]},
            "order": order,
        })
    return out


def rank_configs(configs, m, n, k, dtype="fp16", arch="h100", jobs=0, skip_invalid=False):
    """[(config, simulated duration in ns)], fastest first (ties keep the given order). A config
    tilesim cannot run (a tile that does not fit the GPU's shared memory or registers) raises
    tilesim.InputError naming it, or with skip_invalid is left out (Triton could not launch it)."""
    configs = list(configs)
    scored = []
    for i, (c, e) in enumerate(zip(configs, from_triton(configs, m, n, k, dtype, arch))):
        try:
            r = _run(e, jobs=jobs).result
        except InputError as err:
            if skip_invalid:
                continue
            raise InputError(f"config {i} ({_fields(c)[0]}): {err}") from None
        scored.append((sum(kk["duration_ns"] for kk in r["kernels"]), i, c))
    scored.sort(key=lambda t: (t[0], t[1]))
    return [(c, ns) for ns, _, c in scored]


def prune(keep=4, m_key="M", n_key="N", k_key="K", dtype="fp16", arch="h100"):
    """A Triton `early_config_prune` hook: keeps the `keep` configs tilesim simulates fastest for
    the launch's sizes (named_args[m_key], [n_key], [k_key]); configs that cannot launch are dropped."""
    def hook(configs, named_args, **kwargs):
        configs = list(configs)
        if len(configs) <= keep:
            return configs
        try:
            m, n, k = (int(named_args[key]) for key in (m_key, n_key, k_key))
        except KeyError as e:
            raise ValueError(f"tilesim.prune: the kernel has no argument {e.args[0]!r}; "
                             f"give m_key/n_key/k_key") from None
        kept = [c for c, _ in rank_configs(configs, m, n, k, dtype, arch, skip_invalid=True)[:keep]]
        return kept or configs  # none can launch as tilesim sees them: leave the choice to Triton
    return hook
