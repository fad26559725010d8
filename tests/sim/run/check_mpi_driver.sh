#!/bin/sh
# ctest mpi_distribute: ProcessGroup under mpirun gives the result set of one process, and a
# failing point fails every rank with the same error and exit code instead of hanging.
#   check_mpi_driver.sh MPI_DRIVER
set -u
driver=$1
here=$(cd "$(dirname "$0")" && pwd)
mpirun_sh="$here/mpirun.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# The reference: one process, no MPI at all.
"$driver" --points 200 -j 2 >"$tmp/ref.txt" 2>"$tmp/err.txt" || fail "plain run failed: $(cat "$tmp/err.txt")"
cat "$tmp/ref.txt"
for case in "2 -j 1" "2 -j 3" "3 -j 1" "2 -j 0"; do
  set -- $case
  ranks=$1
  shift
  # Each point also sleeps a millisecond: no rank can finish them all before another starts,
  # even on a loaded machine.
  if "$mpirun_sh" "$ranks" "$driver" --points 200 --sleep-us 1000 "$@" >"$tmp/out.txt" 2>"$tmp/err.txt"; then
    cmp -s "$tmp/ref.txt" "$tmp/out.txt" || fail "$ranks ranks $*: output differs: $(cat "$tmp/out.txt")"
    # Every rank took points, and together all of them once.
    counts=$(sed -n 's/^mpi_driver: rank [0-9]* simulated \([0-9]*\) points$/\1/p' "$tmp/err.txt")
    [ "$(echo "$counts" | wc -w)" = "$ranks" ] || fail "$ranks ranks $*: $(cat "$tmp/err.txt")"
    echo "$counts" | grep -qx 0 && fail "$ranks ranks $*: a rank simulated nothing: $(cat "$tmp/err.txt")"
    sum=0
    for c in $counts; do sum=$((sum + c)); done
    [ "$sum" = 200 ] || fail "$ranks ranks $*: points simulated: $counts"
  else
    fail "$ranks ranks $*: exit code $?: $(cat "$tmp/err.txt")"
  fi
done

# Fewer points than threads, and none at all.
for points in 1 0; do
  "$driver" --points $points >"$tmp/ref.txt" 2>/dev/null
  "$mpirun_sh" 2 "$driver" --points $points -j 2 >"$tmp/out.txt" 2>"$tmp/err.txt" || fail "$points points: $(cat "$tmp/err.txt")"
  cmp -s "$tmp/ref.txt" "$tmp/out.txt" || fail "$points points: output differs"
done

# A failing point: every rank ends with its error (mpirun may drop a rank's last output when
# the job ends, so the ranks also write it to files), and the exit code is that of its kind.
# Ranks and ranks' threads: the point fails while others are in flight everywhere.
for case in input:2:2 deadlock:3:2 other:1:3; do
  kind=$(echo "$case" | cut -d: -f1)
  code=$(echo "$case" | cut -d: -f2)
  ranks=$(echo "$case" | cut -d: -f3)
  rm -rf "$tmp/errors" && mkdir "$tmp/errors"
  "$mpirun_sh" "$ranks" "$driver" --points 200 -j 2 --fail-at 150 --fail-kind $kind --errors-to "$tmp/errors" \
    >"$tmp/out.txt" 2>"$tmp/err.txt"
  got=$?
  [ "$got" = "$code" ] || fail "failing $kind point: exit code $got, wanted $code: $(cat "$tmp/err.txt")"
  grep -q "point 150 failed" "$tmp/err.txt" || fail "failing $kind point: no message: $(cat "$tmp/err.txt")"
  reports=$(cat "$tmp/errors"/rank*.txt 2>/dev/null | grep -c "point 150 failed")
  [ "$reports" = "$ranks" ] || fail "failing $kind point: $reports of $ranks ranks failed with it"
  [ -s "$tmp/out.txt" ] && fail "failing $kind point: printed a result"
done

# A rank that fails before the run makes all of them fail.
rm -rf "$tmp/errors" && mkdir "$tmp/errors"
"$mpirun_sh" 2 "$driver" --disagree --errors-to "$tmp/errors" >"$tmp/out.txt" 2>"$tmp/err.txt"
got=$?
[ "$got" = 2 ] || fail "disagree: exit code $got, wanted 2"
[ "$(cat "$tmp/errors"/rank*.txt | grep -c "a rank failed before the run")" = 2 ] || fail "disagree: $(cat "$tmp/err.txt")"

# A rank that fails alone, the others waiting in agree(): it must not wait for them in
# MPI_Finalize; mpirun ends the job with its exit code.
timeout 60 "$mpirun_sh" 2 "$driver" --lone-failure 1 >"$tmp/out.txt" 2>"$tmp/err.txt"
got=$?
[ "$got" = 4 ] || fail "lone failure: exit code $got, wanted 4 (124: it hung): $(cat "$tmp/err.txt")"

[ "$failures" = 0 ] && echo "mpi_distribute: all cases pass"
exit $((failures > 0))
