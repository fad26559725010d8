"""What the device probes share: writing their rows as CSV."""
import csv


def write_rows(path, rows):
    """Writes dict rows as CSV, with the union of their keys, sorted, as the header (rows of a
    failed configuration carry fewer keys than measured ones)."""
    keys = sorted({k for r in rows for k in r})
    with open(path, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=keys)
        wr.writeheader()
        wr.writerows(rows)
