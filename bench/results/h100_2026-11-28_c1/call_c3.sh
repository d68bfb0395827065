#!/usr/bin/env bash
# Call C3 (experiment, 0f6dd75 plus a temporary toggle): the CPU split's points per OpenMP task (QMMM_AB_CHUNK, the
# code's 8) at 16 threads; the points are in the split's Morton order, so larger tasks keep a core's points together.
set -uo pipefail
B=/work/main/build-tests; D=$OUT/c3; mkdir -p $D
t0=$(date +%s); C=data/glycine_trimer/fragments23_density.cube.gz
lscpu | grep -E "Model name|^CPU\(s\)|Thread|L2|L3" > $D/lscpu.txt; cat $D/lscpu.txt
for run in "0.00041 1" "0 1" "0.00041 2"; do set -- $run
  echo "== $1 double rep $2" >> $D/ab.txt
  timeout 150 $B/ab $C $1 21 16 cpu double QMMM_AB_CHUNK=8 QMMM_AB_CHUNK=32 QMMM_AB_CHUNK=64 QMMM_AB_CHUNK=128 QMMM_AB_CHUNK=256 QMMM_AB_CHUNK=8 >> $D/ab.txt 2>&1
  echo "t=$(( $(date +%s)-t0 ))"
done
grep -E "^==|N= 1024|N= 8192|BITS|setup" $D/ab.txt | sed 's/threads 16 *//'
tar czf $OUT/c3.tgz -C $OUT c3
