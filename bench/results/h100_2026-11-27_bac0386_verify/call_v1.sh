#!/usr/bin/env bash
# Call V1 (final tip, see .devkit/commit; its CUDA code compiles to 8b0da65's kernels but for a comment): every GPU
# test with QMMM_REQUIRE_GPU=1; compute-sanitizer memcheck on all CUDA field tests and the low-latency tests;
# field_bench --only-cuda at 268,782 cells.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-27_$(cat .devkit/commit)_verify; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callV1.sh $D/call_v1.sh; tar czf $OUT/v1.tgz $D; }
timeout 120 ctest --test-dir $B -L gpu --output-on-failure --timeout 110 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|Skipped|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
{ timeout 170 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_gpu 2>&1 | grep -E "PASSED|FAILED|SKIPPED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8; echo "field memcheck rc=${PIPESTATUS[0]}";
  timeout 90 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_gpu_modes 2>&1 | grep -E "PASSED|FAILED|SKIPPED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8; echo "modes memcheck rc=${PIPESTATUS[0]}"; } > $D/sanitizers.txt
cat $D/sanitizers.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
timeout 60 bash bench/run_bench.sh $D/field -- $B/field_bench --only-cuda --cells 268782 --points 1 1024 8192 --json $D/field.json > /dev/null 2>&1
echo "field rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "limits|cuda_" $D/field.log | head -14
pack
