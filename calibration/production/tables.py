#!/usr/bin/env python3
"""docs/validation.md's production tables from `tilesim validate --json` output.

VALIDATE.json may also be `--cases-jsonl` files (a case per line), several joined by commas: the
cases of runs split for time, read as one.

    python3 calibration/production/tables.py groups VALIDATE.json [FAMILY[,FAMILY]]  # per tile and range
    python3 calibration/production/tables.py versus-k VALIDATE.json # DRAM reads vs K, long-K set
    python3 calibration/production/tables.py attention VALIDATE.json # flash attention per mask and grid

FAMILY defaults to triton_mm (groups of docs/validation.md: triton_w4a16,triton_mm). The groups: decode / small batch (M <= 512), long K (the 8192 x 8192 x K cases), prefill
(M >= 2048); per tile, the L2 hit MAE in points, the DRAM read MAPE, the duration MAPE and the
duration's mean signed error (simulated over measured, minus 1).
"""
import collections
import json
import re
import sys

CASE = re.compile(r"_m(\d+)_t(\w+?)_(row|column|grouped\d+)(_w)?$")


def all_cases(path):
    """The cases of a --json report, or of --cases-jsonl files joined by commas."""
    for part in path.split(","):
        with open(part) as fh:
            if part.endswith(".jsonl"):
                yield from (json.loads(line) for line in fh if line.strip())
            else:
                yield from json.load(fh)["cases"]


def cases(path, family):
    for c in all_cases(path):
        if c.get("family") != family:
            continue
        m = CASE.search(c["case"])
        if m:
            yield c, int(m.group(1)), m.group(2), m.group(3)


def group_of(name, m):
    if name.startswith("w4a16_"):
        return "W4A16"
    if m <= 512:
        return "decode / small batch (M <= 512)"
    return "long K (8192 x 8192 x K)" if name.startswith("mm_k") else "prefill (M >= 2048)"


HEADER = ("| cases | tile | n | L2 hit MAE (points) | DRAM read MAPE | duration MAPE | duration mean error |\n"
          "| --- | --- | --- | --- | --- | --- | --- |")


def row(label, tile, cs):
    """One table row: hit MAE, DRAM read MAPE, duration MAPE and mean signed duration error."""
    def err(key):
        return [c["simulated"][key] / c["measured"][key] - 1 for c in cs
                if c["measured"].get(key) and c["simulated"].get(key) is not None]
    hits = [abs(c["simulated"]["l2_hit_rate_pct"] - c["measured"]["l2_hit_rate_pct"]) for c in cs
            if c["measured"].get("l2_hit_rate_pct") is not None]
    rd, du = err("dram_read_bytes"), err("duration_ns")
    mean = lambda v: sum(v) / len(v) if v else float("nan")
    print(f"| {label} | {tile} | {len(cs)} | {mean(hits):.1f} | {100 * mean([abs(x) for x in rd]):.1f}% | "
          f"{100 * mean([abs(x) for x in du]):.1f}% | {100 * mean(du):+.1f}% |")


def groups(path, family):
    agg = collections.defaultdict(list)
    for fam in family.split(","):
        for c, m, tile, _ in cases(path, fam):
            agg[(group_of(c["case"], m), tile)].append(c)
    print(HEADER)
    for (grp, tile), cs in sorted(agg.items(), key=lambda kv: (kv[0][0] != "W4A16", kv[0])):
        row(grp, "t" + tile, cs)


ATTN_MASKS = ("full", "causal, Q fastest", "causal, heads fastest (serialised)")


def attention(path, _family):
    """Flash attention per kernel tile (the case name's last part) and mask/grid order."""
    agg = collections.defaultdict(list)
    for c in all_cases(path):
        if c.get("family") != "triton_attn":
            continue
        name = c["case"]
        mask = ATTN_MASKS[0] if "_full_" in name else ATTN_MASKS[1] if "_qfast_" in name else ATTN_MASKS[2]
        agg[(name.rsplit("_", 1)[1], mask)].append(c)
    print(HEADER)
    for (tile, mask), cs in sorted(agg.items(), key=lambda kv: (kv[0][0], ATTN_MASKS.index(kv[0][1]))):
        row(mask, tile, cs)


def versus_k(path, family):
    table = collections.defaultdict(dict)
    for c, _, tile, order in cases(path, family):
        k = re.match(r"mm_k(\d+)_", c["case"])
        if not k:
            continue
        table[(tile, int(k.group(1)))][re.sub(r"\d+$", "", order) + ("8" if order == "grouped8" else "")] = c
    print("| tile | K | row meas / sim GB | grouped8 meas / sim GB | column meas / sim GB |")
    print("| --- | --- | --- | --- | --- |")
    for (tile, k), by in sorted(table.items()):
        cells = []
        for order in ("row", "grouped8", "column"):
            c = by.get(order)
            cells.append(f"{c['measured']['dram_read_bytes'] / 1e9:.2f} / {c['simulated']['dram_read_bytes'] / 1e9:.2f}"
                         if c else "-")
        print(f"| t{tile} | {k} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    modes = {"groups": groups, "versus-k": versus_k, "attention": attention}
    if len(sys.argv) < 3 or sys.argv[1] not in modes:
        sys.exit(__doc__)
    family = sys.argv[3] if len(sys.argv) > 3 else "triton_mm"
    modes[sys.argv[1]](sys.argv[2], family)
