"""Where do_bench's excess over the kernel's own time comes from (flush_probe.py found 3.4-14 us
more under do_bench than Nsight Compute's kernel duration). do_bench writes 256 MB before each
repetition (the L2 ends full of dirty lines), then records an event, launches, records another.
This times the same cases with the same event pattern under other conditions before the start
event, so the parts separate:
  - write:       do_bench's flush (256 MB zero_), as in production's time.csv
  - write+sN:    the same flush, then the GPU spins N us (torch.cuda._sleep) before the start
                 event: the dirty lines have N us to drain on their own before the kernel
  - read:        a 256 MB read instead (the L2 ends full of clean lines of the buffer)
and an empty kernel under each, and (mode ncu_empty) the empty kernel's own duration under
Nsight Compute.

  python3 flush_split_probe.py time --out DIR
  ncu --replay-mode application --cache-control none ... python3 flush_split_probe.py once --case C --pre write|read
  ncu --metrics gpu__time_duration.sum python3 flush_split_probe.py ncu_empty
"""
import argparse
import csv
import os
import statistics
import sys

import torch
import triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import flush_probe  # noqa: E402
from probe_io import profiled  # noqa: E402

# flush_probe's cases and two more: a mid-size M and a compute-bound 4096^3 tile
CASES = dict(flush_probe.CASES, **{  # name: (m, n, k, bm, bn, bk, warps, stages, group_m)
    "mm_l8b_up_m256_t64x64_grouped8": (256, 14336, 4096, 64, 64, 64, 4, 4, 8),
    "mm_sq4096_m4096_t128x128_grouped8": (4096, 4096, 4096, 128, 128, 64, 8, 3, 8),
})
SLEEPS_US = [2, 5, 10, 20, 50, 200]
CLOCK_MHZ = 1980  # _sleep counts SM cycles; the nominal sleep is approximate under the power cap


@triton.jit
def empty_kernel(x_ptr):
    pass


def launcher(name):
    return flush_probe.launcher(name, CASES)


def bench(fn, pre, reps=100, warm=10):
    """do_bench's pattern: pre(); start.record(); fn(); end.record(); the median in us."""
    for _ in range(warm):
        pre()
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        pre()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends)) * 1e3


def conditions():
    buf = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    words = buf.view(torch.int32)
    out = {"write": lambda: buf.zero_(), "read": lambda: torch.sum(words)}

    def write_sleep(us):
        return lambda: (buf.zero_(), torch.cuda._sleep(int(us * CLOCK_MHZ)))
    for us in SLEEPS_US:
        out[f"write+s{us}"] = write_sleep(us)
    # the spin alone, so its own length can be subtracted where wanted
    for us in SLEEPS_US:
        out[f"read+s{us}"] = (lambda u: lambda: (torch.sum(words), torch.cuda._sleep(int(u * CLOCK_MHZ))))(us)
    return out


def time_all(out):
    conds = conditions()
    x = torch.empty(1, device="cuda")
    fns = {"empty_kernel": lambda: empty_kernel[(1,)](x)}
    for name in CASES:
        fns[name] = launcher(name)
    rows = []
    for name, fn in fns.items():
        fn()
        torch.cuda.synchronize()
        row = {"case": name}
        for cname, pre in conds.items():
            row[cname] = round(bench(fn, pre), 3)
        rows.append(row)
        print(name, " ".join(f"{k}={v}" for k, v in row.items() if k != "case"), flush=True)
    with open(os.path.join(out, "flush_split.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)


def ncu_empty():
    x = torch.empty(1, device="cuda")
    for _ in range(5):
        empty_kernel[(1,)](x)
    torch.cuda.synchronize()


def once(name, pre):
    """One launch after `pre` (write: do_bench's flush; read: a 256 MB read), for Nsight Compute
    in application replay with --cache-control none, so the kernel sees the L2 as `pre` left it
    (kernel replay saves and restores memory between passes, which disturbs the L2)."""
    launch = launcher(name)
    launch()  # compile and warm outside the profiled range
    profiled(torch, conditions()[pre], launch)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["time", "ncu_empty", "once"])
    ap.add_argument("--out")
    ap.add_argument("--case")
    ap.add_argument("--pre", default="write")
    args = ap.parse_args()
    if args.mode == "time":
        os.makedirs(args.out, exist_ok=True)
        time_all(args.out)
    elif args.mode == "once":
        torch.manual_seed(0)  # application replay reruns the process: the same inputs each pass
        once(args.case, args.pre)
    else:
        ncu_empty()


if __name__ == "__main__":
    main()
