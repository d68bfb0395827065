#!/usr/bin/env bash
# Call A1 (experiment): the split GPU kernel with warps taking points from a ticket counter (persistent blocks) against
# one point a warp in 4-warp blocks (QMMM_AB_PERSIST=0); the CPU split with prefetched ranges (QMMM_AB_PF) and OpenMP
# chunk sizes (QMMM_AB_CHUNK). GPU tests first (QMMM_REQUIRE_GPU=1), racecheck/memcheck on the split GPU tests.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=$OUT/a1; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s); C=data/glycine_trimer/fragments23_density.cube.gz
pack() { tar czf $OUT/a1.tgz -C $OUT a1; }
timeout 130 ctest --test-dir $B -L gpu --output-on-failure --timeout 120 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
  timeout 60 "$san" --tool $tool --error-exitcode 3 $B/test_field_split_gpu 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|RACECHECK SUMMARY|rror:" | head -6 >> $D/sanitizers.txt; echo "$tool rc=${PIPESTATUS[0]}" >> $D/sanitizers.txt
done
cat $D/sanitizers.txt; echo "t=$(( $(date +%s)-t0 ))"; pack
for th in 0.00041 0; do for p in mixed double; do
  timeout 60 $B/ab $C $th 15 16 cuda $p QMMM_AB_PERSIST=0 QMMM_AB_PERSIST=1 >> $D/ab_gpu.txt 2>&1; done; done
cat $D/ab_gpu.txt; echo "t=$(( $(date +%s)-t0 ))"; pack
timeout 120 $B/ab $C 0.00041 9 16 cpu double QMMM_AB_PF=0,QMMM_AB_CHUNK=8 QMMM_AB_PF=1,QMMM_AB_CHUNK=8 QMMM_AB_PF=0,QMMM_AB_CHUNK=64 QMMM_AB_PF=1,QMMM_AB_CHUNK=64 QMMM_AB_PF=0,QMMM_AB_CHUNK=32 > $D/ab_cpu16.txt 2>&1; cat $D/ab_cpu16.txt
echo "t=$(( $(date +%s)-t0 ))"; pack
