#!/usr/bin/env bash
# Call Q6: NEW = 00a3341 + the low-latency kernel's chunks copied into shared memory once per launch, against PREV
# (00a3341's library): the CUDA field tests on NEW; memcheck and racecheck of the low-latency tests; one-point rows
# (field_bench --only-cuda --points 1) at 268,782 and 1,000,000 cells, alternated.
set -uo pipefail
export QMMM_REQUIRE_GPU=1
B=/work/main/build-tests; D=bench/results/h100_2026-11-27_q6; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
mkdir -p /tmp/PREV && xz -dc .devkit/vars/PREV.so.xz > /tmp/PREV/libqmmm_accel.so.0
t0=$(date +%s)
pack() { cp .devkit/callQ6.sh $D/call_q6.sh; tar czf $OUT/q6.tgz $D; }
timeout 150 ctest --test-dir $B -R "FieldCuda" --output-on-failure --timeout 140 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
{ timeout 100 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_gpu_modes --gtest_filter='FieldCudaModes.LowLatency*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8; echo "low-latency memcheck rc=${PIPESTATUS[0]}";
  timeout 100 "$san" --tool racecheck --error-exitcode 3 $B/test_field_gpu_modes --gtest_filter='FieldCudaModes.LowLatencyGives*' 2>&1 | grep -E "PASSED|FAILED|RACECHECK SUMMARY|rror:" | head -8; echo "low-latency racecheck rc=${PIPESTATUS[0]}"; } > $D/sanitizers.txt
cat $D/sanitizers.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
for v in PREV NEW PREV NEW; do
  if [ $v = NEW ]; then L=$LD_LIBRARY_PATH; else L=/tmp/$v:$LD_LIBRARY_PATH; fi
  LD_LIBRARY_PATH=$L timeout 60 $B/field_bench --only-cuda --cells 268782 1000000 --points 1 --min-time 1.0 --handles 0 > $D/one_$v.log 2>&1
  echo "$v: $(grep -E '^[0-9]+ +1 +cuda_' $D/one_$v.log | awk '{printf "%s %s %s/%s; ", $1, $3,$4,$5}')" | tee -a $D/one.txt
done
pack
echo "t=$(( $(date +%s)-t0 ))"
