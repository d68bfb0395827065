#!/usr/bin/env bash
# Call K1 (the final code of this stop, 93a0669): every GPU test with QMMM_REQUIRE_GPU=1, memcheck on the split GPU tests
# (MIXED included), field_split_bench (CPU and GPU rows, DOUBLE and MIXED) for the README.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_93a0669; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callK1.sh $D/call_k1.sh; tar czf $OUT/k1.tgz $D; }
timeout 175 ctest --test-dir $B -L gpu --output-on-failure --timeout 160 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 100 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_split_gpu --gtest_filter='SplitGpuNuclei.*:SplitGpuEdges.*:Tolerances/*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8 > $D/sanitizers.txt; echo "split memcheck rc=${PIPESTATUS[0]}" >> $D/sanitizers.txt
cat $D/sanitizers.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
timeout $(( 585 - ($(date +%s)-t0) )) bash bench/run_bench.sh $D/field_split_bench -- $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --json $D/field_split_bench.json > /dev/null 2>&1
echo "split rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "setup|split (double|mixed) +(gpu|cpu 16) .*(1024|8192)" $D/field_split_bench.log | head -24
pack
