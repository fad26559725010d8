#!/usr/bin/env bash
# Makes docs/images/explore.png, the README's picture of the explorer: grouped against Hilbert
# order on a 4096^3 GEMM on h100 (experiments/explore_orders_4096.yaml), both views stepped to
# dispatch 384 of 1024, captured by headless Chromium through the tests' DevTools driver.
#   scripts/explore-screenshot.sh [BUILD_DIR]      (default: build)
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/tilesim" explore "$root/experiments/explore_orders_4096.yaml" --point 0 --compare-point 1 \
  -o "$work/orders.html" -q
# Link the views, then the slider takes keys: Home, then 383 steps right.
keys=$(python3 -c 'import json; print(json.dumps([{"op": "key", "selector": "#v0-step-slider", "key": "ArrowRight"}] * 383))')
cat > "$work/actions.json" <<JSON
[{"op": "wait_ready", "timeout": 60},
 {"op": "click", "selector": "#link-steps"},
 {"op": "key", "selector": "#v0-step-slider", "key": "Home"},
 ${keys:1:${#keys}-2},
 {"op": "screenshot", "path": "$work/explore.png", "viewport": true}]
JSON
chromium_bin=$(command -v chromium || command -v chromium-browser)
python3 "$root/tests/sim/tools/explore/cdp_driver.py" --chromium "$chromium_bin" --page "$work/orders.html" \
  --script "$work/actions.json" --out "$work/result.json" --width 1600 --height 1160
cp "$work/explore.png" "$root/docs/images/explore.png"
echo "wrote docs/images/explore.png"
