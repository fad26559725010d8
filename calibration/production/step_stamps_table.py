#!/usr/bin/env python3
"""The sharer-gap table of calibration/measurements/h100/step_stamps (README there): for two
programs that run at the same time and read the same B panel (pid_m + 1) or A panel (pid_n + 1),
the median over pairs of median |t_p(k) - t_q(k)| over the inner k-step stamps, and the same at
their start. Pairs whose starts are more than half a block duration apart are not concurrent.

  python3 calibration/production/step_stamps_table.py [step_stamps.csv.gz]
"""
import os
import sys

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "../measurements/h100/step_stamps/step_stamps.csv.gz")
d = pd.read_csv(path)
print("| case | k-step ns | B sharers: gap (start gap) | A sharers: gap (start gap) |")
print("| --- | --- | --- | --- |")
for case, g in d.groupby("case", sort=False):
    last = g.kstep.max()
    piv = g.pivot(index="program", columns="kstep", values="t_ns")
    info = g.drop_duplicates("program").set_index("program")[["pid_m", "pid_n"]]
    dur = piv[last] - piv[0]
    at = {(r.pid_m, r.pid_n): p for p, r in info.iterrows()}
    inner = [c for c in piv.columns if 0 < c < last]
    cells = []
    for dm, dn in ((1, 0), (0, 1)):
        gaps, starts = [], []
        for (pm, pn), p in at.items():
            q = at.get((pm + dm, pn + dn))
            if q is None or abs(piv.loc[p, 0] - piv.loc[q, 0]) > 0.5 * dur.median():
                continue
            gaps.append(np.median(np.abs(piv.loc[p, inner].values - piv.loc[q, inner].values)))
            starts.append(abs(piv.loc[p, 0] - piv.loc[q, 0]))
        cells.append(f"{np.median(gaps):.0f} ({np.median(starts):.0f})")
    print(f"| {case} | {dur.median() / last:.0f} | {cells[0]} | {cells[1]} |")
