#!/usr/bin/env python3
"""Per-click time of the explorer's manual mode on large grids, in headless Chromium.

    python3 bench/explore_click.py [BUILD_DIR] [--clicks N] [--chromium BIN]

Writes two pages with BUILD_DIR/tilesim explore: the 8192^3 GEMM of
experiments/explore_gemm_3x3.yaml (64 x 64 = 4096 tiles of 128 k-steps) and the FFN of
experiments/explore_ffn_chain_3x3.yaml at M = d = f = 8192 (two 64 x 64 grids under
dataflow). In each it clicks N tiles (row by row; in the chain each producer row, then its
consumer row) through the page's own click handler and reports, as mean, 95th percentile and
maximum: the time from the click event to the end of the layout it causes (the handler: one
WebAssembly block replay, the repaint of the tiles it changed, the readouts; then a forced
layout), and that plus the residency heatmaps' redraw at the next frame (the page records its
time), i.e. all the work of one click. Drives Chromium with tests/sim/tools/explore/cdp_driver.py.
docs/explore.md quotes its figures.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Clicks `tiles` (selectors) one by one, each after a frame has been drawn; times each.
TIMER = """(async () => {
  const sel = %s, times = [];
  for (const s of sel) {
    await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
    const el = document.querySelector(s);
    if (!el) throw new Error('no ' + s);
    const t0 = performance.now();
    el.dispatchEvent(new MouseEvent('click', {bubbles: true}));
    void document.body.offsetHeight;
    const click = performance.now() - t0;
    // The heatmaps are redrawn at the next frame (explore_manual.js, scheduleResidency).
    await new Promise(r => requestAnimationFrame(() => r()));
    times.push([click, Number(document.querySelector('section.manual').getAttribute('data-residency-ms'))]);
  }
  const steps = document.getElementById('v0-manual-cost').getAttribute('data-steps');
  return {times, steps};
})()"""


def page(build, experiment, sets, out):
    cmd = [os.path.join(build, "tilesim"), "explore", os.path.join(ROOT, "experiments", experiment), "-q", "-o", out]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True)
    return os.path.getsize(out)


def measure(chromium, html, selectors, tmp):
    script = os.path.join(tmp, "actions.json")
    result = os.path.join(tmp, "result.json")
    with open(script, "w") as f:
        json.dump([{"op": "wait_ready", "timeout": 120}, {"op": "eval", "expr": TIMER % json.dumps(selectors)}], f)
    subprocess.run([sys.executable, os.path.join(ROOT, "tests/sim/tools/explore/cdp_driver.py"), "--chromium", chromium,
                    "--page", html, "--script", script, "--out", result, "--timeout", "600"], check=True)
    with open(result) as f:
        r = json.load(f)
    if r.get("fatal") or r.get("exceptions"):
        raise SystemExit("explore_click: %s" % (r.get("fatal") or r.get("exceptions")))
    return r["results"][1]


def stats(t):
    t = sorted(t)
    return "mean %6.2f  p95 %6.2f  max %6.2f ms" % (sum(t) / len(t), t[min(len(t) - 1, int(0.95 * len(t)))], t[-1])


def report(name, size, r):
    click = [c for c, _ in r["times"]]
    total = [c + h for c, h in r["times"]]
    print("%s: page %.1f MB, %d clicks (tiles placed: %s)" % (name, size / 1e6, len(click), r["steps"]))
    print("  click to cost shown        " + stats(click))
    print("  click + heatmap redraw     " + stats(total))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--clicks", type=int, default=200)
    ap.add_argument("--chromium", default=os.environ.get("TILESIM_CHROMIUM", "chromium"))
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    with tempfile.TemporaryDirectory(prefix="tilesim-click-") as tmp:
        html = os.path.join(tmp, "gemm.html")
        size = page(build, "explore_gemm_3x3.yaml", ["workload.m=8192", "workload.n=8192", "workload.k=8192"], html)
        tiles = ['#v0-manual-grid [data-tile="%d,%d"]' % (i // 64, i % 64) for i in range(a.clicks)]
        report("GEMM 8192^3, 64x64 tiles, K/BK = 128", size, measure(a.chromium, html, tiles, tmp))

        html = os.path.join(tmp, "chain.html")
        size = page(build, "explore_ffn_chain_3x3.yaml", ["workload.m=8192", "workload.d=8192", "workload.f=8192"], html)
        tiles = []
        for row in range(64):
            tiles += ['#v0-manual-grid-p [data-tile="%d,%d"]' % (row, c) for c in range(64)]
            tiles += ['#v0-manual-grid-c [data-tile="%d,%d"]' % (row, c) for c in range(64)]
        report("FFN chain 8192, 64x64 + 64x64 tiles, K/BK = 128", size, measure(a.chromium, html, tiles[:a.clicks], tmp))


if __name__ == "__main__":
    main()
