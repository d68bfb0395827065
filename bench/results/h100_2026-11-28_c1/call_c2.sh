#!/usr/bin/env bash
# Call C2 (experiment: the two-launch code with one fence a block, plus temporary toggles QMMM_AB_TWO=0 (one launch)
# and QMMM_AB_DMA=1|2 (the second launch's points, or both launches', copied to device memory by DMA before the launch);
# pcie: blocks that only read their 4 points and write 4 values, from mapped or device memory.
set -uo pipefail
export QMMM_REQUIRE_GPU=1
B=/work/main/build-tests; D=$OUT/c2; mkdir -p $D
t0=$(date +%s); C=data/glycine_trimer/fragments23_density.cube.gz
$B/pcie > $D/pcie.txt 2>&1; cat $D/pcie.txt
for v in "QMMM_AB_TWO=1 QMMM_AB_DMA=0" "QMMM_AB_TWO=1 QMMM_AB_DMA=2"; do
  f=$D/test_$(echo $v | tr ' =' '__').txt
  env $v timeout 120 $B/test_field_split_gpu --gtest_brief=1 > $f 2>&1; echo "tests [$v] rc=$? $(tail -1 $f)"
done
echo "t=$(( $(date +%s)-t0 ))"
F=QMMM_AB_TWO=1,QMMM_AB_DMA=0
for rep in 1 2; do for th in 0.00041 0; do
  echo "== $th mixed rep $rep" >> $D/ab.txt
  timeout 90 $B/ab $C $th 21 16 cuda mixed $F QMMM_AB_TWO=0,QMMM_AB_DMA=0 QMMM_AB_TWO=1,QMMM_AB_DMA=1 QMMM_AB_TWO=1,QMMM_AB_DMA=2 QMMM_AB_TWO=0,QMMM_AB_DMA=2 $F >> $D/ab.txt 2>&1
  echo "t=$(( $(date +%s)-t0 ))"
done; done
grep -E "^==|N= 4096|N= 8192|BITS" $D/ab.txt | sed 's/threads 16 *//'
tar czf $OUT/c2.tgz -C $OUT c2
