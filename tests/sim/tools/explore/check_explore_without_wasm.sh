#!/usr/bin/env bash
# ctest explore_without_wasm (only in a build without the explorer's WebAssembly module,
# cmake/explore_wasm.cmake): `tilesim explore` writes no page and says, in one line and with
# exit code 2, what the build lacked.
#   check_explore_without_wasm.sh TILESIM EXPERIMENT.yaml
set -uo pipefail
tilesim=$1
experiment=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$tilesim" explore "$experiment" -o "$tmp/page.html" >"$tmp/out" 2>"$tmp/err"
code=$?
fail() { echo "explore_without_wasm: $*"; echo "stdout:"; cat "$tmp/out"; echo "stderr:"; cat "$tmp/err"; exit 1; }
[ "$code" = 2 ] || fail "exit code $code, expected 2"
[ -e "$tmp/page.html" ] && fail "a page was written"
[ -s "$tmp/out" ] && fail "stdout is not empty"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "stderr is not one line"
grep -q "^tilesim: error: explore: this tilesim was built without the explorer's WebAssembly module: " "$tmp/err" ||
  fail "stderr does not say that the WebAssembly module is missing"
echo "explore_without_wasm: $(cat "$tmp/err")"
