#!/bin/sh
# ctest mpi_sweep: `mpirun -n 2 tilesim run SWEEP -o DIR` writes the summary and prints the
# tables of a plain run, byte for byte.
#   check_mpi_sweep.sh TILESIM SWEEP.yaml
set -u
tilesim=$1
sweep=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$tilesim" run "$sweep" -o "$tmp/plain" -j 2 >"$tmp/plain.txt" 2>"$tmp/plain.err" || {
  echo "FAIL: plain run: $(cat "$tmp/plain.err")" >&2
  exit 1
}
# One thread per rank: the ranks share out the points between them.
"$here/mpirun.sh" 2 "$tilesim" run "$sweep" -o "$tmp/mpi" -j 1 >"$tmp/mpi.txt" 2>"$tmp/mpi.err" || {
  echo "FAIL: mpirun -n 2: exit code $?: $(cat "$tmp/mpi.err")" >&2
  exit 1
}
failures=0
for f in summary.json summary.csv kernels.csv; do
  cmp "$tmp/plain/$f" "$tmp/mpi/$f" || failures=$((failures + 1))
done
cmp "$tmp/plain.txt" "$tmp/mpi.txt" || failures=$((failures + 1))
# results.jsonl holds the points in the order they finished: the same set of lines.
sort "$tmp/plain/results.jsonl" >"$tmp/plain.sorted"
sort "$tmp/mpi/results.jsonl" >"$tmp/mpi.sorted"
cmp "$tmp/plain.sorted" "$tmp/mpi.sorted" || failures=$((failures + 1))
[ "$(wc -l <"$tmp/plain.sorted")" -gt 0 ] || failures=$((failures + 1))
[ "$failures" = 0 ] && echo "mpi_sweep: the 2-rank sweep matches the plain one ($(wc -l <"$tmp/plain.sorted") points)"
exit $((failures > 0))
