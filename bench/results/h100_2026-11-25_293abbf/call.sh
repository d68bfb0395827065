#!/usr/bin/env bash
# Call E: LL-word latency paths (working tree on 308e1e1): field GPU tests, memcheck/racecheck on the modes tests,
# field_bench one-point rows with the new and the old library alternately.
set -uo pipefail
export QMMM_REQUIRE_GPU=1
B=/work/main/build-tests; D=$OUT/e; mkdir -p $D
t0=$(date +%s)
timeout 120 $B/test_field_gpu > $D/t_gpu.txt 2>&1; echo "test_field_gpu rc=$?"; grep -E "PASSED|FAILED" $D/t_gpu.txt | head
timeout 120 $B/test_field_gpu_modes > $D/t_modes.txt 2>&1; echo "modes rc=$?"; grep -E "PASSED|FAILED" $D/t_modes.txt | head
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 120 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_gpu_modes --gtest_filter='FieldCudaModes.LowLatency*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8
timeout 120 "$san" --tool racecheck --error-exitcode 3 $B/test_field_gpu_modes --gtest_filter='FieldCudaModes.LowLatencyGives*' 2>&1 | grep -E "PASSED|FAILED|RACECHECK SUMMARY|rror:" | head -8
echo "t=$(( $(date +%s)-t0 ))"
for r in 1 2; do for v in New Old; do
  LD_LIBRARY_PATH=$PWD/.devkit/var$v:${LD_LIBRARY_PATH:-} timeout 60 $B/field_bench --only-cuda --cells 268782 --points 1 --min-time 0.5 --handles 0 --json $D/f_$v$r.json > $D/f_$v$r.log 2>&1
  echo "== $v $r rc=$?"; grep -E "limits|cuda_" $D/f_$v$r.log
done; done
echo "t=$(( $(date +%s)-t0 ))"
