#!/usr/bin/env bash
# Call B9 (experiment): the split's points buffer write-combined (QMMM_AB_WC=1: cudaHostAllocWriteCombined, the host
# only writes it) against cached pinned memory (0), alternated on one handle; the split GPU tests with WC.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=$OUT/b9; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s); C=data/glycine_trimer/fragments23_density.cube.gz
QMMM_AB_WC=1 timeout 100 ctest --test-dir $B -L gpu -R Split --output-on-failure --timeout 90 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
for rep in 1 2; do
  for th in 0.00041 0; do for p in mixed double; do
    echo "== $th $p rep $rep" >> $D/ab.txt
    timeout 60 $B/ab $C $th 21 16 cuda $p QMMM_AB_WC=0 QMMM_AB_WC=1 >> $D/ab.txt 2>&1
  done; done
  echo "ab rep $rep t=$(( $(date +%s)-t0 ))"
done
grep -E "^==|N= 8192|N= 1024|BITS" $D/ab.txt | sed 's/threads 16 *//'
tar czf $OUT/b9.tgz -C $OUT b9
