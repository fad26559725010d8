#!/usr/bin/env python3
"""Two latency-bound blocks on one SM (calibration/sync_pair_probe.sh): per configuration, the
median loop step of a block alone on its SM and of the first block of a pair, and their ratio;
for the partner variants, the full block's step and its partner's.

    python3 calibration/sync_pair_table.py [calibration/measurements/h100/sync_pair/sync_pair.csv]
"""
import collections
import csv
import statistics as st
import sys

PATH = sys.argv[1] if len(sys.argv) > 1 else 'calibration/measurements/h100/sync_pair/sync_pair.csv'


def main():
    groups = collections.defaultdict(list)
    for r in csv.DictReader(open(PATH)):
        groups[(r['mode'], r['active'], r['threads'], r['bytes'], r['mmas'], r['partner'], r['per_sm'])].append(r)

    def step(key, column):
        steps = 256 if key[0].startswith('l2') else 128  # l2, l2tileR, l2shareG: 256 steps
        return st.median(int(r[column]) for r in groups[key]) / steps

    print('source  SMs  threads  bytes/step  mma/warp  lone ns/step  pair ns/step  pair/lone')
    order = sorted(groups, key=lambda k: (k[0], int(k[1]), -int(k[2]), k[5], int(k[3]), int(k[4])))
    for key in order:
        mode, active, threads, nbytes, mmas, partner, per_sm = key
        lone = step(key[:5] + ('0', '1'), 'lone_ns')
        if partner == '0' and per_sm == '1':
            pair = step(key[:6] + ('2',), 'first_ns')
            print(f'{mode:6} {active:>4} {threads:>8} {nbytes:>11} {mmas:>9} {lone:13.0f} {pair:13.0f} {pair / lone:10.3f}')
        elif partner != '0':
            what = 'copies only' if partner == '1' else 'computes only'
            full, other = step(key, 'first_ns'), step(key, 'second_ns')
            print(f'{mode:6} {active:>4} {threads:>8} {nbytes:>11} {mmas:>9} {lone:13.0f} {full:13.0f} {full / lone:10.3f}'
                  f'  (partner {what}: {other:.0f} ns/step)')


if __name__ == '__main__':
    main()
