#!/usr/bin/env python3
"""A pair's phases from sync_pair --stamps (calibration/sync_pair_phase_probe.sh): per run, each
role's median wait (from the previous step's end to this step's data being in: the copy, its
wait and the barrier), MMA phase (from the data to the step's end) and step, and for SMs holding
two blocks how far the second block's nearest step end lies from each of the first's, as a
fraction of a step (0: in phase, both finish their steps together; 0.5: in turns).

    python3 calibration/sync_pair_phase_table.py [STAMPS.tar.gz]
        (default calibration/measurements/h200/sync_pair_phase/stamps.tar.gz)
"""
import bisect
import collections
import csv
import io
import statistics as st
import sys
import tarfile


def quartiles(v):
    v = sorted(v)
    return [v[int(p * (len(v) - 1))] for p in (0.25, 0.5, 0.75)] if v else [0, 0, 0]


def summarise(rows):
    by_sm = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in rows:
        by_sm[int(r['sm'])][int(r['role'])].append(
            (int(r['step']), int(r['data_ns']), int(r['t_ns']), int(r['start_ns'])))
    phases = {role: {'wait': [], 'mma': [], 'step': []} for role in (0, 1)}
    offsets = []
    for roles in by_sm.values():
        for role, v in roles.items():
            v.sort()
            for prev, cur in zip(v, v[1:]):
                phases[role]['wait'].append(cur[1] - prev[2])
                phases[role]['mma'].append(cur[2] - cur[1])
                phases[role]['step'].append(cur[2] - prev[2])
        if 0 in roles and 1 in roles:
            # Absolute step ends (the loop start plus the stamp), so the two blocks compare.
            a = [start + end for _, _, end, start in roles[0]]
            b = [start + end for _, _, end, start in roles[1]]
            for prev, cur in zip(a, a[1:]):
                j = bisect.bisect_left(b, cur)
                d = min(abs(b[k] - cur) for k in (j - 1, j) if 0 <= k < len(b))
                offsets.append(min(0.5, d / (cur - prev)))
    return phases, offsets


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else 'calibration/measurements/h200/sync_pair_phase/stamps.tar.gz'
    print('run (a: SMs working, b: bytes a step, m: mma.sync a warp, p: blocks per SM, r: partner) | '
          'first block wait / MMA / step ns | second block wait / MMA / step ns | offset q25 q50 q75')
    with tarfile.open(path) as tf:
        for m in sorted(tf.getmembers(), key=lambda m: m.name):
            phases, offsets = summarise(csv.DictReader(io.TextIOWrapper(tf.extractfile(m))))
            cells = []
            for role in (0, 1):
                p = phases[role]
                cells.append(' / '.join(f'{st.median(p[k]):.0f}' if p[k] else '-' for k in ('wait', 'mma', 'step')))
            q = quartiles(offsets)
            off = f'{q[0]:.2f} {q[1]:.2f} {q[2]:.2f}' if offsets else '-'
            print(f'{m.name[len("stamps_"):-len(".csv")]} | {cells[0]} | {cells[1]} | {off}')


if __name__ == '__main__':
    main()
