#!/usr/bin/env bash
# Call G1 (afb5054, the final code of this stop): every GPU test with QMMM_REQUIRE_GPU=1, the CPU split tests on this host
# (AVX-512 row kernel), memcheck on the split GPU tests and the low-latency tests; field_split_bench and field_bench
# for the README; ncu of the split grid's row kernel (its first, largest launch at 1.1M cells).
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=afb50542ebf1ef3872a613b1406c34dd6cdc49d5 QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_afb5054; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callG1.sh $D/call_g1.sh; tar czf $OUT/g1.tgz $D; }
timeout 170 ctest --test-dir $B -L gpu --output-on-failure --timeout 160 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
timeout 120 ctest --test-dir $B -R "Split|WaterDimer" -E "Gpu|Cuda" --timeout 110 -j 2 > $D/cpu_split_tests.txt 2>&1; echo "cpu ctest rc=$?" >> $D/cpu_split_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|ctest rc" $D/cpu_split_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
{ timeout 120 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_split_gpu --gtest_filter='SplitGpuNuclei.*:SplitGpuEdges.*:Tolerances/*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8; echo "split memcheck rc=${PIPESTATUS[0]}";
  timeout 90 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_gpu_modes --gtest_filter='FieldCudaModes.LowLatency*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8; echo "low-latency memcheck rc=${PIPESTATUS[0]}"; } > $D/sanitizers.txt
cat $D/sanitizers.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
timeout 230 bash bench/run_bench.sh $D/field_split_bench -- $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --json $D/field_split_bench.json > /dev/null 2>&1
echo "split rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "setup|split double +(gpu|cpu 16) .*(1024|8192)" $D/field_split_bench.log | head -20
pack
timeout 70 bash bench/run_bench.sh $D/field -- $B/field_bench --cells 268782 --points 1 1024 8192 --json $D/field.json > /dev/null 2>&1
echo "field rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "limits|cuda_|^268782 +256" $D/field.log | head -22
pack
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || echo /usr/local/cuda/bin/ncu)
timeout 100 $ncu --set detailed -k regex:grid_coulomb --launch-count 1 $B/field_split_bench --data data/glycine_trimer --thresholds 0 --tolerance 1e-7 --points 8192 --min-time 0.01 --no-cpu > $D/ncu_grid_rows_1p1M.txt 2>&1; echo "ncu rc=$?"
grep -E "grid_coulomb|^    Duration|Achieved Occupancy|Registers Per|Issue Slots Busy|FP64  " $D/ncu_grid_rows_1p1M.txt | head -10
pack
echo "t=$(( $(date +%s)-t0 ))"
