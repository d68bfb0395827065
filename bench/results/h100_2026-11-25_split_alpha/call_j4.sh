#!/usr/bin/env bash
# Call J4 (experiments on NEW4 = 93a0669): PROF / PROFVEC (per-call phase timers, QMMM_SPLIT_PROFILE; PROFVEC copies the
# values out with memcpy and scans for NaN apart), A5 (alpha 5 instead of 4 at tolerance 1e-7: fewer near cells, a
# finer grid) against NEW4, alternated; A5's split GPU tests.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_split_alpha; mkdir -p $D
VARS="PROF PROFVEC A5"
for V in $VARS; do mkdir -p /tmp/$V && xz -dc .devkit/vars/$V.so.xz > /tmp/$V/libqmmm_accel.so.0; done
t0=$(date +%s)
pack() { cp .devkit/callJ4.sh $D/call_j4.sh; tar czf $OUT/j4.tgz $D; }
for V in PROF PROFVEC PROF PROFVEC; do
  LD_LIBRARY_PATH=/tmp/$V:$LD_LIBRARY_PATH QMMM_SPLIT_PROFILE=1 timeout 80 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 8192 --min-time 0.3 --no-cpu > $D/prof_$V.log 2>&1
  echo "$V rc=$?"; grep EVALPROF $D/prof_$V.log | tee -a $D/evalprof.txt
done
pack
LD_LIBRARY_PATH=/tmp/A5:$LD_LIBRARY_PATH timeout 100 $B/test_field_split_gpu > $D/split_gpu_tests_A5.txt 2>&1; echo "A5 split gpu tests rc=$?" | tee -a $D/split_gpu_tests_A5.txt
grep -E "FAILED|CUDA split" $D/split_gpu_tests_A5.txt | head -8
run() {
  local lp=$LD_LIBRARY_PATH; [ $1 != NEW4 ] && lp=/tmp/$1:$LD_LIBRARY_PATH
  LD_LIBRARY_PATH=$lp timeout 80 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --no-cpu --json $D/split_$1_$2.json > $D/split_$1_$2.log 2>&1
  echo "$1 run $2 rc=$?: $(grep -E '^[0-9]+ +(8192) +split (double|mixed) +gpu .*single' $D/split_$1_$2.log | awk '{printf "%s/%s/%s %s %sx; ", $1,$2,$4,$6,$9}')"; grep "setup cuda" $D/split_$1_$2.log
}
for r in 1 2; do for V in NEW4 A5; do run $V $r; done; pack; done
echo "t=$(( $(date +%s)-t0 ))"
