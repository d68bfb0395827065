#!/usr/bin/env bash
# Call H2: split kernel prefetch depth A/B (U = cells a lane loads before computing; U4 is the commit, U1 = before),
# alternated in one run, GPU rows of field_split_bench; split GPU tests on U4; ncu of the MIXED kernel (U4, U1).
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_prefetch; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
for U in 1 2; do mkdir -p /tmp/U$U && xz -dc .devkit/vars/U$U.so.xz > /tmp/U$U/libqmmm_accel.so.0; done
t0=$(date +%s)
pack() { cp .devkit/callH2.sh $D/call_h2.sh; tar czf $OUT/h2.tgz $D; }
timeout 100 $B/test_field_split_gpu > $D/split_gpu_tests_u4.txt 2>&1; echo "split gpu tests rc=$?" >> $D/split_gpu_tests_u4.txt
grep -E "PASSED|FAILED|tests rc" $D/split_gpu_tests_u4.txt; echo "t=$(( $(date +%s)-t0 ))"
run() { # variant tag
  local lp=$LD_LIBRARY_PATH; [ $1 != U4 ] && lp=/tmp/$1:$LD_LIBRARY_PATH
  LD_LIBRARY_PATH=$lp timeout 80 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1024 8192 --min-time 0.2 --no-cpu --json $D/split_$1_$2.json > $D/split_$1_$2.log 2>&1
  echo "$1 run $2: $(grep -E '^[0-9]+ +8192 +split (double|mixed) +gpu .*single' $D/split_$1_$2.log | awk '{printf "%s/%s %s %sx; ", $1,$4,$6,$9}')"
}
for r in 1 2; do for U in U4 U1 U2; do run $U $r; done; pack; done
echo "t=$(( $(date +%s)-t0 ))"
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || echo /usr/local/cuda/bin/ncu)
for U in U4 U1; do
  lp=$LD_LIBRARY_PATH; [ $U != U4 ] && lp=/tmp/$U:$LD_LIBRARY_PATH
  LD_LIBRARY_PATH=$lp timeout 90 $ncu --set detailed --kernel-name-base demangled -k "regex:split_kernel<.int.1, .bool.1>" --launch-skip 1 --launch-count 1 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 --tolerance 1e-7 --points 8192 --min-time 0.01 --no-cpu > $D/ncu_mixed_$U.txt 2>&1; echo "ncu $U rc=$?"
  grep -E "^    Duration|Achieved Occupancy|Registers Per|Issue Slots Busy|Executed Instructions  |L1/TEX Hit|One or More Eligible" $D/ncu_mixed_$U.txt | head -8
done
pack
echo "t=$(( $(date +%s)-t0 ))"
