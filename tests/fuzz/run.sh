#!/usr/bin/env bash
# `make fuzz`: runs every libFuzzer target of BUILD (a -DTILESIM_FUZZ=ON build) for SECONDS
# each, starting from seeds taken from the repository (its experiments, arch presets, order
# files, measurement CSVs, a report's summary, traces and results written by BUILD's tilesim).
# The corpus grows in BUILD/corpus/TARGET across runs; a finding (crash, sanitizer report,
# exception other than InputError, hang over 10 s, over 2 GiB) is saved in BUILD/findings/ and
# the script exits 1 after printing a table.
#   bash tests/fuzz/run.sh BUILD [SECONDS]
set -uo pipefail
build=${1:?usage: run.sh BUILD [SECONDS]}
seconds=${2:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$build" && pwd)
targets=(experiment arch trace order_file measured_csv results_jsonl summary_json)
mkdir -p "$build/findings" "$build/corpus"

seed() {  # seed TARGET FILES...: copies the files into the target's corpus when it is new
  local t=$1; shift
  local dir="$build/corpus/$t"
  [ -d "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ] && return 0
  mkdir -p "$dir"
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$dir/$(echo "$f" | tr '/' '_')"; done
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root"
seed experiment experiments/*.yaml tests/data/golden/*.yaml tests/data/report/sweep.yaml \
  $(ls calibration/experiments/*.yaml | head -20)
seed arch models/archs/*.yaml
seed measured_csv calibration/measurements/h100/l2_stride/ncu_cases.csv calibration/measurements/h100/cutlass3/cases.csv \
  $(ls calibration/measurements/h100/ncu/*.csv 2>/dev/null | head -4)
seed summary_json tests/data/report/gemm-orders/summary.json
# Traces and results lines are written by this build's tilesim from small experiments.
"$build/tilesim" trace tests/data/golden/stream.yaml -o "$tmp/stream.trace" >/dev/null 2>&1
"$build/tilesim" trace tests/data/golden/stream.yaml -o "$tmp/stream.txt" --text >/dev/null 2>&1
"$build/tilesim" trace experiments/gemm_orders.yaml --set order.kind=row --set workload.m=512 --set workload.n=512 \
  --set workload.k=256 -o "$tmp/gemm.txt" --text >/dev/null 2>&1
"$build/tilesim" trace experiments/gemm_orders.yaml --set 'sweep={}' --set workload.m=512 --set workload.n=512 \
  --set workload.k=256 --l2-stream "$tmp/gemm.l2s" >/dev/null 2>&1
seed trace "$tmp/stream.trace" "$tmp/stream.txt" "$tmp/gemm.txt" "$tmp/gemm.l2s"
"$build/tilesim" order-search --grid 2x3 --chain 2 --cache 3 -o "$tmp/pair.chain" >/dev/null 2>&1
seed order_file $(ls calibration/orders/*.order | head -12) "$tmp/pair.chain"
python3 - "$root/tests/data/report/gemm-orders/summary.json" "$tmp/results.jsonl" <<'PY'
import json, sys
points = json.load(open(sys.argv[1]))["points"]
with open(sys.argv[2], "w") as out:
    for p in points:
        p.pop("comparison", None)
        out.write(json.dumps(p) + "\n")
PY
seed results_jsonl "$tmp/results.jsonl"

status=0
printf "%-16s %10s %8s  %s\n" target runs corpus result
for t in "${targets[@]}"; do
  log="$build/findings/$t.log"
  "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$build/findings/$t-" "$build/corpus/$t" >"$log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  n=$(ls "$build/corpus/$t" | wc -l)
  if [ $rc -eq 0 ]; then result=ok; else result="FINDING (rc $rc): $(ls -t "$build/findings/$t-"* 2>/dev/null | head -1)"; status=1; fi
  printf "%-16s %10s %8s  %s\n" "$t" "${runs:-?}" "$n" "$result"
done
exit $status
