#!/usr/bin/env python3
"""The GPC coalescer probe (measurements/h200/lrc_gpc) against a coalescer with room for C lines.

The rule, as the trial build had it (`l2.request_coalescing_lines`, docs/validation.md, "A
coalescer with room for so many lines"): a request merges into the open entry for its line while
that entry carries fewer than four requests and survives the draw exp(-n / C), n being the lines
looked up through the coalescer since the entry opened; otherwise it is looked up (n grows by
one) and opens the entry anew. The probe's 16 SMs read the same stream of lines, SM i i x delay
behind SM 0, each at the measured per-SM rate (8 MiB in about 265 us: 4.05 ns a line). Prints,
per C, the merged share simulated (measured) at each delay of the probe's 16-SM rows.

    python3 calibration/production/lrc_room_fit.py [C ...]      # default: 745 1500 2000 2500 3000 5000
"""
import csv
import math
import random
import sys

NS_PER_LINE = 4.05
LINES = 4000  # of the probe's 65536: enough for the shares to settle


def merged_share(delay, room, sms=16, lines=LINES):
    rng = random.Random(1)
    requests = sorted((i * delay + line * NS_PER_LINE, i, line) for i in range(sms) for line in range(lines))
    entries, looked_up, merged = {}, 0, 0
    for _, _, line in requests:
        e = entries.get(line)
        if e and e[1] < 4 and rng.random() < math.exp(-(looked_up - e[0]) / room):
            e[1] += 1
            merged += 1
        else:
            looked_up += 1
            entries[line] = [looked_up, 1]
    return merged / len(requests)


def measured():
    shares = {}
    for run in ("run1", "run2"):
        with open("calibration/measurements/h200/lrc_gpc/%s/summary.csv" % run) as f:
            for r in csv.DictReader(f):
                if r["sms"] == "16" and r["delay_ns"] != "1":
                    shares[int(r["delay_ns"])] = float(r["merged_share"])
    return dict(sorted(shares.items()))


def main(argv):
    rooms = [float(x) for x in argv[1:]] or [745, 1500, 2000, 2500, 3000, 5000]
    meas = measured()
    print("room (lines)  " + "  ".join("%6d ns" % d for d in meas))
    print("measured      " + "  ".join("%9.3f" % s for s in meas.values()))
    for room in rooms:
        print("%-12g  " % room + "  ".join("%9.3f" % merged_share(d, room) for d in meas))


if __name__ == "__main__":
    main(sys.argv)
