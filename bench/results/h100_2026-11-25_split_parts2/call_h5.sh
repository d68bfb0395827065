#!/usr/bin/env bash
# Call H5 (NOLOOP and NOCOLS in evaluation only; create as the commit): where the split kernel's time goes, by removing parts (experiment builds of 6d-commit HEAD, not kept):
# NOLOOP (no pair loop), NOINTERP (no interpolation), NOCOLS (no column ranges and no pair loop); GPU rows, N = 8192.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_split_parts2; mkdir -p $D
for V in NOLOOP NOINTERP NOCOLS; do mkdir -p /tmp/$V && xz -dc .devkit/vars/$V.so.xz > /tmp/$V/libqmmm_accel.so.0; done
t0=$(date +%s)
pack() { cp .devkit/callH5.sh $D/call_h5.sh; tar czf $OUT/h5.tgz $D; }
run() {
  local lp=$LD_LIBRARY_PATH; [ $1 != FULL ] && lp=/tmp/$1:$LD_LIBRARY_PATH
  LD_LIBRARY_PATH=$lp timeout 60 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 8192 --min-time 0.2 --no-cpu --json $D/split_$1_$2.json > $D/split_$1_$2.log 2>&1
  echo "$1 run $2 rc=$?: $(grep -E '^[0-9]+ +8192 +(split (double|mixed)|direct single) +gpu' $D/split_$1_$2.log | awk '{printf "%s/%s %s; ", $1,$4,$6}')"
}
for r in 1 2; do for V in FULL NOLOOP NOCOLS; do run $V $r; done; pack; done
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || echo /usr/local/cuda/bin/ncu)
for V in FULL NOLOOP NOCOLS; do
  lp=$LD_LIBRARY_PATH; [ $V != FULL ] && lp=/tmp/$V:$LD_LIBRARY_PATH
  LD_LIBRARY_PATH=$lp timeout 60 $ncu --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --kernel-name-base demangled -k "regex:split_kernel<.int.1, .bool.1>" --launch-skip 1 --launch-count 1 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 --tolerance 1e-7 --points 8192 --min-time 0.01 --no-cpu > $D/ncu_mixed_$V.txt 2>&1; echo "ncu $V rc=$?"
  grep -E "^    Duration|Achieved Occupancy|Issue Slots Busy|Warp Cycles Per Issued|Eligible Warps" $D/ncu_mixed_$V.txt | head -6
done
pack
echo "t=$(( $(date +%s)-t0 ))"
