"""Each SM's share of the memory system against its speed in Triton matmuls
(calibration/sm_share_probe.sh, measurements/h100/sm_share): the favoured SMs are those whose
matmul blocks run fastest in the timeline taken on the same GPU; the table gives their mean
per-SM bandwidth over the others' median in every stream variant.

  python3 calibration/sm_share_table.py [calibration/measurements/h100/sm_share]
"""
import collections
import csv
import gzip
import os
import statistics as st
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def favoured(timeline):
    per_sm = collections.defaultdict(list)
    with gzip.open(timeline, "rt") as f:
        for r in csv.DictReader(f):
            per_sm[int(r["sm"])].append(float(r["end_ns"]) - float(r["start_ns"]))
    mean = {s: st.mean(v) for s, v in per_sm.items()}
    med = st.median(mean.values())
    fav = sorted(mean, key=mean.get)[:24]
    return set(fav), st.mean(mean[s] for s in fav) / med


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "measurements", "h100", "sm_share")
    for csv_name, tl_name in (("sm_share_solo.csv", "timeline_solo_run.csv.gz"), ("sm_share.csv", "timeline.csv.gz")):
        fav, rel = favoured(os.path.join(d, tl_name))
        print(f"{csv_name}: favoured SMs {sorted(fav)}, their matmul blocks {rel:.3f} of the median duration")
        print("| variant | mode | solo | per-SM GB/s (median) | favoured / median | others' spread (cv) |")
        print("| --- | --- | --- | --- | --- | --- |")
        groups = collections.defaultdict(lambda: collections.defaultdict(list))
        with open(os.path.join(d, csv_name)) as f:
            for r in csv.DictReader(f):
                key = (r["variant"], r["mode"], "alone" if r["solo"] != "-1" else "all SMs")
                groups[key][int(r["sm"])].append(float(r["gbps"]))
        for (variant, mode, solo), per_sm in sorted(groups.items()):
            # all SMs: a run's blocks on one SM summed, averaged over runs; alone: one run per SM
            reps = 3 if solo == "all SMs" else 1  # sm_share_probe.sh: three runs of all SMs, one alone
            bw = {s: sum(v) / reps for s, v in per_sm.items()}
            med = st.median(bw.values())
            others = [bw[s] for s in bw if s not in fav]
            print(f"| {variant} | {mode} | {solo} | {med:.1f} | {st.mean(bw[s] for s in fav if s in bw) / med:.3f} | "
                  f"{st.pstdev(others) / med:.3f} |")
        print()


if __name__ == "__main__":
    main()
