#!/usr/bin/env bash
# Rewrites the golden outputs (tests/data/golden/expected/) that ctest golden_outputs compares
# byte for byte: the JSON, CSV and printed text of the cases in tests/data/golden/cases.txt.
#   scripts/regen-golden.sh [BUILD_DIR]      (default: build; run `make build` first)
#
# When regenerating is legitimate: only for a deliberate change of what tilesim computes or
# prints, such as a timing-model change, a recalibrated preset, a new JSON field or a new
# column, made on purpose and named in the commit. Commit the regenerated files together with
# that change, so that the reviewer reads the output diff (`git diff tests/data/golden`) beside
# the code and can see that every number that moved was meant to move.
#
# When it is not: to make a failing golden_outputs pass after a refactoring, a cleanup, a
# speed-up or a build change. Those must not change any output; a difference there is a bug
# to find (bisect it), not a new expectation.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
tilesim="$build/tilesim"
[ -x "$tilesim" ] || { echo "regen-golden: $tilesim not found; build first (make build)" >&2; exit 2; }

expected="$root/tests/data/golden/expected"
rm -rf "$expected"
"$root/tests/experiments/golden_outputs.sh" "$tilesim" --write "$expected"
cd "$root"
git status --short -- tests/data/golden
echo "regen-golden: review \`git diff tests/data/golden\` and commit it with the change that caused it"
