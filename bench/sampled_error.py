#!/usr/bin/env python3
"""Sampled mode against exact mode: error, ranking and speed.

Runs every given experiment (default: experiments/*.yaml, calibration/experiments/*.yaml and
bench/sampled_shapes.yaml) with `tilesim run --mode exact` and `--mode sampled`, and prints
per experiment and over all points: the share of blocks sampled mode skipped, the error of its
duration and DRAM bytes (read + write) against exact mode (median and worst), whether each
sweep's same-shape comparison (points that differ only in the launch order, or whatever the
sweep compares) ranks its points alike, and the CPU time of both modes. For scale, it also runs
exact mode with another seed of the per-step time noise (sim.seed 2): how far the model's own
answer moves under the smallest perturbation it has.

    python3 bench/sampled_error.py BUILD/tilesim [EXPERIMENT.yaml ...] [--set KEY=VALUE ...]

Experiments `run` refuses (tune or search inputs) are listed as skipped. Uses only the standard
library; `make bench` runs it.
"""
import argparse
import glob
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(sim, exp, mode, sets, out):
    """Runs one experiment; returns (points, CPU seconds) or (None, error text)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cmd = [sim, "run", exp, "-q", "--mode", mode, "--json", out] + [a for s in sets for a in ("--set", s)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
    with open(out) as f:
        j = json.load(f)
    points = j["points"] if isinstance(j, dict) and "points" in j else [j]
    return points, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def dram(t):
    return t["dram_read_bytes"] + t["dram_write_bytes"]


def rel(a, b):
    return (a - b) / b if b else 0.0


def shape_key(point):
    """Points of one sweep with the same kernels' grids and names: one shape, several policies."""
    return tuple((k["name"], tuple(k["grid"])) for k in point["kernels"])


def ranking_agrees(exact, sampled):
    """Each group of same-shape points ranked alike by duration (ties within 0.05% ignored)."""
    groups = {}
    for i, p in enumerate(exact):
        groups.setdefault(shape_key(p), []).append(i)
    same = total = 0
    for idx in groups.values():
        for a in range(len(idx)):
            for b in range(a + 1, len(idx)):
                ea, eb = exact[idx[a]]["total"]["duration_ns"], exact[idx[b]]["total"]["duration_ns"]
                sa, sb = sampled[idx[a]]["total"]["duration_ns"], sampled[idx[b]]["total"]["duration_ns"]
                if abs(rel(ea, eb)) < 5e-4:
                    continue
                total += 1
                same += (ea < eb) == (sa < sb)
    return same, total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tilesim")
    ap.add_argument("experiments", nargs="*")
    ap.add_argument("--set", action="append", default=[], help="passed to both runs")
    ap.add_argument("--points", action="store_true", help="also print every point's errors")
    args = ap.parse_args()
    exps = args.experiments or (sorted(glob.glob(os.path.join(ROOT, "experiments", "*.yaml"))) +
                                sorted(glob.glob(os.path.join(ROOT, "calibration", "experiments", "*.yaml"))) +
                                [os.path.join(ROOT, "bench", "sampled_shapes.yaml"), os.path.join(ROOT, "bench", "sampled_shapes_chains.yaml")])
    rows, errs_t, errs_d, noise_t, noise_d, skipped_exps = [], [], [], [], [], []
    same_all = total_all = 0
    cpu = {"exact": 0.0, "sampled": 0.0}
    with tempfile.TemporaryDirectory() as tmp:
        for exp in exps:
            res = {}
            for mode in ("exact", "sampled"):
                res[mode] = run(args.tilesim, exp, mode, args.set, os.path.join(tmp, mode + ".json"))
            # The model's own sensitivity: exact mode again with another seed of its per-step
            # time noise (sm.step_noise_ns), a perturbation as small as the model allows.
            noise = run(args.tilesim, exp, "exact", args.set + ["sim.seed=2"], os.path.join(tmp, "noise.json"))
            name = os.path.relpath(exp, ROOT)
            if res["exact"][0] is None or res["sampled"][0] is None or noise[0] is None:
                skipped_exps.append((name, res["exact"][1] if res["exact"][0] is None else res["sampled"][1]))
                continue
            (ex, te), (sa, ts) = res["exact"], res["sampled"]
            cpu["exact"] += te
            cpu["sampled"] += ts
            et = [abs(rel(s["total"]["duration_ns"], e["total"]["duration_ns"])) for e, s in zip(ex, sa)]
            ed = [abs(rel(dram(s["total"]), dram(e["total"]))) for e, s in zip(ex, sa)]
            nt = [abs(rel(s["total"]["duration_ns"], e["total"]["duration_ns"])) for e, s in zip(ex, noise[0])]
            nd = [abs(rel(dram(s["total"]), dram(e["total"]))) for e, s in zip(ex, noise[0])]
            errs_t += et
            errs_d += ed
            noise_t += nt
            noise_d += nd
            skip = sum(s["total"]["sampling"]["skipped_blocks"] for s in sa)
            launched = sum(s["total"]["sampling"]["launched_blocks"] for s in sa)
            same, total = ranking_agrees(ex, sa)
            if args.points:
                for e, s, n in zip(ex, sa, noise[0]):
                    print("    %-90s skipped %5d/%5d  time %+.2f%%  DRAM %+.2f%%  (seed 2: time %+.2f%%  DRAM %+.2f%%)" % (
                        s.get("point", "")[:90], s["total"]["sampling"]["skipped_blocks"],
                        s["total"]["sampling"]["launched_blocks"],
                        100 * rel(s["total"]["duration_ns"], e["total"]["duration_ns"]),
                        100 * rel(dram(s["total"]), dram(e["total"])),
                        100 * rel(n["total"]["duration_ns"], e["total"]["duration_ns"]),
                        100 * rel(dram(n["total"]), dram(e["total"]))))
            same_all += same
            total_all += total
            rows.append(name)
            print("%-50s %3d pts  skipped %5.1f%%  time err med %.2f%% max %.2f%%  DRAM err med %.2f%% max %.2f%%  "
                  "(seed 2 max: time %.2f%% DRAM %.2f%%)  ranked alike %d/%d  cpu %.1f s -> %.1f s" % (
                      name, len(ex), 100 * (skip / launched if launched else 0), 100 * statistics.median(et), 100 * max(et),
                      100 * statistics.median(ed), 100 * max(ed), 100 * max(nt), 100 * max(nd), same, total, te, ts),
                  flush=True)
    for name, why in skipped_exps:
        print("%-58s not run: %s" % (name, why))
    if not rows:
        return 1
    print("\nall %d points of %d experiments: duration error median %.2f%%, worst %.2f%%; DRAM error median %.2f%%, "
          "worst %.2f%%; same-shape pairs ranked alike %d/%d; CPU %.1f s exact, %.1f s sampled (%.2fx)" %
          (len(errs_t), len(rows), 100 * statistics.median(errs_t), 100 * max(errs_t), 100 * statistics.median(errs_d),
           100 * max(errs_d), same_all, total_all, cpu["exact"], cpu["sampled"], cpu["exact"] / max(cpu["sampled"], 1e-9)))
    print("exact mode against itself with another noise seed (the model's own sensitivity): duration median %.2f%%, "
          "worst %.2f%%; DRAM median %.2f%%, worst %.2f%%" % (100 * statistics.median(noise_t), 100 * max(noise_t),
                                                             100 * statistics.median(noise_d), 100 * max(noise_d)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
