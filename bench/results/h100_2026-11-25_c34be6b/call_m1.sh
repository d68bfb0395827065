#!/usr/bin/env bash
# Call M1 (c34be6b, the final code of this session): every GPU test with QMMM_REQUIRE_GPU=1, memcheck on the split GPU
# tests and the low-latency tests, racecheck on the low-latency bits test; field_split_bench and field_bench for the
# README; ncu summaries of the final latency kernel and of the MIXED tile kernel (2 points a thread) at N = 8192.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=c34be6b4abb8851c6d5911efb28afcccabd40665 QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_c34be6b; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callM1.sh $D/call_m1.sh; tar czf $OUT/m1.tgz $D; }
timeout 150 ctest --test-dir $B -L gpu --output-on-failure --timeout 120 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
{ timeout 90 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_split_gpu --gtest_filter='SplitGpuNuclei.*:SplitGpuEdges.*:Tolerances/*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8; echo "split memcheck rc=${PIPESTATUS[0]}";
  timeout 90 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_gpu_modes --gtest_filter='FieldCudaModes.LowLatency*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8; echo "low-latency memcheck rc=${PIPESTATUS[0]}";
  timeout 90 "$san" --tool racecheck --error-exitcode 3 $B/test_field_gpu_modes --gtest_filter='FieldCudaModes.LowLatencyGives*' 2>&1 | grep -E "PASSED|FAILED|RACECHECK SUMMARY|rror:" | head -8; echo "low-latency racecheck rc=${PIPESTATUS[0]}"; } > $D/sanitizers.txt
cat $D/sanitizers.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
timeout 220 bash bench/run_bench.sh $D/field_split_bench -- $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --json $D/field_split_bench.json > /dev/null 2>&1
echo "split rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "setup|split double +(gpu|cpu 16)" $D/field_split_bench.log | head -20
pack
timeout 70 bash bench/run_bench.sh $D/field -- $B/field_bench --cells 268782 --points 1 1024 8192 --json $D/field.json > /dev/null 2>&1
echo "field rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "limits|cuda_|^268782 +256" $D/field.log | head -22
pack
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || echo /usr/local/cuda/bin/ncu)
timeout 60 $ncu --clock-control none --cache-control none --set detailed -k regex:latency_kernel --launch-skip 20 --launch-count 1 $B/field_bench --only-cuda --cells 268782 --points 1 --min-time 0.05 --handles 0 > $D/ncu_latency_single_n1.txt 2>&1; echo "ncu latency rc=$?"
timeout 60 $ncu --set detailed --kernel-name-base demangled -k "regex:tile_kernel<.int.2," --launch-skip 2 --launch-count 1 $B/field_bench --only-cuda --cells 268782 --points 8192 --min-time 0.05 --handles 0 > $D/ncu_tile_n8192.txt 2>&1; echo "ncu tile rc=$?"
grep -E "tile_kernel|latency_kernel|^    Duration|Achieved Occupancy|Registers Per" $D/ncu_latency_single_n1.txt $D/ncu_tile_n8192.txt | head -12
pack
echo "t=$(( $(date +%s)-t0 ))"
