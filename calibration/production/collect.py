#!/usr/bin/env python3
"""Splits Nsight Compute raw pages into cases and writes one case table (python3 stdlib only).

  collect.py DIR... [-o measurements.csv] [--all-metrics]

DIR holds what measure.py and run_production.sh wrote: ncu_<tag>.csv (`ncu --import R --csv
--page raw --print-units base`) with profile_cases_<tag>.csv (index, case, status) beside it.
The rows of a report are in launch order; each case's kernels are followed by the marker
kernel `case_marker_kernel` launched with grid (index + 1), so the rows between two markers
belong to the case the second marker names, whatever number of kernels it launched.

Output: one row per measured kernel (the marker rows dropped), `case` first, then the kernel
name, its position in the case, and the metrics, in base units. This is the case-table form
`tilesim validate --measured` reads (sim/validate/measured.hpp).
"""
import argparse
import csv
import glob
import os
import sys

MARKER = "case_marker_kernel"
# The metrics kept (the raw pages also hold every device attribute); --all-metrics keeps all.
KEEP = ["dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sector_hit_rate.pct", "lts__t_sectors_op_read.sum",
        "lts__t_sectors_op_read_lookup_hit.sum", "lts__t_sectors_op_write.sum", "lts__t_sectors_srcunit_tex_op_read.sum",
        "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", "lts__t_sectors_srcunit_ltcfabric.sum",
        "gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second", "launch__grid_size", "launch__block_size",
        "launch__registers_per_thread", "launch__shared_mem_per_block_dynamic", "launch__shared_mem_per_block_static",
        "launch__waves_per_multiprocessor", "launch__occupancy_limit_registers", "launch__occupancy_limit_shared_mem",
        "launch__occupancy_limit_warps", "launch__occupancy_limit_blocks"]


def read_raw(path):
    rows = list(csv.reader(open(path, newline="")))
    hdr_i = next((i for i, r in enumerate(rows) if "Kernel Name" in r and "ID" in r), None)
    if hdr_i is None:
        return [], []
    hdr = rows[hdr_i]
    data = [r for r in rows[hdr_i + 2:] if len(r) == len(hdr)]
    return hdr, data


def number(x):
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return None


def split_cases(hdr, data, cases):
    """[(case, [kernel rows])] in report order."""
    col = {h: i for i, h in enumerate(hdr)}
    grid_col = col.get("launch__grid_size")
    out, pending = [], []
    for r in data:
        if MARKER in r[col["Kernel Name"]]:
            idx = int(number(r[grid_col])) - 1 if grid_col is not None else None
            if idx is None or idx not in cases:
                raise SystemExit(f"marker with grid {r[grid_col]} names no profiled case")
            out.append((cases[idx], pending))
            pending = []
        else:
            pending.append(r)
    if pending:
        print(f"warning: {len(pending)} kernel rows after the last marker dropped", file=sys.stderr)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", help="folders of runs (their cases are concatenated)")
    ap.add_argument("-o", "--out", default=None)
    ap.add_argument("--all-metrics", action="store_true", help="keep every column of the raw pages")
    a = ap.parse_args()
    metrics, table = [], []
    for path in sorted(p for d in a.dirs for p in glob.glob(os.path.join(d, "ncu_*.csv"))):
        tag = os.path.basename(path)[len("ncu_"):-len(".csv")]
        listing = os.path.join(os.path.dirname(path), f"profile_cases_{tag}.csv")
        if not os.path.exists(listing):
            continue
        cases = {int(r[0]): r[1] for r in csv.reader(open(listing)) if len(r) >= 3 and r[2] == "ok"}
        hdr, data = read_raw(path)
        if not hdr:
            print(f"{path}: no Nsight Compute rows", file=sys.stderr)
            continue
        ms = [h for h in hdr if "__" in h and (a.all_metrics or h in KEEP)]
        metrics += [m for m in ms if m not in metrics]
        col = {h: i for i, h in enumerate(hdr)}
        for case, rows in split_cases(hdr, data, cases):
            for j, r in enumerate(rows):
                rec = {"case": case, "kernel": r[col["Kernel Name"]], "kernel_index": j}
                rec.update({m: r[col[m]].replace(",", "") for m in ms})
                table.append(rec)
    out = open(a.out, "w", newline="") if a.out else sys.stdout
    w = csv.DictWriter(out, fieldnames=["case", "kernel", "kernel_index"] + metrics, lineterminator="\n")
    w.writeheader()
    for rec in table:
        w.writerow(rec)
    print(f"{len(table)} kernel rows of {len({r['case'] for r in table})} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
