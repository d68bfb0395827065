#!/usr/bin/env bash
# Call H7: split kernel with resident blocks only (RES1 = the commit: SMs x blocks per SM, warps striding over the
# points) against RES0 (one block per point, as before) and RES2 (twice the resident blocks); alternated, GPU rows.
# ncu with SASS-level counters of RES1's MIXED kernel and of NOCOLS (H5's interpolation-only experiment build).
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_split_resident; mkdir -p $D
for V in RES0 RES2 NOCOLS; do mkdir -p /tmp/$V && xz -dc .devkit/vars/$V.so.xz > /tmp/$V/libqmmm_accel.so.0; done
t0=$(date +%s)
pack() { cp .devkit/callH7.sh $D/call_h7.sh; tar czf $OUT/h7.tgz $D; }
timeout 100 $B/test_field_split_gpu > $D/split_gpu_tests.txt 2>&1; echo "split gpu tests rc=$?" >> $D/split_gpu_tests.txt
grep -E "PASSED|FAILED|tests rc" $D/split_gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
run() {
  local lp=$LD_LIBRARY_PATH; [ $1 != RES1 ] && lp=/tmp/$1:$LD_LIBRARY_PATH
  LD_LIBRARY_PATH=$lp timeout 70 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1024 8192 --min-time 0.2 --no-cpu --json $D/split_$1_$2.json > $D/split_$1_$2.log 2>&1
  echo "$1 run $2 rc=$?: $(grep -E '^[0-9]+ +(1024|8192) +split (double|mixed) +gpu .*single' $D/split_$1_$2.log | awk '{printf "%s/%s/%s %s %sx; ", $1,$2,$4,$6,$9}')"
}
for r in 1 2; do for V in RES1 RES0 RES2; do run $V $r; done; pack; done
echo "t=$(( $(date +%s)-t0 ))"
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || echo /usr/local/cuda/bin/ncu)
for V in RES1 NOCOLS; do
  lp=$LD_LIBRARY_PATH; [ $V != RES1 ] && lp=/tmp/$V:$LD_LIBRARY_PATH
  LD_LIBRARY_PATH=$lp timeout 70 $ncu --set detailed --import-source no --section SourceCounters --section WarpStateStats --kernel-name-base demangled -k "regex:split_kernel<.int.1, .bool.1>" --launch-skip 1 --launch-count 1 -o $D/ncu_$V -f $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 --tolerance 1e-7 --points 8192 --min-time 0.01 --no-cpu > $D/ncu_run_$V.txt 2>&1; echo "ncu $V rc=$?"
  $ncu --import $D/ncu_$V.ncu-rep --page details > $D/ncu_split_mixed_$V.txt 2>&1
  $ncu --import $D/ncu_$V.ncu-rep --page source --csv --print-source sass > $D/ncu_split_mixed_${V}_sass.csv 2>&1
  rm -f $D/ncu_$V.ncu-rep
  grep -E "^    Duration|Achieved Occupancy|Issue Slots Busy|Warp Cycles Per Issued|Grid Size" $D/ncu_split_mixed_$V.txt | head -6
done
pack
echo "t=$(( $(date +%s)-t0 ))"
