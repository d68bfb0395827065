#!/usr/bin/env bash
# Call F: where the split GPU call's time goes (profiling variant of 293abbf's library: host phases and a CUDA-event
# kernel time per N = 8192 call), then ncu of the one-point latency kernel.
set -uo pipefail
B=/work/main/build-tests; D=$OUT/f; mkdir -p $D
t0=$(date +%s)
QMMM_SPLIT_PROFILE=1 LD_LIBRARY_PATH=$PWD/.devkit/varProf:${LD_LIBRARY_PATH:-} timeout 200 $B/field_split_bench --no-cpu --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1024 8192 --min-time 0.3 --json $D/split.json > $D/split.log 2> $D/split.err
echo "split rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "setup|split double +gpu|direct single +gpu" $D/split.log; grep SPLITPROF $D/split.err
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || echo /usr/local/cuda/bin/ncu)
timeout 120 $ncu --clock-control none -k regex:latency_kernel --launch-skip 20 --launch-count 3 --section SpeedOfLight --section LaunchStats $B/field_bench --only-cuda --cells 268782 --points 1 --min-time 0.05 --handles 0 > $D/ncu_latency.txt 2>&1
echo "ncu rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "Duration|latency_kernel|Elapsed Cycles|SM Frequency" $D/ncu_latency.txt | head -12
