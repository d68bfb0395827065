#!/usr/bin/env bash
# gpu_verify.sh BUILD_DIR OUT_DIR -- what a change to GPU code must pass on a GPU machine before it is called
# done, in one call: the gpu-labelled tests, compute-sanitizer memcheck (leaks too) and racecheck on the
# field (direct and split), DCS and RDF (exact edges too) kernels, the field benchmark (latency and throughput,
# all precisions, seed 004's algorithm and the CPU in the same run) and the VMC benchmark (seed 004's Table 4).
# Outputs in OUT_DIR:
# gpu_tests.txt, sanitizers.txt, field.txt/.json, vmc_bench.md/.json. Run from the repository root; the
# device machine of this project needs `bash .devkit/run.sh` around it (../shared/tools/devkit.sh).
set -uo pipefail
build=${1:?usage: gpu_verify.sh BUILD_DIR OUT_DIR}; out=${2:?OUT_DIR}
# On the GPU machine a GPU test that would skip is a failure, with the reason: the gtests' QMMM_REQUIRE_GPU_OR_SKIP
# (tests/core/gpu_test.hpp) and the VMC checks' vmc_gpu_skip_or_fail (vmc_driver/tests/gpu_skip.cmake).
export QMMM_REQUIRE_GPU=1
mkdir -p "$out"
status=0
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$out/device.txt"

ctest --test-dir "$build" -L gpu --output-on-failure --timeout 900 > "$out/gpu_tests.txt" 2>&1 || status=1
grep -E "tests passed|tests failed|FAILED|mean error|max rel" "$out/gpu_tests.txt"

san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
: > "$out/sanitizers.txt"
while read -r exe filter; do
  for tool in memcheck racecheck; do
    extra=(); [[ $tool == memcheck ]] && extra=(--leak-check full)
    echo "== $tool $exe ($filter)" >> "$out/sanitizers.txt"
    path=$(find "$build" -maxdepth 2 -name "$exe" -type f | head -1)
    "$san" --tool "$tool" "${extra[@]}" --error-exitcode 3 "$path" --gtest_filter="$filter" \
      2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" >> "$out/sanitizers.txt" || status=1
  done
done <<'LIST'
test_field_gpu FieldCuda.MatchesCpuDoubleAcrossSizes:FieldCuda.AsyncGivesSyncValues:FieldCuda.PointOnCellCentre:FieldCuda.MixedErrorsAverageOutOnWaterDimer
test_dcs_gpu DcsGpu.DoubleAgreesWithCpu:DcsGpu.Errors
test_rdf_gpu RdfGpu.IdenticalSelectionEqualsCpu:RdfGpu.BadFrameInBatchAddsNothing
test_rdf_exact_gpu RdfExact.GroQuantisedEdgesOnTheGpuEqualCpu
test_field_split_gpu Tolerances/SplitGpu.*/0:SplitGpuEdges.*
test_field_walkers_gpu FieldWalkers.DeviceResidentMatchesHostCalls:FieldWalkers.ManyThreadsOwnAndSharedHandles
LIST
cat "$out/sanitizers.txt"

"$build/field_bench" --cells 268782 --points 1 1024 8192 --json "$out/field.json" > "$out/field.txt" 2>&1 || status=1
grep -E "cuda_|seed004_single_coalesced" "$out/field.txt"
bash "$(dirname "$0")/../vmc/vmc_bench.sh" "$build" "$out" 512 20 > "$out/vmc_bench.log" 2>&1 || status=1
tail -12 "$out/vmc_bench.log"
exit $status
