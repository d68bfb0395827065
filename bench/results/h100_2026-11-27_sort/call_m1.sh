#!/usr/bin/env bash
# Call M1 (experiment: the split evaluation's points in spatial order). Temporary env toggles in the library:
# QMMM_SPLIT_UNSORTED (CPU and GPU: no sort), QMMM_SPLIT_WPB=4 (GPU: 4 warps, 4 consecutive points, per block).
# Every GPU test with QMMM_REQUIRE_GPU=1 (the defaults: sorted, one warp a block), then ab_split (the A/B driver,
# /tmp/ab/ab.cpp in the session, copied here as ab_split.cpp): GPU MIXED/DOUBLE at 268,938 and 1,099,098 cells, CPU at 268,938.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=$OUT/m1; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s); C=data/glycine_trimer/fragments23_density.cube.gz
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $D/gpu.txt
timeout 200 ctest --test-dir $B -L gpu --output-on-failure --timeout 180 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
for th in 0.00041 0; do for p in mixed double; do
  timeout 100 $B/ab_split $C $th 15 16 cuda $p >> $D/ab_gpu.txt 2>&1; done; done
cat $D/ab_gpu.txt; echo "t=$(( $(date +%s)-t0 ))"
timeout 150 $B/ab_split $C 0.00041 5 16 cpu double > $D/ab_cpu16.txt 2>&1; cat $D/ab_cpu16.txt
echo "t=$(( $(date +%s)-t0 ))"
timeout 120 $B/ab_split $C 0.00041 3 1 cpu double > $D/ab_cpu1.txt 2>&1; cat $D/ab_cpu1.txt
echo "t=$(( $(date +%s)-t0 ))"
