#!/usr/bin/env bash
# `make bench` calls this as `bash bench/run.sh BUILD_DIR`. Runs the L2 lookup benchmark, then,
# when both exist, times BUILD_DIR/tilesim on experiments/bench_gemm_8192.yaml (wall time and
# max RSS through /usr/bin/time -v; without it, bash's `time` and no RSS), then the 200-point
# sweep bench/sweep_200.yaml at -j1 and -j2 (wall times, speed-up, identical results), the
# pycachesim comparison, and the explorer's per-click time (bench/explore_click.py, with a
# chromium), exact and sampled mode (time, memory, error table: bench/sampled_error.py) and
# tune --model. Installs nothing.
set -euo pipefail

BUILD=${1:-build}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
cd "$ROOT"

LOOKUPS="$BUILD/bench/l2_lookups"
if [[ -x "$LOOKUPS" ]]; then
  echo "== L2 sector lookups (items_per_second = sectors/s) =="
  "$LOOKUPS" --benchmark_min_time=1
else
  echo "bench: $LOOKUPS not built (Google Benchmark not found at configure time?); skipping" >&2
fi

EXP=experiments/bench_gemm_8192.yaml
SIM="$BUILD/tilesim"
if [[ -x "$SIM" && -f "$EXP" ]]; then
  echo
  echo "== $SIM run $EXP =="
  if [[ -x /usr/bin/time ]]; then
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    status=0
    /usr/bin/time -v -o "$log" "$SIM" run "$EXP" || status=$?
    wall=$(sed -n 's/^[[:space:]]*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log")
    rss=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$log")
    echo "wall time: ${wall:-?} (h:mm:ss or m:ss)"
    if [[ -n "$rss" ]]; then
      echo "max RSS:   ${rss} KiB ($((rss / 1024)) MiB)"
    else
      echo "max RSS:   unavailable"
    fi
    if [[ $status -ne 0 ]]; then
      echo "bench: tilesim exited with status $status" >&2
      exit "$status"
    fi
  else
    TIMEFORMAT='wall time: %R s'
    time "$SIM" run "$EXP"
    echo "max RSS:   unavailable (/usr/bin/time not installed)"
  fi
else
  [[ -x "$SIM" ]] || echo "bench: $SIM not built; skipping the end-to-end run" >&2
  [[ -f "$EXP" ]] || echo "bench: $EXP not found; skipping the end-to-end run" >&2
fi

# The sweep benchmark: 200 points at -j1 and at -j2; the results must be identical.
SWEEP=bench/sweep_200.yaml
if [[ -x "$SIM" && -f "$SWEEP" ]]; then
  echo
  echo "== $SIM run $SWEEP at -j1 and -j2 =="
  tmp=$(mktemp -d)
  declare -A secs
  for j in 1 2; do
    start=$(date +%s.%N)
    "$SIM" run "$SWEEP" -q -j "$j" --json "$tmp/j$j.json"
    end=$(date +%s.%N)
    secs[$j]=$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')
    printf -- "-j%s: %.2f s\n" "$j" "${secs[$j]}"
  done
  if cmp -s "$tmp/j1.json" "$tmp/j2.json"; then
    echo "results: identical at -j1 and -j2"
  else
    echo "bench: results differ between -j1 and -j2" >&2
    rm -rf "$tmp"
    exit 1
  fi
  printf "speed-up at -j2: %.2fx on %s cores\n" "$(awk -v a="${secs[1]}" -v b="${secs[2]}" 'BEGIN { print a / b }')" "$(nproc)"
  rm -rf "$tmp"
fi

# The L2 request stream replayed through pycachesim where it is installed (docs/trace-format.md).
if [[ -x "$SIM" ]]; then
  echo
  echo "== L2 request stream through pycachesim =="
  python3 bench/l2_stream_pycachesim.py "$BUILD" || echo "bench: the pycachesim comparison failed" >&2
fi

# The explorer's manual mode on 4096-tile grids: per-click time in headless Chromium
# (docs/explore.md, "Size and speed"); skipped without a chromium.
if [[ -x "$SIM" ]]; then
  echo
  echo "== explorer manual mode: per-click time on 64x64 grids =="
  if command -v "${TILESIM_CHROMIUM:-chromium}" > /dev/null 2>&1; then
    python3 bench/explore_click.py "$BUILD" || echo "bench: the explorer click benchmark failed" >&2
  else
    echo "bench: no chromium (set TILESIM_CHROMIUM); skipping the explorer click benchmark" >&2
  fi
fi

# Exact and sampled mode (sim.mode, docs/architecture.md "Sampled mode"): CPU time and peak
# memory of large GEMMs and an FFN prefill, then the sampled mode's error table against exact
# mode over experiments/, calibration/experiments/ and the benchmark shapes of bench/.
if [[ -x "$SIM" && -x /usr/bin/time ]]; then
  echo
  echo "== exact and sampled mode: CPU time and peak memory =="
  measure() {  # LABEL MODE ARGS...: one line of user+system seconds and max RSS
    local label=$1 mode=$2 log
    shift 2
    log=$(mktemp)
    if /usr/bin/time -f "%U %S %M" -o "$log" "$SIM" run "$@" --mode "$mode" -q > /dev/null 2> "$log.err"; then
      awk -v l="$label" -v m="$mode" '{ printf "%-34s %-8s CPU %7.2f s   peak %6.0f MiB\n", l, m, $1 + $2, $3 / 1024 }' "$log"
    else
      printf "%-34s %-8s %s\n" "$label" "$mode" "$(tail -1 "$log.err")"
    fi
    rm -f "$log" "$log.err"
  }
  for mode in exact sampled; do
    measure "gemm 8192^3 grouped(8)" "$mode" experiments/bench_gemm_8192.yaml
    measure "gemm 16384^3 grouped(8)" "$mode" experiments/bench_gemm_8192.yaml --set workload.m=16384 \
      --set workload.n=16384 --set workload.k=16384
    measure "gemm 16384^3 row" "$mode" experiments/bench_gemm_8192.yaml --set workload.m=16384 \
      --set workload.n=16384 --set workload.k=16384 --set 'order={kind: row}'
    measure "ffn llama3-8b prefill M=4096" "$mode" experiments/bench_gemm_8192.yaml \
      --set 'workload={kind: ffn, model: llama3-8b, m: 4096}'
  done
  # A lazy fused attention kernel (docs/architecture.md, "Lazy kernels"): 8.4 M k-steps.
  measure "attention causal prefill 64K tokens" exact experiments/bench_gemm_8192.yaml \
    --set 'workload={kind: attention, heads: 32, kv_heads: 8, seq_q: 65536, seq_kv: 65536, head_dim: 128, causal: true, block_q: 128, block_kv: 128}' \
    --set 'order={kind: row}'

  # Row order: 512 periods of one tile row, steady after a few. In grouped(8) order the
  # simulated DRAM traffic per period keeps drifting, so sampling skips nothing there and the
  # run takes tens of minutes (docs/architecture.md, "Sampled mode").
  measure "gemm 65536^3 row" sampled experiments/bench_gemm_8192.yaml --set workload.m=65536 \
    --set workload.n=65536 --set workload.k=65536 --set 'order={kind: row}'
  echo
  echo "== sampled mode against exact mode =="
  python3 bench/sampled_error.py "$SIM" || echo "bench: the sampled-mode comparison failed" >&2
fi

# tune --model: the whole search of one model's layer (issue 15's target: under 60 s).
if [[ -x "$SIM" ]]; then
  echo
  echo "== tune --model llama3-70b --batch 8 --seq 2048 =="
  start=$(date +%s.%N)
  "$SIM" tune --model llama3-70b --batch 8 --seq 2048 -o "$(mktemp -d)" > /dev/null 2>&1 || echo "bench: tune failed" >&2
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "wall time: %.1f s\n", b - a }'
fi
