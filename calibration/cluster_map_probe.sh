#!/usr/bin/env bash
# Which SMs a thread-block cluster's blocks share (one GPC), and how many clusters of each size
# are resident at once, at 1 and 2 blocks per SM (calibration/kernels/cluster_map.cu): the
# ground truth of the engine's cluster placement (sim/core/sm_pool.cpp, sm.gpc_sms).
#   OUT=$OUT bash calibration/cluster_map_probe.sh        (device machine, repository root)
source calibration/probe_build.sh
probe_build cluster_map cluster_map.cu
"$BUILD/cluster_map" --spin-us 40 --waves 3 > "$OUT/cluster_map.csv" 2> "$OUT/cluster_map.err"
echo "rc=$?"
grep '^occupancy' "$OUT/cluster_map.csv"
cat "$OUT/cluster_map.err"
