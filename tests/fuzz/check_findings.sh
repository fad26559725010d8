#!/usr/bin/env bash
# ctest fuzz_findings: every input the fuzzers found (tests/data/fuzz/, named TARGET-what) fed
# to the command that reads that kind of file. Each must end as tilesim ends on bad input:
# exit 0 or 2, no "internal error", no signal. The parsers' unit tests hold the precise
# regression checks; this replays the very bytes through the CLI.
#   check_findings.sh TILESIM ROOT
set -uo pipefail
tilesim=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for f in "$root"/tests/data/fuzz/*; do
  name=$(basename "$f")
  case "$name" in
    experiment-*) cmd=("$tilesim" run "$f" -n) ;;
    measured_csv-*) cmd=("$tilesim" validate -q -m "$f" -e "$root/calibration/experiments/l2stride/l2stride_f8_s4096.yaml") ;;
    results_jsonl-*)
      rm -rf "$tmp/sweep" && mkdir -p "$tmp/sweep" && cp "$f" "$tmp/sweep/results.jsonl"
      cmd=("$tilesim" run "$root/tests/data/golden/stream.yaml" -q -o "$tmp/sweep") ;;
    summary_json-*) cmd=("$tilesim" report "$f" -o "$tmp/page.html") ;;
    *) echo "fuzz_findings: $name: no command for this kind of input"; fail=1; continue ;;
  esac
  "${cmd[@]}" >"$tmp/out" 2>&1
  rc=$?
  if { [ $rc -ne 0 ] && [ $rc -ne 2 ]; } || grep -q "internal error" "$tmp/out"; then
    echo "fuzz_findings: $name: exit $rc: $(head -c 300 "$tmp/out")"
    fail=1
  else
    echo "fuzz_findings: $name: exit $rc ($(head -c 120 "$tmp/out" | tr '\n' ' '))"
  fi
done
exit $fail
