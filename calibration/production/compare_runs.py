#!/usr/bin/env python3
"""Two `tilesim validate --cases-jsonl` runs side by side, per family and subset.

For the cases both files hold: L2 hit-rate MAE (points), DRAM read MAPE, duration MAPE and L2
read lookups MAPE, BEFORE -> AFTER; `--cases` adds a line per case (hit rates, signed DRAM read,
duration and lookup errors) for the cases whose name holds SUBSTRING.

    python3 calibration/production/compare_runs.py BEFORE.jsonl AFTER.jsonl [--cases SUBSTRING]
"""
import collections
import json
import sys


def load(path):
    with open(path) as f:
        return {d["case"]: d for d in (json.loads(line) for line in f if line.strip())}


def err(sim, meas):
    return sim / meas - 1 if sim is not None and meas else None


def figures(run, cases):
    hit, dram, time, lookups = [], [], [], []
    for c in cases:
        m, s = run[c]["measured"], run[c]["simulated"]
        if m.get("l2_hit_rate_pct") is not None and s.get("l2_hit_rate_pct") is not None:
            hit.append(abs(m["l2_hit_rate_pct"] - s["l2_hit_rate_pct"]))
        for out, key in ((dram, "dram_read_bytes"), (time, "duration_ns"), (lookups, "l2_read_lookups")):
            e = err(s.get(key), m.get(key))
            if e is not None:
                out.append(abs(e))
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")
    return "%5.2f / %5.1f%% / %5.1f%% / lookups %5.1f%%" % (
        mean(hit), 100 * mean(dram), 100 * mean(time), 100 * mean(lookups))


def main(argv):
    if len(argv) not in (3, 5) or (len(argv) == 5 and argv[3] != "--cases"):
        sys.exit(__doc__)
    before, after = load(argv[1]), load(argv[2])
    common = sorted(c for c in before if c in after)
    groups = collections.defaultdict(list)
    for c in common:
        groups[(before[c]["family"], before[c]["subset"])].append(c)
    for (family, subset), cases in sorted(groups.items()):
        print("%-26s %-11s %4d  %s  ->  %s" % (family, subset, len(cases), figures(before, cases),
                                                figures(after, cases)))
    if len(argv) == 5:
        pct = lambda e: "%+6.1f" % (100 * e) if e is not None else "     -"
        for c in common:
            if argv[4] not in c:
                continue
            m, s, t = before[c]["measured"], before[c]["simulated"], after[c]["simulated"]
            hit = lambda d: d.get("l2_hit_rate_pct") if d.get("l2_hit_rate_pct") is not None else float("nan")
            errors = [" ".join(pct(err(r.get(key), m.get(key))) for r in (s, t))
                      for key in ("dram_read_bytes", "duration_ns", "l2_read_lookups")]
            print("%-48s hit %5.1f %5.1f %5.1f  dram %s  time %s  lookups %s" % ((c, hit(m), hit(s), hit(t)) + tuple(errors)))


if __name__ == "__main__":
    main(sys.argv)
