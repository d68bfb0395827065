#!/usr/bin/env bash
# Call H6: split evaluation with the points in device memory (NEW = the commit: points and values by DMA, 4-cell
# groups) against OLD (the kernel reads points from mapped host memory), OUTMAP (values written to mapped memory) and
# NU1 (1-cell groups); alternated, GPU rows; split GPU tests and memcheck on NEW; ncu of NEW's kernels.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_split_dma; mkdir -p $D
for V in OLD OUTMAP NU1; do mkdir -p /tmp/$V && xz -dc .devkit/vars/$V.so.xz > /tmp/$V/libqmmm_accel.so.0; done
t0=$(date +%s)
pack() { cp .devkit/callH6.sh $D/call_h6.sh; tar czf $OUT/h6.tgz $D; }
timeout 100 $B/test_field_split_gpu > $D/split_gpu_tests.txt 2>&1; echo "split gpu tests rc=$?" >> $D/split_gpu_tests.txt
grep -E "PASSED|FAILED|tests rc|MIXED" $D/split_gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 120 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_split_gpu --gtest_filter='SplitGpuNuclei.*:SplitGpuEdges.*:Tolerances/*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8 > $D/sanitizers.txt; echo "memcheck rc=${PIPESTATUS[0]}" >> $D/sanitizers.txt; cat $D/sanitizers.txt
pack
run() {
  local lp=$LD_LIBRARY_PATH; [ $1 != NEW ] && lp=/tmp/$1:$LD_LIBRARY_PATH
  LD_LIBRARY_PATH=$lp timeout 70 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --no-cpu --json $D/split_$1_$2.json > $D/split_$1_$2.log 2>&1
  echo "$1 run $2 rc=$?: $(grep -E '^[0-9]+ +8192 +split (double|mixed) +gpu .*single' $D/split_$1_$2.log | awk '{printf "%s/%s %s %sx; ", $1,$4,$6,$9}')"
}
for r in 1 2; do for V in NEW OLD OUTMAP NU1; do run $V $r; done; pack; done
echo "t=$(( $(date +%s)-t0 ))"
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || echo /usr/local/cuda/bin/ncu)
for K in "1, .bool.1" "24, .bool.0"; do
  tag=$(echo "$K" | tr -dc '0-9'); 
  timeout 60 $ncu --set detailed --kernel-name-base demangled -k "regex:split_kernel<.int.$K>" --launch-skip 1 --launch-count 1 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 --tolerance 1e-7 --points 8192 --min-time 0.01 --no-cpu > $D/ncu_split_$tag.txt 2>&1; echo "ncu $tag rc=$?"
  grep -E "split_kernel|^    Duration|Achieved Occupancy|Issue Slots Busy|L1/TEX Hit|Grid Size" $D/ncu_split_$tag.txt | head -7
done
pack
echo "t=$(( $(date +%s)-t0 ))"
