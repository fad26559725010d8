#!/usr/bin/env bash
# ctest layering_selftest: scripts/check_layers.py is not a no-op. It passes on a copy of the
# tree's sources, and fails, naming file and line, once a violation is planted in the copy:
# an include up a layer, one sideways into a peer, a cycle between two folders of one layer,
# an include of a file that does not exist, a source outside every layer. The planted
# violations are the checker's five rules.
#   test_check_layers.sh PYTHON ROOT
set -uo pipefail
python=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# The sources and the table, nothing else (the check reads only these).
mkdir -p "$tmp/pristine/scripts"
cp "$root/scripts/layers.txt" "$tmp/pristine/scripts/"
(cd "$root" && find common models workloads traces sim tests bench calibration \
   \( -name build -o -name 'build-*' \) -prune -o -type f \
   \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) -print0 |
   xargs -0 cp --parents -t "$tmp/pristine")

check() {  # check TREE: runs the checker, leaves its output in $tmp/out and returns its status
  "$python" "$root/scripts/check_layers.py" --root "$1" >"$tmp/out" 2>&1
}

fresh() {  # fresh NAME: a new copy of the pristine tree in $tmp/NAME
  rm -rf "$tmp/$1"
  cp -r "$tmp/pristine" "$tmp/$1"
}

plant() {  # plant NAME FILE TARGET: FILE of the copy NAME gains #include "TARGET"; prints its line
  printf '#include "%s"\n' "$3" >>"$tmp/$1/$2"
  wc -l <"$tmp/$1/$2"
}

# expect_violation NAME PATTERN: the tree in $tmp/NAME fails with a line matching PATTERN.
expect_violation() {
  local status=0
  check "$tmp/$1" || status=$?
  if [ "$status" != 1 ]; then
    echo "FAIL $1: exit status $status, expected 1"; cat "$tmp/out"; failures=$((failures + 1))
  elif ! grep -Eq "$2" "$tmp/out"; then
    echo "FAIL $1: no line matches /$2/"; cat "$tmp/out"; failures=$((failures + 1))
  else
    echo "ok   $1: $(grep -E "$2" "$tmp/out" | head -1)"
  fi
}

if check "$tmp/pristine"; then
  echo "ok   clean: $(cat "$tmp/out")"
else
  echo "FAIL clean: the copy of the tree does not pass"; cat "$tmp/out"; failures=$((failures + 1))
fi

# Up: the lowest layer reaches for the command line.
fresh up
line=$(plant up common/types.hpp sim/app/commands.hpp)
expect_violation up "^common/types\.hpp:$line: error: #include \"sim/app/commands\.hpp\" points up a layer"

# Sideways: one tool uses another (tune and validate share a rank).
fresh sideways
line=$(plant sideways sim/tools/tune/tune.hpp sim/tools/validate/validation.hpp)
expect_violation sideways "^sim/tools/tune/tune\.hpp:$line: error: .* points sideways"

# A cycle inside one layer, where the rank rule allows both includes: orders <-> sync.
fresh cycle
first=$(plant cycle workloads/orders/order.hpp workloads/sync/sync.hpp)
second=$(plant cycle workloads/sync/cusync.hpp workloads/orders/order.hpp)
expect_violation cycle "error: include cycle between folders workloads/orders -> workloads/sync -> workloads/orders: .*workloads/orders/order\.hpp:$first\).*workloads/sync/cusync\.hpp:$second\)"

# An include of a file that is not there (a stale path after a move).
fresh missing
line=$(plant missing sim/app/commands.hpp sim/sweep/runner.hpp)
expect_violation missing "^sim/app/commands\.hpp:$line: error: #include \"sim/sweep/runner\.hpp\" names no file of the tree"

# A source in a folder the table does not list.
fresh unlisted
mkdir -p "$tmp/unlisted/plugins"
plant unlisted plugins/extra.cpp common/types.hpp >/dev/null
expect_violation unlisted "^plugins/extra\.cpp: error: belongs to no folder of scripts/layers\.txt"

if [ "$failures" != 0 ]; then
  echo "layering_selftest: $failures case(s) failed"
  exit 1
fi
echo "layering_selftest: the check passes the tree and fails each planted violation"
