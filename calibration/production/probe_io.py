"""What the device probes share: writing their rows as CSV, and one launch under Nsight Compute's
profiled range."""
import csv


def write_rows(path, rows):
    """Writes dict rows as CSV, with the union of their keys, sorted, as the header (rows of a
    failed configuration carry fewer keys than measured ones)."""
    keys = sorted({k for r in rows for k in r})
    with open(path, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=keys)
        wr.writeheader()
        wr.writerows(rows)


def profiled(torch, *steps):
    """Runs `steps` in order inside the profiled range (cudaProfilerStart/Stop, for Nsight
    Compute's --profile-from-start off), synchronised on both sides."""
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for step in steps:
        step()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
