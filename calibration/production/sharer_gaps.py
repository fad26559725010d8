#!/usr/bin/env python3
"""How far apart blocks that share an operand end, from a `tilesim run --timeline` CSV: the
simulated side of the ends-only step stamps (calibration/measurements/h100/step_stamps).

    python3 calibration/production/sharer_gaps.py TIMELINE.csv [--first-wave 132] [--group-m 8]

For a grouped launch order (Triton's GROUP_M) over the first wave (dispatch positions below
--first-wave): B sharers are positions p and p + 1 of one group of GROUP_M (the same output
column), A sharers p and p + GROUP_M (the same output row; this assumes one group of GROUP_M
rows spans the first wave, GROUP_M x the grid's columns >= --first-wave, as for the stamps'
kernels). Prints the first wave's start
range, the median end gap of each kind of pair, and the spread of the B-sharing groups' mean
ends, in ns, as the stamps' README tabulates them.
"""
import argparse
import csv
import statistics


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("timeline")
    ap.add_argument("--first-wave", type=int, default=132)
    ap.add_argument("--group-m", type=int, default=8)
    a = ap.parse_args()
    start, end = {}, {}
    with open(a.timeline) as fh:
        for r in csv.DictReader(fh):
            p = int(r["position"])
            if r["kernel_index"] == "0" and p < a.first_wave:
                start[p], end[p] = float(r["start_ns"]), float(r["end_ns"])
    g = a.group_m
    b_gaps = [abs(end[p] - end[p + 1]) for p in end if p + 1 in end and p % g != g - 1]
    a_gaps = [abs(end[p] - end[p + g]) for p in end if p + g in end]
    groups = {}
    for p, e in end.items():
        groups.setdefault(p // g, []).append(e)
    means = [statistics.mean(v) for v in groups.values() if len(v) == g]
    print("starts %.0f-%.0f ns, A sharers' ends %.0f ns apart (median), B sharers' %.0f, groups' mean ends "
          "spread %.0f ns" % (min(start.values()), max(start.values()), statistics.median(a_gaps),
                              statistics.median(b_gaps), max(means) - min(means)))


if __name__ == "__main__":
    main()
