#!/usr/bin/env bash
# Call B11 (experiment, dcfce6b plus temporary toggles QMMM_AB_DBG: 1 no interpolation, 4 no columns and pairs, 8 no
# nuclei, 64 one-shot instead of streamed): Nsight Compute durations of the split kernel at 8,192 points (2,048
# blocks) with all work and with none, streamed and one-shot; then the same variants timed as whole calls.
set -uo pipefail
B=/work/main/build-tests; D=$OUT/b11; mkdir -p $D
t0=$(date +%s); C=data/glycine_trimer/fragments23_density.cube.gz
for V in 0 13 64 77; do
  QMMM_AB_DBG=$V timeout 100 ncu --metrics gpu__time_duration.sum,launch__grid_size,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active --kernel-name regex:split_kernel --launch-skip 4 $B/ab $C 0.00041 2 16 cuda mixed X=0 > $D/ncu_$V.txt 2>&1
  echo "== DBG $V rc=$? t=$(( $(date +%s)-t0 ))"; grep -A5 "(2048, 1, 1)x" $D/ncu_$V.txt | grep -E "duration|inst_exec|warps_active" | head -6
done
timeout 60 $B/ab $C 0.00041 21 16 cuda mixed QMMM_AB_DBG=0 QMMM_AB_DBG=13 QMMM_AB_DBG=64 QMMM_AB_DBG=77 > $D/ab.txt 2>&1
grep -E "N= 8192|N= 1024" $D/ab.txt | sed 's/threads 16 *//'
tar czf $OUT/b11.tgz -C $OUT b11
