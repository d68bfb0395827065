#!/usr/bin/env bash
# Call F1 (library of .devkit/commit, the stop's final code): every GPU test with QMMM_REQUIRE_GPU=1; memcheck (leak
# check) and racecheck on the field tests that reach MIXED's quarter blocks; values bitwise against f52861b's kernels;
# field_bench on the README's field sizes.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h200_2026-11-29_$(cat .devkit/commit)_final; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callF1.sh $D/call_f1.sh; tar czf $OUT/f1.tgz $D; }
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > $D/gpu.txt 2>&1
timeout 120 ctest --test-dir $B -L gpu --output-on-failure --timeout 110 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Skipped|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
QMMM_CUDA_PIECES=1 LD_LIBRARY_PATH=$B/oldlib:${LD_LIBRARY_PATH:-} timeout 60 $B/bitcheck_scratch > $D/bits_before.txt 2>&1
timeout 60 $B/bitcheck_scratch > $D/bits_after.txt 2>&1
if cmp -s $D/bits_before.txt $D/bits_after.txt; then echo "bits: identical ($(wc -l < $D/bits_after.txt) hashes)"; else echo "bits: DIFFER"; fi | tee $D/bits.txt
pack
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 100 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_gpu --gtest_filter='*Bitwise*:*Dominant*:*Async*:*WaterDimer*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8 > $D/sanitizers.txt; echo "memcheck test_field_gpu rc=${PIPESTATUS[0]}" >> $D/sanitizers.txt
timeout 40 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_gpu_rows --gtest_filter='*Lattice*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8 >> $D/sanitizers.txt; echo "memcheck rows rc=${PIPESTATUS[0]}" >> $D/sanitizers.txt
timeout 40 "$san" --tool racecheck --error-exitcode 3 $B/test_field_gpu --gtest_filter='*Dominant*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|RACECHECK SUMMARY|rror:" | head -6 >> $D/sanitizers.txt; echo "racecheck rc=${PIPESTATUS[0]}" >> $D/sanitizers.txt
cat $D/sanitizers.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
timeout 60 bash bench/run_bench.sh $D/field -- $B/field_bench --cells 268782 --points 1 1024 8192 --json $D/field.json > /dev/null 2>&1
echo "field rc=$? t=$(( $(date +%s)-t0 ))"; head -1 $D/field.log; grep -E "cuda_|^268782 +256 .* 1 " $D/field.log
pack
