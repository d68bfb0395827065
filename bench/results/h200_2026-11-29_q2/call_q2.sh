#!/usr/bin/env bash
# Call Q2: MIXED quarter blocks that loop over segments (as many blocks as fit at once) against one block a quarter (QMMM_CUDA_QSTRIDE=0), alternated; bits against f52861b; every GPU test.
# against tile_kernel's blocks of four groups (QMMM_CUDA_QBLOCK=0), alternated; bits against f52861b's kernels;
# every GPU test; ncu of the quarter kernels.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h200_2026-11-29_q2; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callQ2.sh $D/call_q2.sh; tar czf $OUT/q2.tgz $D; }
timeout 150 ctest --test-dir $B -L gpu --output-on-failure --timeout 140 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
QMMM_CUDA_PIECES=1 LD_LIBRARY_PATH=$B/oldlib:${LD_LIBRARY_PATH:-} timeout 90 $B/bitcheck_scratch > $D/bits_before.txt 2>&1
timeout 90 $B/bitcheck_scratch > $D/bits_after.txt 2>&1
if cmp -s $D/bits_before.txt $D/bits_after.txt; then echo "bits: identical ($(wc -l < $D/bits_after.txt) hashes)"; else echo "bits: DIFFER"; diff $D/bits_before.txt $D/bits_after.txt | head; fi | tee $D/bits.txt
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 120 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_gpu --gtest_filter='*Dominant*:*AcrossSizes*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8 > $D/sanitizers.txt; echo "memcheck rc=${PIPESTATUS[0]}" >> $D/sanitizers.txt
cat $D/sanitizers.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
for rep in 1 2; do
  for v in 0 1; do
    QMMM_CUDA_QSTRIDE=$v timeout 60 $B/field_bench --only-cuda --cells 268782 1000000 --points 1024 8192 --handles 0 --min-time 0.3 --json $D/ab_s${v}_$rep.json > $D/ab_s${v}_$rep.log 2>&1
    echo "qstride=$v rep=$rep rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "cuda_(single|mixed|double) " $D/ab_s${v}_$rep.log | grep -v "  1  "
  done
done
pack
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
sections=(--section SpeedOfLight --section Occupancy --section LaunchStats --section InstructionStats --section WarpStateStats --section SchedulerStats --metrics sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum)
for spec in "mixed_n8192 mixed_quarter_kernel<.int.2, .int.32>" "mixed_n1024 mixed_quarter_kernel<.int.2, .int.32>"; do
  set -- $spec; left=$(( 560 - ($(date +%s)-t0) )); [ $left -gt 10 ] || break
  timeout $left "$ncu" "${sections[@]}" --kernel-name-base demangled -k "regex:$2 $3" -c 1 $B/field_bench --only-cuda --cells 268782 --points ${1#mixed_n} --handles 0 --min-time 0.01 --json /tmp/x.json > $D/ncu_$1.txt 2>&1
  echo "== $1 t=$(( $(date +%s)-t0 ))"; grep -E "Duration|Issue Slots Busy|Achieved Occupancy|pipe_xu|inst_executed.sum|No Eligible" $D/ncu_$1.txt | head -6
  grep -E "spends [0-9.]+ cycles" $D/ncu_$1.txt | head -2 | cut -c1-140
done
pack
