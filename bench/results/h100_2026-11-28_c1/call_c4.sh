#!/usr/bin/env bash
# Call C4 (experiment, e38dee5 plus the generic point_value and a temporary toggle QMMM_AB_PPW=2: two points a warp,
# 16 lanes each with two virtual lanes; the same bits by construction): the split GPU tests with V = 1 and V = 2, then
# whole calls alternated.
set -uo pipefail
export QMMM_REQUIRE_GPU=1
B=/work/main/build-tests; D=$OUT/c4; mkdir -p $D
t0=$(date +%s); C=data/glycine_trimer/fragments23_density.cube.gz
for v in "QMMM_AB_PPW=1" "QMMM_AB_PPW=2"; do
  f=$D/test_$(echo $v | tr ' =' '__').txt
  env $v timeout 120 $B/test_field_split_gpu --gtest_brief=1 > $f 2>&1; echo "tests [$v] rc=$? $(tail -1 $f)"
done
echo "t=$(( $(date +%s)-t0 ))"
for rep in 1 2; do for th in 0.00041 0; do for pr in mixed double; do
  [ $pr = double ] && [ $rep = 2 ] && continue
  echo "== $th $pr rep $rep" >> $D/ab.txt
  timeout 90 $B/ab $C $th 21 16 cuda $pr QMMM_AB_PPW=1 QMMM_AB_PPW=2 QMMM_AB_PPW=1 QMMM_AB_PPW=2 QMMM_AB_PPW=1 >> $D/ab.txt 2>&1
  echo "t=$(( $(date +%s)-t0 ))"
done; done; done
grep -E "^==|N= 1024|N= 4096|N= 8192|BITS" $D/ab.txt | sed 's/threads 16 *//'
tar czf $OUT/c4.tgz -C $OUT c4
