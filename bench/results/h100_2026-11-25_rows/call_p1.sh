#!/usr/bin/env bash
# Call P1 (c415b1a): the split grid's row kernels -- every GPU test, the CPU split tests on this host (AVX-512 row
# kernel), memcheck on the new GPU test, field_split_bench (setup and rates), ncu of the row kernel.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=c415b1a QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_rows; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callP1.sh $D/call_p1.sh; tar czf $OUT/p1.tgz $D; }
grep -m1 -o "avx512f" /proc/cpuinfo; nproc
timeout 170 ctest --test-dir $B -L gpu --output-on-failure --timeout 160 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
$B/test_field_split_gpu --gtest_filter='SplitGpuEdges.GridNodes*:Tolerances/*' 2>&1 | grep -E "CUDA split|OK|FAIL" | head
timeout 120 ctest --test-dir $B -R "Split|WaterDimer" -E "Gpu|Cuda" --timeout 110 -j 2 > $D/cpu_split_tests.txt 2>&1; echo "cpu ctest rc=$?" >> $D/cpu_split_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|ctest rc" $D/cpu_split_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 60 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_split_gpu --gtest_filter='SplitGpuEdges.GridNodes*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8 > $D/sanitizers.txt; echo "memcheck rc=${PIPESTATUS[0]}" >> $D/sanitizers.txt
cat $D/sanitizers.txt
pack
timeout 230 bash bench/run_bench.sh $D/field_split_bench -- $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --json $D/field_split_bench.json > /dev/null 2>&1
echo "split rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "setup|split double +(gpu|cpu 16)" $D/field_split_bench.log | head -20
pack
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || echo /usr/local/cuda/bin/ncu)
timeout 90 $ncu --set detailed -k regex:grid_coulomb --launch-count 1 $B/test_field_split_gpu --gtest_filter='Tolerances/SplitGpu.*/1' > $D/ncu_grid_rows.txt 2>&1; echo "ncu rc=$?"
grep -E "grid_coulomb|^    Duration|Achieved Occupancy|Registers Per|FP64|Issue Slots|Compute \(SM\)" $D/ncu_grid_rows.txt | head -14
pack
echo "t=$(( $(date +%s)-t0 ))"
