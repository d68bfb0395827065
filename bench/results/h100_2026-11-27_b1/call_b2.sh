#!/usr/bin/env bash
# Call B2 (experiment): where a streamed split call's ~2 ms go (B1): variants of QMMM_AB_STREAM (0: one-shot; k >= 1:
# streamed with mode k - 1: bit 1 acquire / release flag accesses at system scope, bit 2 cudaStreamQuery after the
# launch, bit 4 every point copied before the launch, bit 8 the stream synchronized before the values are read), with
# per-call phase times (QMMM_AB_PROF); the streamed test.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=$OUT/b2; mkdir -p $D
t0=$(date +%s); C=data/glycine_trimer/fragments23_density.cube.gz
pack() { tar czf $OUT/b2.tgz -C $OUT b2; }
timeout 60 $B/test_field_split_gpu --gtest_filter='*Streamed*:*Water*' > $D/tests.txt 2>&1; echo "tests rc=$?"; grep -E "FAILED|PASSED|Failure" $D/tests.txt | head
for th in 0.00041 0; do
  echo "== $th mixed" >> $D/ab.txt
  QMMM_AB_PROF=1 timeout 100 $B/ab $C $th 20 16 cuda mixed QMMM_AB_STREAM=0 QMMM_AB_STREAM=1 QMMM_AB_STREAM=2 QMMM_AB_STREAM=3 QMMM_AB_STREAM=4 QMMM_AB_STREAM=5 QMMM_AB_STREAM=9 QMMM_AB_STREAM=13 >> $D/ab.txt 2>&1
  echo "ab $th t=$(( $(date +%s)-t0 ))"; pack
done
grep -E "^==|max normwise|N= 8192|BITS" $D/ab.txt | sed 's/threads 16 *//'
grep ABPROF $D/ab.txt | sort | uniq | awk '{print}' | head -40
pack
