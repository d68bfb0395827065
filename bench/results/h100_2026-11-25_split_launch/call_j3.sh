#!/usr/bin/env bash
# Call J3: NEW4 (93a0669: NEW3 with MIXED instantiated for 12, 14, ..., 20, 24 float terms) against W2R32 (2 warps a
# block, 32 warps/SM), W2R40 (2 warps a block, 40 warps/SM: 48 registers, small spills) and WC (the points' pinned
# buffer write-combined); every GPU test on NEW4, the split GPU tests on the variants; alternated GPU rows.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_split_launch; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
VARS="W2R32 W2R40 WC"
for V in $VARS; do mkdir -p /tmp/$V && xz -dc .devkit/vars/$V.so.xz > /tmp/$V/libqmmm_accel.so.0; done
t0=$(date +%s)
pack() { cp .devkit/callJ3.sh $D/call_j3.sh; tar czf $OUT/j3.tgz $D; }
timeout 175 ctest --test-dir $B -L gpu --output-on-failure --timeout 160 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
for V in $VARS; do LD_LIBRARY_PATH=/tmp/$V:$LD_LIBRARY_PATH timeout 100 $B/test_field_split_gpu > $D/split_gpu_tests_$V.txt 2>&1; echo "$V split gpu tests rc=$?" | tee -a $D/split_gpu_tests_$V.txt; done
pack
run() {
  local lp=$LD_LIBRARY_PATH; [ $1 != NEW4 ] && lp=/tmp/$1:$LD_LIBRARY_PATH
  LD_LIBRARY_PATH=$lp timeout 80 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --no-cpu --json $D/split_$1_$2.json > $D/split_$1_$2.log 2>&1
  echo "$1 run $2 rc=$?: $(grep -E '^[0-9]+ +(8192) +split (double|mixed) +gpu .*single' $D/split_$1_$2.log | awk '{printf "%s/%s/%s %s %sx; ", $1,$2,$4,$6,$9}')"
}
for r in 1 2; do for V in NEW4 $VARS; do run $V $r; done; pack; done
echo "t=$(( $(date +%s)-t0 ))"
