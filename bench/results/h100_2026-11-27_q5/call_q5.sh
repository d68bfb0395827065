#!/usr/bin/env bash
# Call Q5: BASE (e92a0ad) against M4 (SINGLE takes 4 points a thread for n >= 512; the tree) and M6 (M4 with MIXED's
# tile kernels at 6 blocks an SM: <= 80 registers, 37.5 % occupancy instead of 25 %), field_bench --only-cuda,
# alternated; then the CUDA field tests on M4 (the tree).
set -uo pipefail
export QMMM_REQUIRE_GPU=1
B=/work/main/build-tests; D=bench/results/h100_2026-11-27_q5; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
for v in BASE M6; do mkdir -p /tmp/$v && xz -dc .devkit/vars/$v.so.xz > /tmp/$v/libqmmm_accel.so.0; done
t0=$(date +%s)
pack() { cp .devkit/callQ5.sh $D/call_q5.sh; tar czf $OUT/q5.tgz $D; }
for v in BASE M4 M6 BASE M4 M6 M4 M6; do
  if [ $v = M4 ]; then L=$LD_LIBRARY_PATH; else L=/tmp/$v:$LD_LIBRARY_PATH; fi
  LD_LIBRARY_PATH=$L timeout 60 $B/field_bench --only-cuda --cells 268782 --points 1024 8192 --min-time 1.0 --handles 0 > $D/ab_$v.log 2>&1
  echo "$v: $(grep -E 'cuda_(single|double|mixed) ' $D/ab_$v.log | awk '$2>1{printf "%s/%s %s; ", $3,$2,$6}')" | tee -a $D/ab.txt
done
pack
echo "t=$(( $(date +%s)-t0 ))"
timeout 150 ctest --test-dir $B -R "FieldCuda" --output-on-failure --timeout 140 -j 4 > $D/gpu_tests_m4.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests_m4.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|ctest rc" $D/gpu_tests_m4.txt
LD_LIBRARY_PATH=/tmp/M6:$LD_LIBRARY_PATH timeout 150 ctest --test-dir $B -R "FieldCuda" --output-on-failure --timeout 140 -j 4 > $D/gpu_tests_m6.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests_m6.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|ctest rc" $D/gpu_tests_m6.txt
pack
echo "t=$(( $(date +%s)-t0 ))"
