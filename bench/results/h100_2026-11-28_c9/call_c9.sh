#!/usr/bin/env bash
# Call C9 (experiment, 01f592a plus temporary toggles): QMMM_AB_K bit 1: the interpolation weights one per lane (lane l:
# weight l mod 8 of axis l / 8) and shuffled, instead of every lane computing all 24; bit 2: a step's column-start mask
# read from a per-warp shared bitmap of the point's column starts (int32 cell indices), instead of built from the lanes'
# column offsets with a warp OR-reduction. Both keep the bits. QMMM_AB_ALPHA: alpha instead of 4 at 1e-7 (a separate
# handle, so a separate process). The refined blocks' 1 / h is stored (SplitBlock::inv_h) in every variant.
set -uo pipefail
export QMMM_REQUIRE_GPU=1
B=/work/main/build-tests; D=$OUT/c9; mkdir -p $D
t0=$(date +%s); C=data/glycine_trimer/fragments23_density.cube.gz
QMMM_AB_K=3 timeout 200 $B/test_field_split_gpu --gtest_brief=1 > $D/test_K3.txt 2>&1; echo "tests K=3 rc=$? $(tail -1 $D/test_K3.txt)"
echo "t=$(( $(date +%s)-t0 ))"
for rep in 1 2; do for th in 0.00041 0; do
  echo "== $th mixed rep $rep" >> $D/ab.txt
  timeout 100 $B/ab $C $th 21 16 cuda mixed QMMM_AB_K=0 QMMM_AB_K=1 QMMM_AB_K=2 QMMM_AB_K=3 QMMM_AB_K=0 >> $D/ab.txt 2>&1
  echo "t=$(( $(date +%s)-t0 ))"
done; done
echo "== 0.00041 double" >> $D/ab.txt
timeout 100 $B/ab $C 0.00041 21 16 cuda double QMMM_AB_K=0 QMMM_AB_K=3 QMMM_AB_K=0 >> $D/ab.txt 2>&1
for a in 4.25 4.5 5; do for th in 0.00041 0; do
  echo "== alpha $a $th mixed" >> $D/alpha.txt
  QMMM_AB_ALPHA=$a timeout 100 $B/ab $C $th 21 16 cuda mixed QMMM_AB_K=3 QMMM_AB_K=0 >> $D/alpha.txt 2>&1
  echo "t=$(( $(date +%s)-t0 ))"
done; done
grep -E "^==|alpha|setup|error|N= 4096|N= 8192|BITS" $D/ab.txt $D/alpha.txt | sed 's/threads 16 *//'
