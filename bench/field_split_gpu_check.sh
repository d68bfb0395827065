#!/usr/bin/env bash
# field_split_gpu_check.sh BUILD_DIR OUT_DIR -- QMMM_METHOD_SPLIT on a GPU machine, in one call: the split's
# GPU tests (QMMM_REQUIRE_GPU=1: a skip is a failure), compute-sanitizer memcheck and racecheck on them, the split's CPU
# tests (for their times on that host), and field_split_bench (setup, microseconds per point for N = 1, 1024, 8192 on
# one core, all cores and the GPU, beside the direct sum of the same run; both glycine environments). Outputs in
# OUT_DIR: device.txt, split_gpu_tests.txt, split_sanitizers.txt, split_cpu_tests.txt, field_split_bench.txt/.json,
# split_glycine_esp.json. BUILD_DIR: a CUDA build (QMMM_CUDA=ON) with tests and benchmarks. Run from the repository
# root.
set -uo pipefail
build=${1:?usage: field_split_gpu_check.sh BUILD_DIR OUT_DIR}; out=${2:?OUT_DIR}
build=$(cd "$build" && pwd); mkdir -p "$out"; out=$(cd "$out" && pwd)
export QMMM_REQUIRE_GPU=1
status=0
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$out/device.txt"
nproc | sed 's/^/host cores: /' | tee -a "$out/device.txt"

"$build/test_field_split_gpu" > "$out/split_gpu_tests.txt" 2>&1 || status=1
grep -E "CUDA split|PASSED|FAILED|Failure" "$out/split_gpu_tests.txt"

san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
: > "$out/split_sanitizers.txt"
for tool in memcheck racecheck; do
  extra=(); [[ $tool == memcheck ]] && extra=(--leak-check full)
  echo "== $tool test_field_split_gpu" >> "$out/split_sanitizers.txt"
  "$san" --tool "$tool" "${extra[@]}" --error-exitcode 3 "$build/test_field_split_gpu" \
    --gtest_filter='Tolerances/SplitGpu.*/0:SplitGpuEdges.*' 2>&1 |
    grep -E "PASSED|FAILED|ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" >> "$out/split_sanitizers.txt" || status=1
done
cat "$out/split_sanitizers.txt"

# CPU tests on this host (times of the setup on its cores); the glycine one writes split_glycine_esp.json here.
(cd "$out" && "$build/test_field_split" > split_cpu_tests.txt 2>&1 && "$build/test_field_split_glycine" >> split_cpu_tests.txt 2>&1) || status=1
grep -E "water dimer|glycine|max \|U_ES|PASSED|FAILED" "$out/split_cpu_tests.txt"

"$build/field_split_bench" --json "$out/field_split_bench.json" > "$out/field_split_bench.txt" 2>&1 || status=1
cat "$out/field_split_bench.txt"
exit $status
