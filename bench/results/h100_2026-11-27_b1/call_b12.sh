#!/usr/bin/env bash
# Call B12 (experiment, dcfce6b plus temporary toggles QMMM_AB_DBG): the streamed kernel's completion, 128: one fence
# per block (thread 0, after the barrier) instead of one per warp; 256: each block writes its values to the host
# itself (one request, then a system fence), the chunk's last block only sets the flag; 64: one-shot calls. Whole
# calls alternated on one handle (values compared bitwise), then ncu durations with the toggle set after create.
set -uo pipefail
export QMMM_REQUIRE_GPU=1
B=/work/main/build-tests; D=$OUT/b12; mkdir -p $D
t0=$(date +%s); C=data/glycine_trimer/fragments23_density.cube.gz
for rep in 1 2; do for th in 0.00041 0; do for p in mixed double; do
  echo "== $th $p rep $rep" >> $D/ab.txt
  timeout 60 $B/ab $C $th 21 16 cuda $p QMMM_AB_DBG=0 QMMM_AB_DBG=128 QMMM_AB_DBG=256 QMMM_AB_DBG=64 QMMM_AB_DBG=0 >> $D/ab.txt 2>&1
done; done; done
echo "t=$(( $(date +%s)-t0 ))"
grep -E "^==|N= 8192|BITS" $D/ab.txt | sed 's/threads 16 *//'
tar czf $OUT/b12.tgz -C $OUT b12
