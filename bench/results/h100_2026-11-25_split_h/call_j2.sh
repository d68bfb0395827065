#!/usr/bin/env bash
# Call J2: NEW3 (bc304a6: MIXED as (1/d) exp(-a^2 d^2) h(d) from a float table, branch-free pair steps, one launch a
# batch) against PT (NEW3 + the point read by 3 lanes and shuffled) and OLD (c2fd3ab); every GPU test on NEW3, the split
# GPU tests on PT, memcheck on NEW3's split GPU tests; alternated GPU rows; ncu of NEW3's MIXED and DOUBLE kernels at N = 8,192.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_split_h; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
for V in OLD PT; do mkdir -p /tmp/$V && xz -dc .devkit/vars/$V.so.xz > /tmp/$V/libqmmm_accel.so.0; done
t0=$(date +%s)
pack() { cp .devkit/callJ2.sh $D/call_j2.sh; tar czf $OUT/j2.tgz $D; }
timeout 175 ctest --test-dir $B -L gpu --output-on-failure --timeout 160 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
grep -E "CUDA split MIXED|MIXED.*cells|Which is|Expected" $D/gpu_tests.txt | head -12
LD_LIBRARY_PATH=/tmp/PT:$LD_LIBRARY_PATH timeout 100 $B/test_field_split_gpu > $D/split_gpu_tests_PT.txt 2>&1; echo "PT split gpu tests rc=$?" | tee -a $D/split_gpu_tests_PT.txt
pack
run() {
  local lp=$LD_LIBRARY_PATH; [ $1 != NEW3 ] && lp=/tmp/$1:$LD_LIBRARY_PATH
  LD_LIBRARY_PATH=$lp timeout 80 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --no-cpu --json $D/split_$1_$2.json > $D/split_$1_$2.log 2>&1
  echo "$1 run $2 rc=$?: $(grep -E '^[0-9]+ +(1|1024|8192) +split (double|mixed) +gpu .*single' $D/split_$1_$2.log | awk '{printf "%s/%s/%s %s %sx; ", $1,$2,$4,$6,$9}')"
}
for r in 1 2; do for V in NEW3 PT OLD; do run $V $r; done; pack; done
echo "t=$(( $(date +%s)-t0 ))"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 100 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_split_gpu --gtest_filter='SplitGpuNuclei.*:SplitGpuEdges.*:Tolerances/*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8 > $D/sanitizers.txt; echo "split memcheck rc=${PIPESTATUS[0]}" >> $D/sanitizers.txt
cat $D/sanitizers.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || echo /usr/local/cuda/bin/ncu)
for K in 1 0; do
  skip=1; [ $K = 0 ] && skip=12
  timeout 70 $ncu --set detailed --import-source no --section SourceCounters --section WarpStateStats --kernel-name-base demangled -k "regex:split_kernel<.int.[0-9]+, .bool.$K>" --launch-skip $skip --launch-count 1 -o $D/ncu_$K -f $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 --tolerance 1e-7 --points 8192 --min-time 0.01 --no-cpu > $D/ncu_run_$K.txt 2>&1; echo "ncu $K rc=$?"
  $ncu --import $D/ncu_$K.ncu-rep --page details > $D/ncu_split_kernel_mixed$K.txt 2>&1
  $ncu --import $D/ncu_$K.ncu-rep --page source --csv --print-source sass > $D/ncu_split_kernel_mixed${K}_sass.csv 2>&1
  rm -f $D/ncu_$K.ncu-rep
  grep -E "^    Duration|Achieved Occupancy|Issue Slots Busy|Warp Cycles Per Issued|Grid Size|split_kernel" $D/ncu_split_kernel_mixed$K.txt | head -7
done
pack
echo "t=$(( $(date +%s)-t0 ))"
