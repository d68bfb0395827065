#!/usr/bin/env bash
# Call H1 (fb04d3e): split GPU tests (MIXED added), field_split_bench GPU rows (DOUBLE and MIXED), ncu of the MIXED
# split kernel's first evaluation at N = 8192, 268,938 cells.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit 2>/dev/null || echo fb04d3e) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_fb04d3e; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callH1.sh $D/call_h1.sh; tar czf $OUT/h1.tgz $D; }
timeout 200 $B/test_field_split_gpu > $D/split_gpu_tests.txt 2>&1; echo "split gpu tests rc=$?" >> $D/split_gpu_tests.txt
grep -E "MIXED|PASSED|FAILED|tests rc|Failure|Expected|Which is" $D/split_gpu_tests.txt | head -40; echo "t=$(( $(date +%s)-t0 ))"
pack
timeout 200 bash bench/run_bench.sh $D/field_split_bench -- $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --no-cpu --json $D/field_split_bench.json > /dev/null 2>&1
echo "split rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "setup|MIXED|gpu " $D/field_split_bench.log | head -40
pack
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || echo /usr/local/cuda/bin/ncu)
timeout 120 $ncu --set detailed --section SourceCounters --kernel-name-base demangled -k "regex:split_kernel<1, true>" --launch-skip 1 --launch-count 1 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 --tolerance 1e-7 --points 8192 --min-time 0.01 --no-cpu > $D/ncu_split_mixed_n8192.txt 2>&1; echo "ncu rc=$?"
grep -E "split_kernel|^    Duration|Achieved Occupancy|Registers Per|Issue Slots Busy|Executed Instructions  |L1/TEX Hit" $D/ncu_split_mixed_n8192.txt | head -12
pack
echo "t=$(( $(date +%s)-t0 ))"
