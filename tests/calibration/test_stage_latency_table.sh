#!/usr/bin/env bash
# ctest stage_latency_table: calibration/stage_latency_table.py reads the committed H200
# stage-latency measurements (calibration/measurements/h200/stage_latency) into the figures
# docs/validation.md quotes ("A loaded stage waits for the other SMs' queues"); the polled-flag
# data keep their fingerprint (the same 1.6% of single lines slow at every load).
#   test_stage_latency_table.sh PYTHON ROOT
set -uo pipefail
python=$1
root=$2
cd "$root" || exit 1
"$python" - <<'PY' || exit 1
import re, subprocess, sys
folder = "calibration/measurements/h200/stage_latency"
def run(*args):
    return subprocess.run([sys.executable, "calibration/stage_latency_table.py", *args], check=True,
                          capture_output=True, text=True).stdout
def row(out, pattern, what):
    m = re.search(pattern, out, re.M)
    assert m, f"stage_latency_table: no row for {what}"
    return [float(x) for x in m.groups()]
out = run(folder)
# random lines, 16 KiB and one line, from 0 and 131 streaming SMs: p50 (the table's p50 column)
assert row(out, r"^random\s+16384\s+128\s+0\s+\S+\s+\S+\s+(\S+)", "16 KiB idle") == [231]
assert row(out, r"^random\s+16384\s+128\s+131\s+\S+\s+\S+\s+(\S+)", "16 KiB, 131 SMs") == [920]
assert row(out, r"^random\s+65536\s+512\s+131\s+\S+\s+\S+\s+(\S+)", "64 KiB, 131 SMs") == [1204]
assert row(out, r"^random\s+128\s+1\s+131\s+\S+\s+\S+\s+(\S+)\s+\S+\s+(\S+)", "one line, 131 SMs") == [306, 950]
# depth against rate: 131 shallow streams at 8.0 TB/s, the 16 KiB stage's p50
assert row(out, r"^\s+256\s+131\s+2096 KiB\s+(\S+)\s+\S+\s+\S+\s+(\S+)", "256-thread streams") == [8.02, 260]
# under cuBLAS 8192^3: the 16 KiB stage's p50
assert row(out, r"^sq8192\s+nvjet\S+\s+\S+\s+\S+\s+\S+\s+16384\s+(\S+)", "16 KiB beside 8192^3") == [683]
# stages from DRAM: 16 KiB idle and under 64 DRAM streams; a 16 KiB L2 stage beside 131
assert row(out, r"^\s+0\s+0\.00\s+\S+\s+\S+\s+(\S+)", "DRAM 16 KiB idle") == [663]
assert row(out, r"^\s+64\s+4\.34\s+\S+\s+\S+\s+(\S+)", "DRAM 16 KiB, 64 streams") == [1443]
assert row(out, r"^\s+131\s+4\.45\s+(?:\S+\s+){5}(\S+)", "L2 16 KiB beside 131 DRAM streams") == [1485]
old = run(folder + "/polled_flag")
for blocks in (32, 66, 100, 131):
    share = row(old, rf"^random\s+128\s+1\s+{blocks}\s+(?:\S+\s+){{5}}(\S+)", f"polled flag, {blocks} SMs")
    assert share == [0.016], (blocks, share)
PY
echo "test_stage_latency_table: ok"
