#!/usr/bin/env bash
# Call K (10d8a52, the final field code): every GPU test with QMMM_REQUIRE_GPU=1; the split-field sanitizer runs;
# field_bench and field_split_bench recorded by run_bench.sh (README tables).
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec QMMM_BENCH_COMMIT=10d8a52012960c79c6103be3de45fb5f2bab9bc4
B=/work/main/build-tests; R=bench/results/h100_2026-11-24_10d8a52; mkdir -p $R
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt
timeout 200 ctest --test-dir $B -L gpu --output-on-failure --timeout 150 -j 4 > $R/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $R/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|Skipped|ctest rc" $R/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
: > $R/sanitizers.txt
while read -r tool exe filter; do
  extra=(); [[ $tool == memcheck ]] && extra=(--leak-check full)
  echo "== $tool $exe ($filter)" >> $R/sanitizers.txt
  timeout 90 "$san" --tool $tool "${extra[@]}" --error-exitcode 3 "$B/$exe" --gtest_filter="$filter" 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK|LEAK SUMMARY|rror:" | head -8 >> $R/sanitizers.txt
  echo "rc=${PIPESTATUS[0]}" >> $R/sanitizers.txt
done <<'LIST'
memcheck test_field_split_gpu SplitGpuNuclei.*:SplitGpuEdges.*
LIST
cat $R/sanitizers.txt; echo "t=$(( $(date +%s)-t0 ))"
timeout 100 bash bench/run_bench.sh $R/field -- $B/field_bench --cells 268782 --points 1 1024 8192 --json $R/field.json > /dev/null 2>&1
echo "field rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "limits|cuda_" $R/field.log | head -14
timeout 250 bash bench/run_bench.sh $R/field_split_bench -- $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --json $R/field_split_bench.json > /dev/null 2>&1
echo "split rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "setup cuda|split double +gpu" $R/field_split_bench.log | head -12
tar czf $OUT/callJ.tgz $R
