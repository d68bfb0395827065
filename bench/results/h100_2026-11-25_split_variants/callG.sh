#!/usr/bin/env bash
# Call G: split GPU: V3 (this build: kernel flags outside points, no host pre-pass; candidates compacted through a
# shared-memory ring; seed + third-order 1/sqrt) against V1 (host change only) and V2 (V3 with CUDA's rsqrt), N = 8192;
# split GPU tests, racecheck/memcheck of V3; ncu of the one-point latency kernel with source.
set -uo pipefail
export QMMM_REQUIRE_GPU=1
B=/work/main/build-tests; D=$OUT/g; mkdir -p $D
t0=$(date +%s)
for v in V1 V2; do mkdir -p /tmp/$v; xz -dc .devkit/vars/lib$v.so.xz > /tmp/$v/libqmmm_accel.so.0; done
timeout 150 $B/test_field_split_gpu > $D/t_split_gpu.txt 2>&1; echo "test_field_split_gpu rc=$?"; grep -E "PASSED|FAILED|OK \]" $D/t_split_gpu.txt | head -20
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 120 "$san" --tool racecheck --error-exitcode 3 $B/test_field_split_gpu --gtest_filter='SplitGpuNuclei.*:SplitGpuEdges.*' 2>&1 | grep -E "PASSED|FAILED|RACECHECK SUMMARY|rror" | head -6
timeout 120 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_split_gpu --gtest_filter='SplitGpuNuclei.*:SplitGpuEdges.*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -6
echo "t=$(( $(date +%s)-t0 ))"
for r in 1 2; do for v in V3 V1 V2; do
  if [ $v = V3 ]; then L=${LD_LIBRARY_PATH:-}; else L=/tmp/$v:${LD_LIBRARY_PATH:-}; fi
  LD_LIBRARY_PATH=$L timeout 100 $B/field_split_bench --no-cpu --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 8192 --min-time 0.3 --json $D/split_$v$r.json > $D/split_$v$r.log 2>&1
  echo "== $v $r rc=$?"; grep -E "split double +gpu|direct single +gpu" $D/split_$v$r.log | grep -v "direct double"
done; done
echo "t=$(( $(date +%s)-t0 ))"
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || echo /usr/local/cuda/bin/ncu)
timeout 150 $ncu --clock-control none --cache-control none --set full --import-source yes -k regex:latency_kernel --launch-skip 20 --launch-count 1 -o $D/ncu_lat $B/field_bench --only-cuda --cells 268782 --points 1 --min-time 0.05 --handles 0 > $D/ncu_lat.log 2>&1
echo "ncu rc=$?"; $ncu --import $D/ncu_lat.ncu-rep --page details > $D/ncu_lat_details.txt 2>&1; grep -E "Duration|Elapsed Cycles|Achieved Occupancy|Registers" $D/ncu_lat_details.txt | head
$ncu --import $D/ncu_lat.ncu-rep --page source --csv --print-source sass > $D/ncu_lat_sass.csv 2>&1; wc -l $D/ncu_lat_sass.csv
echo "t=$(( $(date +%s)-t0 ))"
