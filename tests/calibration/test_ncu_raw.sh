#!/usr/bin/env bash
# ctest ncu_raw_pages: calibration/ncu_raw.py reads Nsight Compute's raw pages as the probes'
# summaries need. The committed L2 prefetch pages (measurements/h100/l2_prefetch/ncu_pages.tar.gz)
# read through calibration/l2_prefetch_table.py give the committed ncu.csv byte for byte, and a
# page without a kernel (no "ID" header) reads as none.
#   test_ncu_raw.sh PYTHON ROOT
set -uo pipefail
python=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -xzf "$root/calibration/measurements/h100/l2_prefetch/ncu_pages.tar.gz" -C "$tmp" || exit 1
(cd "$root" && "$python" calibration/l2_prefetch_table.py "$tmp") > "$tmp/ncu.csv" || exit 1
if ! cmp -s "$tmp/ncu.csv" "$root/calibration/measurements/h100/l2_prefetch/ncu.csv"; then
  echo "test_ncu_raw: l2_prefetch_table.py no longer reproduces measurements/h100/l2_prefetch/ncu.csv" >&2
  diff "$tmp/ncu.csv" "$root/calibration/measurements/h100/l2_prefetch/ncu.csv" | head -5 >&2
  exit 1
fi
printf '==PROF== Connected to process 1\nno kernel was profiled\n' > "$tmp/empty.csv"
printf '"ID","Kernel Name","dram__bytes_read.sum"\n"","","byte"\n"0","k","1,024.5"\n' > "$tmp/one.csv"
"$python" - "$root/calibration" "$tmp" <<'PY' || exit 1
import sys
sys.path.insert(0, sys.argv[1])
from ncu_raw import first_kernel
d = sys.argv[2]
assert first_kernel(d + "/empty.csv") is None, "a page without a kernel must read as none"
m = first_kernel(d + "/one.csv")
assert m == {"ID": 0.0, "dram__bytes_read.sum": 1024.5}, m
PY
echo "test_ncu_raw: ok"
