#!/usr/bin/env python3
"""How a kernel's waves hold together, from a per-program timeline (docs/validation.md, "Waves
that dissolve"): block durations, each SM's mean block duration (spread among the SMs that are
not favoured, and its correlation between the run's two halves), how far apart blocks that share
a B panel start (pid_m and pid_m + 1, same pid_n) by quarter of the run, and the phase of block
starts within a block duration after the first wave.

    python3 calibration/production/timeline_phases.py CASE [--measured TIMELINE.csv.gz]
    python3 calibration/production/timeline_phases.py CASE --simulated SIM.csv --n-tiles N

--measured: `measure.py timeline` output (case, program, pid_m, pid_n, sm, start_ns, end_ns; default
the production H100's). --simulated: `tilesim run EXPERIMENT --timeline SIM.csv` of the case's
experiment; its block b is tile (b // N, b % N) in row order, N the tiles along n.
"""
import argparse
import collections
import csv
import gzip
import statistics as st

DEFAULT = 'calibration/measurements/h100/production/timeline.csv.gz'


def quantile(v, p):
    v = sorted(v)
    return v[int(p * (len(v) - 1))]


def load_measured(path, case):
    with gzip.open(path, 'rt') as f:
        return [(int(r['pid_m']), int(r['pid_n']), int(r['sm']), float(r['start_ns']), float(r['end_ns']))
                for r in csv.DictReader(f) if r['case'] == case]


def load_simulated(path, n_tiles):
    with open(path) as f:
        return [(int(r['block']) // n_tiles, int(r['block']) % n_tiles, int(r['sm']), float(r['start_ns']),
                 float(r['end_ns'])) for r in csv.DictReader(f)]


def per_sm_spread(rows, med):
    t0, t1 = min(r[3] for r in rows), max(r[4] for r in rows)
    halves = (collections.defaultdict(list), collections.defaultdict(list))
    for _, _, sm, s, e in rows:
        halves[0 if s < (t0 + t1) / 2 else 1][sm].append((e - s) / med)
    sms = [sm for sm in halves[0] if sm in halves[1]]
    a = {sm: st.mean(halves[0][sm]) for sm in sms}
    b = {sm: st.mean(halves[1][sm]) for sm in sms}
    others = [sm for sm in sms if (a[sm] + b[sm]) / 2 >= 0.95]  # the favoured SMs run >5% faster
    x, y = [a[sm] for sm in others], [b[sm] for sm in others]
    mx, my = st.mean(x), st.mean(y)
    corr = sum((p - mx) * (q - my) for p, q in zip(x, y)) / (
        (sum((p - mx) ** 2 for p in x) * sum((q - my) ** 2 for q in y)) ** 0.5 or 1)
    rel = [(a[sm] + b[sm]) / (mx + my) for sm in others]
    return len(sms) - len(others), st.pstdev(rel), corr


def report(name, rows):
    dur = [e - s for *_, s, e in rows]
    med = st.median(dur)
    t0, t1 = min(r[3] for r in rows), max(r[4] for r in rows)
    print(f'{name}: {len(rows)} blocks over {(t1 - t0) / 1e3:.0f} us, block duration median {med / 1e3:.1f} us '
          f'(q10 {quantile(dur, .1) / med:.3f}, q90 {quantile(dur, .9) / med:.3f})')
    fav, sd, corr = per_sm_spread(rows, med)
    print(f'  SMs: {fav} favoured (>5% faster); the others\' mean block duration spreads by {100 * sd:.2f}% (sd), '
          f'correlation between the run\'s halves {corr:.2f}')
    start = {(m, n): s for m, n, _, s, _ in rows}
    quarters = collections.defaultdict(list)
    for (m, n), s in start.items():
        if (m + 1, n) in start:
            quarters[min(3, int(4 * (s - t0) / (t1 - t0)))].append(abs(start[(m + 1, n)] - s) / med)
    for q in sorted(quarters):
        v = quarters[q]
        print(f'  quarter {q}: B sharers start apart by {quantile(v, .1):.2f} / {quantile(v, .5):.2f} / '
              f'{quantile(v, .9):.2f} of a block (q10 / median / q90), {sum(x < 0.1 for x in v) / len(v):.2f} within 0.1')
    phases = [((s - t0) / med) % 1 for *_, s, _ in rows if s - t0 > 1.5 * med]
    hist = [0] * 10
    for p in phases:
        hist[min(9, int(p * 10))] += 1
    print('  start phase after the first wave (tenths of a block):', ' '.join(f'{h / len(phases):.2f}' for h in hist))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('case')
    ap.add_argument('--measured', default=DEFAULT)
    ap.add_argument('--simulated')
    ap.add_argument('--n-tiles', type=int)
    a = ap.parse_args()
    if a.simulated:
        if not a.n_tiles:
            ap.error('--simulated needs --n-tiles (the tiles along n)')
        report('simulated', load_simulated(a.simulated, a.n_tiles))
    else:
        rows = load_measured(a.measured, a.case)
        if not rows:
            ap.error(f'no case {a.case!r} in {a.measured}')
        report(f'measured {a.case}', rows)


if __name__ == '__main__':
    main()
