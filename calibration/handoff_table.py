#!/usr/bin/env python3
"""Per-chain summary of calibration/handoff_probe.sh's timelines (python3 stdlib only).

  handoff_table.py measurements/h100/sync/handoff/handoff.tar.gz [> handoff_chains.csv]

For every run and chain: when the producer's blocks start and end, when the consumers start,
end their wait and end, the consumers' own work (end minus wait end: median and longest), and
which SMs hold two consumer blocks of the chain, or a consumer beside a producer. In microseconds
from the run's first block.
"""
import collections
import csv
import io
import sys
import tarfile


def chains(rows):
    by = collections.defaultdict(list)
    for r in rows:
        by[(int(r["chain"]), int(r["kernel"]))].append(r)
    for c in sorted({k[0] for k in by}):
        p, q = by[(c, 0)], by[(c, 1)]
        us = lambda v: int(v) / 1e3  # noqa: E731
        work = sorted(us(r["end_ns"]) - us(r["wait_end_ns"] or r["start_ns"]) for r in q)
        producer_sms = {int(r["sm"]) for r in p}
        per_sm = collections.Counter(int(r["sm"]) for r in q)
        yield dict(chain=c,
                   producer_start=min(us(r["start_ns"]) for r in p), producer_end=max(us(r["end_ns"]) for r in p),
                   consumer_start=min(us(r["start_ns"]) for r in q),
                   consumer_wait_end=max((us(r["wait_end_ns"]) for r in q if r["wait_end_ns"]), default=""),
                   consumer_end=max(us(r["end_ns"]) for r in q),
                   consumer_work_median=work[len(work) // 2], consumer_work_max=work[-1],
                   # A chain of one wave: the SMs that ran two of its consumer blocks (several waves: how many)
                   sms_with_two_consumers=(lambda two: " ".join(map(str, two)) if len(two) <= 8 else f"{len(two)} SMs")(
                       [s for s, k in sorted(per_sm.items()) if k > 1]),
                   consumers_beside_producers=sum(k for s, k in per_sm.items() if s in producer_sms))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = csv.writer(sys.stdout)
    header = False
    with tarfile.open(sys.argv[1]) as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            name = m.name.rsplit("/", 1)[-1]
            if not (name.startswith("tl_") and name.endswith(".csv")):
                continue
            rows = list(csv.DictReader(io.TextIOWrapper(tar.extractfile(m))))
            for ch in chains(rows):
                if not header:
                    out.writerow(["run"] + list(ch))
                    header = True
                out.writerow([name[3:-4]] + [round(v, 1) if isinstance(v, float) else v for v in ch.values()])


if __name__ == "__main__":
    main()
