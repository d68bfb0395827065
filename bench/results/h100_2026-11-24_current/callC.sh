#!/usr/bin/env bash
# Call C: GPU tests of the current tree with QMMM_REQUIRE_GPU=1 (VMC ones included), sanitizers, field_bench.
set -uo pipefail
B=/work/main/build-tests; R=/tmp/res/C; mkdir -p $R
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat .devkit/commit.txt >> $R/device.txt
timeout 300 ctest --test-dir $B -L gpu --output-on-failure --timeout 250 -j 4 > $R/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $R/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|Skipped" $R/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
: > $R/sanitizers.txt
while read -r tool exe filter; do
  extra=(); [[ $tool == memcheck ]] && extra=(--leak-check full)
  echo "== $tool $exe ($filter)" >> $R/sanitizers.txt
  timeout 100 "$san" --tool $tool "${extra[@]}" --error-exitcode 3 "$B/$exe" --gtest_filter="$filter" 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|rror:" | head -8 >> $R/sanitizers.txt
  echo "rc=${PIPESTATUS[0]}" >> $R/sanitizers.txt
done <<'LIST'
memcheck test_field_gpu_modes FieldCudaModes.*
racecheck test_field_gpu_modes FieldCudaModes.LowLatencyGivesTheLatencyPathsBits
memcheck test_rdf_exact RdfExact.GroQuantisedEdgesOnTheGpuEqualCpu
racecheck test_field_gpu FieldCuda.PointOnCellCentre:FieldCuda.AsyncGivesSyncValues
LIST
cat $R/sanitizers.txt; echo "t=$(( $(date +%s)-t0 ))"
timeout 120 $B/field_bench --cells 268782 --points 1 1024 8192 --json $R/field.json > $R/field.txt 2>&1; echo "field_bench rc=$?" >> $R/field.txt
grep -E "limits|cuda_|seed004_single_coal|16threads " $R/field.txt; echo "t=$(( $(date +%s)-t0 ))"
tar czf $OUT/callC.tgz -C /tmp/res C
