#!/usr/bin/env bash
# Call H9: split kernel with a 128-thread block per point (BLOCK = the commit) against a warp per point (WARP: H8's
# NOTAB build); split GPU tests and memcheck on BLOCK; alternated GPU rows; ncu of BLOCK's MIXED and DOUBLE kernels.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_split_block; mkdir -p $D
mkdir -p /tmp/WARP && xz -dc .devkit/vars/WARP.so.xz > /tmp/WARP/libqmmm_accel.so.0
t0=$(date +%s)
pack() { cp .devkit/callH9.sh $D/call_h9.sh; tar czf $OUT/h9.tgz $D; }
timeout 100 $B/test_field_split_gpu > $D/split_gpu_tests.txt 2>&1; echo "split gpu tests rc=$?" >> $D/split_gpu_tests.txt
grep -E "PASSED|FAILED|tests rc|Failure|Which is|Expected" $D/split_gpu_tests.txt | head -20; echo "t=$(( $(date +%s)-t0 ))"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck synccheck; do
  timeout 100 "$san" --tool $tool --error-exitcode 3 $B/test_field_split_gpu --gtest_filter='SplitGpuNuclei.*:SplitGpuEdges.*:Tolerances/SplitGpu.*/1' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|RACECHECK SUMMARY|rror:" | head -6 > $D/sanitizer_$tool.txt; echo "$tool rc=${PIPESTATUS[0]}" >> $D/sanitizer_$tool.txt; cat $D/sanitizer_$tool.txt
done
pack
run() {
  local lp=$LD_LIBRARY_PATH; [ $1 != BLOCK ] && lp=/tmp/$1:$LD_LIBRARY_PATH
  LD_LIBRARY_PATH=$lp timeout 70 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --no-cpu --json $D/split_$1_$2.json > $D/split_$1_$2.log 2>&1
  echo "$1 run $2 rc=$?: $(grep -E '^[0-9]+ +(1024|8192) +split (double|mixed) +gpu .*single' $D/split_$1_$2.log | awk '{printf "%s/%s/%s %s %sx; ", $1,$2,$4,$6,$9}')"
}
for r in 1 2; do for V in BLOCK WARP; do run $V $r; done; pack; done
echo "t=$(( $(date +%s)-t0 ))"
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || echo /usr/local/cuda/bin/ncu)
for K in "1, .bool.1" "24, .bool.0"; do
  tag=$(echo "$K" | tr -dc '0-9'); skip=1; [ $tag = 240 ] && skip=4
  timeout 60 $ncu --set detailed --kernel-name-base demangled -k "regex:split_kernel<.int.$K>" --launch-skip $skip --launch-count 1 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 --tolerance 1e-7 --points 8192 --min-time 0.01 --no-cpu > $D/ncu_split_$tag.txt 2>&1; echo "ncu $tag rc=$?"
  grep -E "^    Duration|Achieved Occupancy|Issue Slots Busy|Grid Size" $D/ncu_split_$tag.txt | head -5
done
pack
echo "t=$(( $(date +%s)-t0 ))"
