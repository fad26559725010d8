"""Nsight Compute's raw CSV pages, as the probes write them (`ncu --csv --page raw --print-units
base ...`): a header row starting with "ID", a row of units, then one row of values per profiled
kernel. Used by the probe scripts' summaries (calibration/lrc_*_probe.sh, l2_prefetch_table.py)."""
import csv


def number(text):
    """The value of a raw page's cell ("1,234.5" -> 1234.5), or None when it is not a number."""
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def first_kernel(path):
    """The numeric cells of the page's first profiled kernel, by metric name; None when the page
    holds no kernel (a launch that failed, or a filter that matched nothing)."""
    with open(path) as f:
        rows = list(csv.reader(f))
    heads = [i for i, r in enumerate(rows) if r and r[0] == "ID"]
    if not heads or len(rows) < heads[0] + 3:
        return None
    cells = zip(rows[heads[0]], rows[heads[0] + 2])
    return {k: v for k, v in ((k, number(x)) for k, x in cells) if v is not None}
