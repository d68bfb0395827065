#!/usr/bin/env bash
# Call H: split GPU kernel variants, N = 8192, alternated: V5 (this build: V4 + a lane's column from a warp OR of
# the column starts), V4 (V1 + seed/third-order 1/sqrt), V1 (host change only: outside points flagged by the kernel).
# Split GPU tests and racecheck on V5; ncu source-level of V5's split kernel.
set -uo pipefail
export QMMM_REQUIRE_GPU=1
B=/work/main/build-tests; D=$OUT/h; mkdir -p $D
t0=$(date +%s)
for v in V1 V4; do mkdir -p /tmp/$v; xz -dc .devkit/vars/lib$v.so.xz > /tmp/$v/libqmmm_accel.so.0; done
timeout 100 $B/test_field_split_gpu > $D/t_split_gpu.txt 2>&1; echo "test_field_split_gpu rc=$?"; grep -E "PASSED|FAILED" $D/t_split_gpu.txt | head -5
for r in 1 2; do for v in V5 V4 V1; do
  if [ $v = V5 ]; then L=${LD_LIBRARY_PATH:-}; else L=/tmp/$v:${LD_LIBRARY_PATH:-}; fi
  LD_LIBRARY_PATH=$L timeout 100 $B/field_split_bench --no-cpu --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 8192 --min-time 0.3 --json $D/split_$v$r.json > $D/split_$v$r.log 2>&1
  echo "== $v $r rc=$?"; grep -E "split double +gpu" $D/split_$v$r.log | grep "direct single"
done; done
echo "t=$(( $(date +%s)-t0 ))"
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || echo /usr/local/cuda/bin/ncu)
timeout 150 $ncu --set full --import-source yes -k regex:split_kernel --launch-skip 40 --launch-count 1 -o $D/ncu_split $B/field_split_bench --no-cpu --data data/glycine_trimer --thresholds 0.00041 --tolerance 1e-7 --points 8192 --min-time 0.05 > $D/ncu_split.log 2>&1
echo "ncu rc=$?"; $ncu --import $D/ncu_split.ncu-rep --page details > $D/ncu_split_details.txt 2>&1; grep -E "Grid Size|Duration|Elapsed Cycles|Achieved Occupancy|Registers Per|Eligible Warps|Issued Warp|L1/TEX Hit|FP64" $D/ncu_split_details.txt | head -20
$ncu --import $D/ncu_split.ncu-rep --page source --csv --print-source sass > $D/ncu_split_sass.csv 2>&1; wc -l $D/ncu_split_sass.csv
echo "t=$(( $(date +%s)-t0 ))"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout $(( 560 - ($(date +%s)-t0) )) "$san" --tool racecheck --error-exitcode 3 $B/test_field_split_gpu --gtest_filter='SplitGpuNuclei.*' > $D/racecheck.txt 2>&1; echo "racecheck rc=$?"; grep -E "PASSED|FAILED|RACECHECK SUMMARY|rror" $D/racecheck.txt | head -6
echo "t=$(( $(date +%s)-t0 ))"
