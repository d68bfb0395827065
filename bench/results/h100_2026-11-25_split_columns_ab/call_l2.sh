#!/usr/bin/env bash
# Call L2: GPU rows of d0257e3 (the column ranges refactored into split_column_bins + split_column_trim, shared with the
# CPU) against 93a0669 (OLD), alternated three times, N = 8,192.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit)
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_split_columns_ab; mkdir -p $D
mkdir -p /tmp/OLD && xz -dc .devkit/vars/OLD.so.xz > /tmp/OLD/libqmmm_accel.so.0
t0=$(date +%s)
pack() { cp .devkit/callL2.sh $D/call_l2.sh; tar czf $OUT/l2.tgz $D; }
run() {
  local lp=$LD_LIBRARY_PATH; [ $1 != NEW ] && lp=/tmp/$1:$LD_LIBRARY_PATH
  LD_LIBRARY_PATH=$lp timeout 80 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 8192 --min-time 0.3 --no-cpu --json $D/split_$1_$2.json > $D/split_$1_$2.log 2>&1
  echo "$1 run $2 rc=$?: $(grep -E '^[0-9]+ +(8192) +split (double|mixed) +gpu .*single' $D/split_$1_$2.log | awk '{printf "%s/%s/%s %s %sx; ", $1,$2,$4,$6,$9}')"
}
for r in 1 2 3; do for V in NEW OLD; do run $V $r; done; pack; done
echo "t=$(( $(date +%s)-t0 ))"
