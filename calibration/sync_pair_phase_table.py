#!/usr/bin/env python3
"""The phase of a pair from sync_pair --stamps (calibration/sync_pair_phase_probe.sh): for every SM
holding two blocks, at each step of the first block, how far the second block's latest step end
lies from it, as a fraction of the first block's step time (0: in phase, both finish their steps
together; 0.5: in turns). Prints the quartiles per file and how the offset moves over the loop.

    python3 calibration/sync_pair_phase_table.py [DIR]   (default calibration/measurements/h200/sync_pair_phase)
"""
import bisect
import collections
import csv
import glob
import gzip
import os
import statistics as st
import sys


def quantiles(v):
    v = sorted(v)
    return [v[int(p * (len(v) - 1))] for p in (0.25, 0.5, 0.75)]


def phase(path):
    # Stamps are ns since each block's own loop start; the two blocks of an SM start together
    # within a launch, so the offsets are comparable (the loop starts differ by the launch only).
    by_sm = collections.defaultdict(dict)
    for r in csv.DictReader(gzip.open(path, 'rt')):
        by_sm[int(r['sm'])].setdefault(int(r['role']), []).append((int(r['step']), int(r['t_ns'])))
    offsets, early, late, steps_ns = [], [], [], []
    for sm, roles in by_sm.items():
        if 0 not in roles or 1 not in roles:
            continue
        a = [t for _, t in sorted(roles[0])]
        b = [t for _, t in sorted(roles[1])]
        for i in range(1, len(a)):
            period = a[i] - a[i - 1]
            steps_ns.append(period)
            j = bisect.bisect_left(b, a[i])  # the second block's nearest step end
            d = min(abs(b[k] - a[i]) for k in (j - 1, j) if 0 <= k < len(b))
            f = min(0.5, d / period)
            offsets.append(f)
            (early if i < len(a) // 4 else late if i >= 3 * len(a) // 4 else []).append(f)
    return offsets, early, late, steps_ns


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else 'calibration/measurements/h200/sync_pair_phase'
    print('file | SM pairs x steps | step ns (median) | offset / step: q25 q50 q75 | first quarter q50 | last quarter q50')
    for path in sorted(glob.glob(os.path.join(d, 'stamps_*_p2.csv.gz'))):
        o, e, l, s = phase(path)
        if not o:
            continue
        q = quantiles(o)
        print(f'{os.path.basename(path)} | {len(o)} | {st.median(s):.0f} | {q[0]:.2f} {q[1]:.2f} {q[2]:.2f} | '
              f'{st.median(e):.2f} | {st.median(l):.2f}')


if __name__ == '__main__':
    main()
