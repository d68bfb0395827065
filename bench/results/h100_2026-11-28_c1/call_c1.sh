#!/usr/bin/env bash
# Call C1 (experiment, 74cabb6 plus temporary toggles): QMMM_AB_PIECE=K stages a streamed call's first K points,
# launches them, then stages the rest and launches it on a second stream; QMMM_AB_FENCE=1: one fence per block.
# memprobe: the host memcpy of a call's points into pinned memory.
set -uo pipefail
export QMMM_REQUIRE_GPU=1
B=/work/main/build-tests; D=$OUT/c1; mkdir -p $D
t0=$(date +%s); C=data/glycine_trimer/fragments23_density.cube.gz
$B/memprobe > $D/memprobe.txt 2>&1; cat $D/memprobe.txt
for v in "QMMM_AB_PIECE=0 QMMM_AB_FENCE=0" "QMMM_AB_PIECE=2048 QMMM_AB_FENCE=1" "QMMM_AB_PIECE=1024 QMMM_AB_FENCE=0"; do
  env $v timeout 120 $B/test_field_split_gpu --gtest_brief=1 > $D/test_$(echo $v | tr ' =' '__').txt 2>&1; echo "tests [$v] rc=$? $(tail -1 $D/test_$(echo $v | tr ' =' '__').txt)"
done
echo "t=$(( $(date +%s)-t0 ))"
V0=QMMM_AB_PIECE=0,QMMM_AB_FENCE=0
for rep in 1 2; do for th in 0.00041 0; do
  echo "== $th mixed rep $rep" >> $D/ab.txt
  timeout 90 $B/ab $C $th 21 16 cuda mixed $V0 QMMM_AB_PIECE=1024,QMMM_AB_FENCE=0 QMMM_AB_PIECE=2048,QMMM_AB_FENCE=0 QMMM_AB_PIECE=4096,QMMM_AB_FENCE=0 QMMM_AB_PIECE=0,QMMM_AB_FENCE=1 QMMM_AB_PIECE=2048,QMMM_AB_FENCE=1 $V0 >> $D/ab.txt 2>&1
  echo "t=$(( $(date +%s)-t0 ))"
done; done
grep -E "^==|N= 4096|N= 8192|BITS" $D/ab.txt | sed 's/threads 16 *//'
tar czf $OUT/c1.tgz -C $OUT c1
