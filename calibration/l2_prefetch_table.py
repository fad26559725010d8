#!/usr/bin/env python3
"""The L2 prefetch probe's Nsight Compute pages as one table (calibration/l2_prefetch_probe.sh).

    python3 calibration/l2_prefetch_table.py DIR                  # DIR/ncu/*.csv -> long CSV on stdout
    python3 calibration/l2_prefetch_table.py ncu.csv --summary    # per case: DRAM over requested, hits

Each page DIR/ncu/HINT_CHUNK_WIDTH_PASSES.csv is one kernel's raw page (--page raw, base units),
after the probe's own output line.
"""
import collections
import csv
import os
import sys

from ncu_raw import first_kernel

SPAN = 8 * 2**20  # the probe's default BYTES


def long_rows(d):
    for name in sorted(os.listdir(os.path.join(d, 'ncu'))):
        hint, chunk, width, passes = name[:-4].split('_')
        m = first_kernel(os.path.join(d, 'ncu', name))
        for h, v in (m or {}).items():
            if h.startswith(('dram__', 'lts__', 'gpu__')):  # the asked-for metrics
                yield hint, chunk, width, passes, h, v


def summary(path):
    t = collections.defaultdict(dict)
    for r in csv.DictReader(open(path)):
        t[(r['hint'], int(r['chunk']), int(r['width']), int(r['passes']))][r['metric']] = float(r['value'])
    print('hint  chunk width passes  requested_MiB  dram/requested  tex_sectors/requested  tex_hit%  '
          'sectors/request  fabric/tex  fabric_hit%  us')
    for (hint, chunk, width, passes), m in sorted(t.items()):
        req = SPAN * width * passes / chunk
        tex = m.get('lts__t_sectors_srcunit_tex_op_read.sum', 0)
        hit = m.get('lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum', 0)
        rq = m.get('lts__t_requests_srcunit_tex_op_read.sum', 0)
        fab = m.get('lts__t_sectors_srcunit_ltcfabric_op_read.sum', 0)
        fhit = m.get('lts__t_sectors_srcunit_ltcfabric_op_read_lookup_hit.sum', 0)
        print(f'{hint:>5} {chunk:5d} {width:5d} {passes:6d}  {req / 2**20:13.1f}  '
              f'{m.get("dram__bytes_read.sum", 0) / req:14.3f}  {tex * 32 / req:21.3f}  {100 * hit / max(tex, 1):8.1f}  '
              f'{tex / max(rq, 1):15.2f}  {fab / max(tex, 1):10.3f}  {100 * fhit / max(fab, 1):11.1f}  '
              f'{m.get("gpu__time_duration.sum", 0) / 1000:.2f}')


def main():
    if '--summary' in sys.argv:
        summary(sys.argv[1])
        return
    print('hint,chunk,width,passes,metric,value')
    for row in long_rows(sys.argv[1]):
        print(','.join(map(str, row[:5])) + f',{row[5]:g}')


if __name__ == '__main__':
    main()
