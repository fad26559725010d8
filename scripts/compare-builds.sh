#!/usr/bin/env bash
# Runs every experiment with two tilesim binaries and compares their outputs byte for byte: the
# proof that a refactoring changed nothing, beyond the golden set that `make test` checks.
#   scripts/compare-builds.sh OLD_TILESIM NEW_TILESIM [EXPERIMENT.yaml ...]
# (default: every experiments/*.yaml). For each experiment both binaries write --json and --csv
# and their printed text (stdout, stderr, exit code); any difference is listed and the script
# exits 1. Run from anywhere; experiments are run from the repository root, as the golden set
# is. An old binary is built from an earlier commit in a worktree, e.g.
#   git worktree add /tmp/old <commit> && cmake -S /tmp/old -B /tmp/old/build -DCMAKE_BUILD_TYPE=Release
#   cmake --build /tmp/old/build -j2 --target tilesim
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: compare-builds.sh OLD_TILESIM NEW_TILESIM [EXPERIMENT.yaml ...]" >&2; exit 2; }
abs() { (cd "$(dirname "$1")" && echo "$(pwd)/$(basename "$1")"); }
old=$(abs "$1")
new=$(abs "$2")
shift 2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
[ $# -gt 0 ] && experiments=("$@") || experiments=(experiments/*.yaml)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
differ=0
for e in "${experiments[@]}"; do
  name=$(basename "$e" .yaml)
  for side in old new; do
    bin=$old
    [ "$side" = new ] && bin=$new
    start=$(date +%s)
    # Progress lines (stderr, every 10 s of a long run) carry rates and times: left out.
    "$bin" run "$e" --json "$out/$name.$side.json" --csv "$out/$name.$side.csv" -j 2 2>&1 |
      grep -v '^progress: ' >"$out/$name.$side.txt"
    echo "exit code ${PIPESTATUS[0]}" >>"$out/$name.$side.txt"
    took=$(($(date +%s) - start))
  done
  same=yes
  for ext in json csv txt; do
    a="$out/$name.old.$ext" b="$out/$name.new.$ext"
    [ -e "$a" ] || [ -e "$b" ] || continue
    cmp -s "$a" "$b" || { same=no; echo "DIFFERS: $e ($ext)"; diff <(head -c 20000 "$a") <(head -c 20000 "$b") | head -5; }
  done
  [ "$same" = yes ] && echo "same: $e (${took} s a run)" || differ=1
done
[ "$differ" = 0 ] && echo "compare-builds: all ${#experiments[@]} experiments give identical outputs" ||
  echo "compare-builds: outputs differ (above)"
exit "$differ"
