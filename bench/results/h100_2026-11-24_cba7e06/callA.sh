#!/usr/bin/env bash
# Call A: correctness of the GPU code at HEAD (QMMM_REQUIRE_GPU=1), sanitizers, field_bench (issue 15 table).
set -uo pipefail
B=/work/gpu-wt/build-gpu; R=/tmp/res/A; mkdir -p $R
export QMMM_REQUIRE_GPU=1
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $R/device.txt
lscpu | grep -m1 "Model name" >> $R/device.txt; nproc >> $R/device.txt
git -C /work/gpu-wt log -1 --format='%H %cd' >> $R/device.txt 2>/dev/null || cat .devkit/commit.txt >> $R/device.txt
timeout 300 ctest --test-dir $B -L gpu --output-on-failure --timeout 200 -j 4 --output-junit $R/gpu_junit.xml > $R/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $R/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run" $R/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
: > $R/sanitizers.txt
while read -r exe filter; do
  for tool in memcheck racecheck; do
    extra=(); [[ $tool == memcheck ]] && extra=(--leak-check full)
    echo "== $tool $exe ($filter)" >> $R/sanitizers.txt
    p=$(find $B -maxdepth 3 -name "$exe" -type f | head -1)
    timeout 100 "$san" --tool $tool "${extra[@]}" --error-exitcode 3 "$p" --gtest_filter="$filter" 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|Error|rror:" | head -20 >> $R/sanitizers.txt
    echo "rc=${PIPESTATUS[0]}" >> $R/sanitizers.txt
  done
done <<'LIST'
test_field_gpu FieldCuda.MatchesCpuDoubleAcrossSizes:FieldCuda.AsyncGivesSyncValues:FieldCuda.PointOnCellCentre:FieldCuda.MixedErrorsAverageOutOnWaterDimer
test_field_gpu_modes FieldCudaModes.*
test_field_split_gpu Tolerances/SplitGpu.*/0:SplitGpuEdges.*
test_dcs_gpu DcsGpu.DoubleAgreesWithCpu:DcsGpu.Errors
test_rdf_gpu RdfGpu.IdenticalSelectionEqualsCpu:RdfGpu.BadFrameInBatchAddsNothing
test_rdf_exact RdfExact.GroQuantisedEdgesOnTheGpuEqualCpu
LIST
cat $R/sanitizers.txt; echo "t=$(( $(date +%s)-t0 ))"
timeout 200 $B/field_bench --cells 268782 --points 1 1024 8192 --json $R/field.json > $R/field.txt 2>&1; echo "field_bench rc=$?" >> $R/field.txt
cat $R/field.txt | tail -40; echo "t=$(( $(date +%s)-t0 ))"
tar czf $OUT/callA.tgz -C /tmp/res A
