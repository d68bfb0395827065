#!/usr/bin/env bash
# Call C6 (experiment, 9c9d705 plus a temporary dynamic kernel, QMMM_AB_DYN=1|2: warps take points from a counter,
# with (1) or without (2) the next fetch made before the point's work; MIXED streamed calls only): the split GPU tests
# with each, then whole calls alternated.
set -uo pipefail
export QMMM_REQUIRE_GPU=1
B=/work/main/build-tests; D=$OUT/c6; mkdir -p $D
t0=$(date +%s); C=data/glycine_trimer/fragments23_density.cube.gz
for v in "QMMM_AB_DYN=1" "QMMM_AB_DYN=2"; do
  f=$D/test_$(echo $v | tr ' =' '__').txt
  env $v timeout 120 $B/test_field_split_gpu --gtest_brief=1 > $f 2>&1; echo "tests [$v] rc=$? $(tail -1 $f)"
done
echo "t=$(( $(date +%s)-t0 ))"
for rep in 1 2; do for th in 0.00041 0; do
  echo "== $th mixed rep $rep" >> $D/ab.txt
  timeout 90 $B/ab $C $th 21 16 cuda mixed QMMM_AB_DYN=0 QMMM_AB_DYN=1 QMMM_AB_DYN=2 QMMM_AB_DYN=0 QMMM_AB_DYN=1 >> $D/ab.txt 2>&1
  echo "t=$(( $(date +%s)-t0 ))"
done; done
grep -E "^==|N= 4096|N= 8192|BITS" $D/ab.txt | sed 's/threads 16 *//'
tar czf $OUT/c6.tgz -C $OUT c6
