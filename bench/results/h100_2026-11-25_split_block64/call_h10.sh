#!/usr/bin/env bash
# Call H10: split kernel with 64 threads a point (T64 = the commit) against 128 (T128) and a warp a point (WARP);
# split GPU tests on T64; alternated GPU rows.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_split_block64; mkdir -p $D
for V in WARP T128; do mkdir -p /tmp/$V && xz -dc .devkit/vars/$V.so.xz > /tmp/$V/libqmmm_accel.so.0; done
t0=$(date +%s)
pack() { cp .devkit/callH10.sh $D/call_h10.sh; tar czf $OUT/h10.tgz $D; }
timeout 100 $B/test_field_split_gpu > $D/split_gpu_tests.txt 2>&1; echo "split gpu tests rc=$?" >> $D/split_gpu_tests.txt
grep -E "PASSED|FAILED|tests rc|Failure|Which is|Expected" $D/split_gpu_tests.txt | head -20; echo "t=$(( $(date +%s)-t0 ))"
run() {
  local lp=$LD_LIBRARY_PATH; [ $1 != T64 ] && lp=/tmp/$1:$LD_LIBRARY_PATH
  LD_LIBRARY_PATH=$lp timeout 70 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --no-cpu --json $D/split_$1_$2.json > $D/split_$1_$2.log 2>&1
  echo "$1 run $2 rc=$?: $(grep -E '^[0-9]+ +(1024|8192) +split (double|mixed) +gpu .*single' $D/split_$1_$2.log | awk '{printf "%s/%s/%s %s %sx; ", $1,$2,$4,$6,$9}')"
}
for r in 1 2; do for V in T64 T128 WARP; do run $V $r; done; pack; done
echo "t=$(( $(date +%s)-t0 ))"
