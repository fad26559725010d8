#!/usr/bin/env python3
"""How closely the programs of one GPC run together, measured against simulated.

For the first wave (the first SMs-many programs to start) of a kernel: the spread of their end
times over the whole GPU and within each GPC (max - min, us), and the median gap between
successive ends within a GPC (ns); also the programs' mean duration and its standard deviation.
GPCs as the coalescer groups them: `sm.gpcs` of the arch file, `sm.gpcs_joined` merged.
Measured: a per-program timeline with columns case, sm, start_ns, end_ns (the flash-attention
probe's measurements/h100/attn_timeline/attn_timeline.csv.gz, or production/timeline.csv.gz);
simulated: `tilesim run EXP --timeline FILE.csv`.

    python3 calibration/production/gpc_end_spread.py MEASURED.csv.gz CASE [SIMULATED.csv ...] [--arch models/archs/h100.yaml]
"""
import csv
import gzip
import statistics
import sys

import yaml


def gpc_of(arch_path):
    sm = yaml.safe_load(open(arch_path))["sm"]
    group = {s: g for g, sms in enumerate(sm["gpcs"]) for s in sms}
    for joined in sm.get("gpcs_joined", []):
        for g in joined:
            for s in sm["gpcs"][g]:
                group[s] = joined[0]
    return group, sm["count"]


def programs(rows):
    return sorted((float(r["start_ns"]), float(r["end_ns"]), int(r["sm"])) for r in rows)


def report(name, progs, group, sms):
    t0 = progs[0][0]
    durations = [e - s for s, e, _ in progs]
    wave = progs[:sms]
    ends = [e - t0 for _, e, _ in wave]
    by_gpc = {}
    for _, e, sm in wave:
        by_gpc.setdefault(group.get(sm, -1), []).append(e)
    spreads = [(max(v) - min(v)) / 1e3 for v in by_gpc.values() if len(v) > 2]
    gaps = []
    for v in by_gpc.values():
        v.sort()
        gaps += [b - a for a, b in zip(v, v[1:])]
    print("%-22s %5d programs, %.1f us each (sd %.2f); first wave's ends %.2f us apart, within a GPC %s us, "
          "successive %.0f ns" % (name[-22:], len(progs), statistics.mean(durations) / 1e3,
                                  statistics.pstdev(durations) / 1e3, (max(ends) - min(ends)) / 1e3,
                                  " ".join("%.2f" % x for x in spreads), statistics.median(gaps)))


def main(argv):
    arch = "models/archs/h100.yaml"
    if "--arch" in argv:
        i = argv.index("--arch")
        arch = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if len(argv) < 3:
        sys.exit(__doc__)
    group, sms = gpc_of(arch)
    opener = gzip.open if argv[1].endswith(".gz") else open
    with opener(argv[1], "rt") as f:
        measured = [r for r in csv.DictReader(f) if r["case"] == argv[2]]
    if not measured:
        sys.exit("gpc_end_spread.py: no case '%s' in %s" % (argv[2], argv[1]))
    report("measured", programs(measured), group, sms)
    for path in argv[3:]:
        with open(path) as f:
            report(path, programs(csv.DictReader(f)), group, sms)


if __name__ == "__main__":
    main(sys.argv)
