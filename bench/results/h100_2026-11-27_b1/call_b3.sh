#!/usr/bin/env bash
# Call B3 (experiment): B2's streamed kernels took ~2 ms even with every point copied before the launch (mode 12). Which
# part: mode bits 16 (no read of the ready flag), 32 (no system fences), 64 (no fence per warp), 128 (values written
# to the host as the one-shot kernel does, no chunk protocol), each on top of mode 12 (QMMM_AB_STREAM = mode + 1).
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=$OUT/b3; mkdir -p $D
t0=$(date +%s); C=data/glycine_trimer/fragments23_density.cube.gz
echo "== 0.00041 mixed" >> $D/ab.txt
QMMM_AB_PROF=1 timeout 100 $B/ab $C 0.00041 20 16 cuda mixed QMMM_AB_STREAM=0 QMMM_AB_STREAM=13 QMMM_AB_STREAM=29 QMMM_AB_STREAM=45 QMMM_AB_STREAM=77 QMMM_AB_STREAM=125 QMMM_AB_STREAM=141 QMMM_AB_STREAM=157 QMMM_AB_STREAM=5 QMMM_AB_STREAM=21 >> $D/ab.txt 2>&1
echo "ab t=$(( $(date +%s)-t0 ))"
grep -E "^==|max normwise|N= 8192|BITS" $D/ab.txt | sed 's/threads 16 *//'
grep ABPROF $D/ab.txt | sort -k3,3n -s | awk '!seen[$3]++' | head -20
tar czf $OUT/b3.tgz -C $OUT b3
