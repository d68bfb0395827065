#!/usr/bin/env bash
# Call C7 (experiment, 9c9d705 plus a new split kernel: a block's four warps share its four points' steps; the old
# kernel under the temporary toggle QMMM_AB_OLD=1): every split GPU test on the new kernel, then whole calls
# alternated (their bits differ by design: the sum's layout changed).
set -uo pipefail
export QMMM_REQUIRE_GPU=1
B=/work/main/build-tests; D=$OUT/c7; mkdir -p $D
t0=$(date +%s); C=data/glycine_trimer/fragments23_density.cube.gz
timeout 150 $B/test_field_split_gpu > $D/test_new.txt 2>&1; echo "tests new rc=$? $(grep -E "PASSED|FAILED" $D/test_new.txt | head -5)"
grep -E "error|Error" $D/test_new.txt | head -10
echo "t=$(( $(date +%s)-t0 ))"
for run in "0.00041 mixed 1" "0 mixed 1" "0.00041 double 1" "0.00041 mixed 2" "0 mixed 2"; do set -- $run
  echo "== $1 $2 rep $3" >> $D/ab.txt
  timeout 90 $B/ab $C $1 21 16 cuda $2 QMMM_AB_OLD=1 QMMM_AB_OLD=0 QMMM_AB_OLD=1 QMMM_AB_OLD=0 QMMM_AB_OLD=1 >> $D/ab.txt 2>&1
  echo "t=$(( $(date +%s)-t0 ))"
done
grep -E "^==|N= 1024|N= 8192|max normwise" $D/ab.txt | sed 's/threads 16 *//'
tar czf $OUT/c7.tgz -C $OUT c7
