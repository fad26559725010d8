#!/usr/bin/env bash
# The golden outputs (tests/data/golden/cases.txt): runs each case with `tilesim run ARGS
# --json NAME.json --csv NAME.csv -j 2` from the repository root and keeps, per case, the JSON,
# the CSV and NAME.txt (exit code, stdout, stderr).
#   golden_outputs.sh TILESIM --check         compare with tests/data/golden/expected (ctest golden_outputs)
#   golden_outputs.sh TILESIM --write DIR     write them into DIR (scripts/regen-golden.sh)
set -uo pipefail
tilesim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mode=${2:-}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
expected=$root/tests/data/golden/expected
case "$mode" in
  --check) out=$(mktemp -d); trap 'rm -rf "$out"' EXIT ;;
  --write) out=${3:?--write needs a folder}; mkdir -p "$out" ;;
  *) echo "usage: golden_outputs.sh TILESIM --check | --write DIR" >&2; exit 2 ;;
esac
cd "$root"
start=$(date +%s%N)
while read -r name args; do
  case "$name" in '' | '#'*) continue ;; esac
  # shellcheck disable=SC2086  # the arguments are words of cases.txt
  "$tilesim" run $args --json "$out/$name.json" --csv "$out/$name.csv" -j 2 >"$out/$name.out" 2>"$out/$name.err"
  code=$?
  { echo "exit code $code"; echo "--- stdout"; cat "$out/$name.out"; echo "--- stderr"; cat "$out/$name.err"; } >"$out/$name.txt"
  rm -f "$out/$name.out" "$out/$name.err"
done <"$root/tests/data/golden/cases.txt"
ms=$((($(date +%s%N) - start) / 1000000))
[ "$mode" = --write ] && { echo "golden_outputs: wrote $(ls "$out" | wc -l) files into $out in ${ms} ms"; exit 0; }

failures=0
for f in "$expected"/* "$out"/*; do
  name=$(basename "$f")
  [ -e "$expected/$name" ] || { echo "FAIL $name: produced, but not in tests/data/golden/expected"; failures=$((failures + 1)); continue; }
  [ -e "$out/$name" ] || { echo "FAIL $name: expected, but not produced"; failures=$((failures + 1)); continue; }
  [ "$f" = "$out/$name" ] && continue  # each pair once
  if ! cmp -s "$expected/$name" "$out/$name"; then
    echo "FAIL $name differs from tests/data/golden/expected/$name:"
    diff -u "$expected/$name" "$out/$name" | head -30
    failures=$((failures + 1))
  fi
done
if [ "$failures" != 0 ]; then
  echo "golden_outputs: $failures file(s) differ (${ms} ms). If the change is deliberate, see scripts/regen-golden.sh."
  exit 1
fi
echo "golden_outputs: $(ls "$expected" | wc -l) files identical to tests/data/golden/expected (${ms} ms)"
