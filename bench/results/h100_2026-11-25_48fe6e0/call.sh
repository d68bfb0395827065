#!/usr/bin/env bash
# Call D (48fe6e0, final review): every GPU test with QMMM_REQUIRE_GPU=1, memcheck on all split GPU tests, and the split
# bench's GPU rows on this code (the README tables stay on 7c70b59: this commit changes only how the stencil's weights
# are picked, not the work per cell).
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=48fe6e04ece96cd27066350b391a48083016c8d4 QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_48fe6e0; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callD.sh $D/call.sh; tar czf $OUT/callD.tgz $D; }
timeout 150 ctest --test-dir $B -L gpu --output-on-failure --timeout 120 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|Skipped|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 120 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_split_gpu 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8 > $D/sanitizers.txt
echo "rc=${PIPESTATUS[0]}" >> $D/sanitizers.txt; cat $D/sanitizers.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
timeout 120 bash bench/run_bench.sh $D/field_split_bench -- $B/field_split_bench --no-cpu --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --json $D/field_split_bench.json > /dev/null 2>&1
echo "split rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "setup|split double +gpu.*single" $D/field_split_bench.log | head -12
pack
