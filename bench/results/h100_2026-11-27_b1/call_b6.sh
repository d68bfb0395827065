#!/usr/bin/env bash
# Call B6 (experiment, d655776 plus temporary parts toggles QMMM_AB_DBG): what a split kernel's parts cost at 8,192 and
# 1,024 points. Bits: 1 no interpolation, 2 no pair terms (the column ranges still found), 4 no columns and no pairs,
# 8 no nuclei; values differ by design (BITS DIFFER expected).
set -uo pipefail
B=/work/main/build-tests; D=$OUT/b6; mkdir -p $D
t0=$(date +%s); C=data/glycine_trimer/fragments23_density.cube.gz
for th in 0.00041 0; do
  echo "== $th mixed" >> $D/ab.txt
  timeout 100 $B/ab $C $th 21 16 cuda mixed QMMM_AB_DBG=0 QMMM_AB_DBG=1 QMMM_AB_DBG=2 QMMM_AB_DBG=4 QMMM_AB_DBG=8 QMMM_AB_DBG=5 QMMM_AB_DBG=13 >> $D/ab.txt 2>&1
done
echo "== 0.00041 double" >> $D/ab.txt
timeout 100 $B/ab $C 0.00041 21 16 cuda double QMMM_AB_DBG=0 QMMM_AB_DBG=1 QMMM_AB_DBG=2 QMMM_AB_DBG=4 QMMM_AB_DBG=5 >> $D/ab.txt 2>&1
echo "t=$(( $(date +%s)-t0 ))"
grep -E "^==|N= 8192|N= 1024" $D/ab.txt | sed 's/threads 16 *//'
tar czf $OUT/b6.tgz -C $OUT b6
