#!/usr/bin/env bash
# Call J: one-point calls, LLP (this build: every chunk's partial goes to the host as two LL words, the host adds
# them in chunk order: no fence, atomic or last block on the GPU) against LB (d2b6350: the last block sums on the
# GPU), alternated; field GPU tests and sanitizers on LLP.
set -uo pipefail
export QMMM_REQUIRE_GPU=1
B=/work/main/build-tests; D=$OUT/j; mkdir -p $D
t0=$(date +%s)
mkdir -p /tmp/LB; xz -dc .devkit/vars/libLB.so.xz > /tmp/LB/libqmmm_accel.so.0
timeout 120 $B/test_field_gpu > $D/t_gpu.txt 2>&1; echo "test_field_gpu rc=$?"; grep -E "PASSED|FAILED" $D/t_gpu.txt | head
timeout 120 $B/test_field_gpu_modes > $D/t_modes.txt 2>&1; echo "modes rc=$?"; grep -E "PASSED|FAILED" $D/t_modes.txt | head
for r in 1 2 3; do for v in LLP LB; do
  if [ $v = LLP ]; then L=${LD_LIBRARY_PATH:-}; else L=/tmp/$v:${LD_LIBRARY_PATH:-}; fi
  LD_LIBRARY_PATH=$L timeout 60 $B/field_bench --only-cuda --cells 268782 --points 1 --min-time 0.5 --handles 0 --json $D/f_$v$r.json > $D/f_$v$r.log 2>&1
  echo "== $v $r rc=$?"; grep -E "limits|cuda_" $D/f_$v$r.log | sed 's/limits of this GPU.*floor: //'
done; done
echo "t=$(( $(date +%s)-t0 ))"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 120 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_gpu_modes --gtest_filter='FieldCudaModes.LowLatency*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8
timeout 100 "$san" --tool racecheck --error-exitcode 3 $B/test_field_gpu_modes --gtest_filter='FieldCudaModes.LowLatencyGives*' 2>&1 | grep -E "PASSED|FAILED|RACECHECK SUMMARY|rror:" | head -8
echo "t=$(( $(date +%s)-t0 ))"
