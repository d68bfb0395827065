#!/usr/bin/env bash
# Call B7 (experiment): a block's points read in one request and its values written in one (new) against each warp's
# own reads and write (QMMM_AB_DBG=16, the code of d655776), and the floor without interpolation, pairs and nuclei
# (13; 29 for the old reads); the split GPU tests, memcheck on them; the split bench (GPU only).
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=$OUT/b7; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s); C=data/glycine_trimer/fragments23_density.cube.gz
pack() { tar czf $OUT/b7.tgz -C $OUT b7; }
timeout 100 ctest --test-dir $B -L gpu -R Split --output-on-failure --timeout 90 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 100 "$san" --tool memcheck --error-exitcode 3 $B/test_field_split_gpu --gtest_filter='*Streamed*:*Nuclei*:*Outside*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|rror:" | head -6 > $D/sanitizers.txt; echo "memcheck rc=${PIPESTATUS[0]}" >> $D/sanitizers.txt
cat $D/sanitizers.txt; pack
for rep in 1 2; do
  for th in 0.00041 0; do for p in mixed double; do
    echo "== $th $p rep $rep" >> $D/ab.txt
    timeout 60 $B/ab $C $th 21 16 cuda $p QMMM_AB_DBG=16 QMMM_AB_DBG=0 QMMM_AB_DBG=29 QMMM_AB_DBG=13 >> $D/ab.txt 2>&1
  done; done
  echo "ab rep $rep t=$(( $(date +%s)-t0 ))"; pack
done
grep -E "^==|N= 8192|N= 1024" $D/ab.txt | sed 's/threads 16 *//'
timeout 120 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --no-cpu --json $D/split.json > $D/split.log 2>&1
echo "split rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "split (double|mixed) +gpu .*single" $D/split.log | head -14
pack
