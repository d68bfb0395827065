#!/usr/bin/env bash
# Call A (c5a6a1c): every GPU test with QMMM_REQUIRE_GPU=1 (RDF page-locked frames everywhere, split kernel with 4 interleaved
# recurrences per lane); RDF tool tests; sanitizers on RdfGpu/RdfExact and the split GPU tests; field_split_bench (README).
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec QMMM_BENCH_COMMIT=c5a6a1c478b7594a0485003d5387f2fa00d8b3e3
B=/work/main/build-tests; R=bench/results/h100_2026-11-25_c5a6a1c; mkdir -p $R
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
timeout 200 ctest --test-dir $B -L gpu --output-on-failure --timeout 150 -j 4 > $R/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $R/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $R/gpu_tests.txt
timeout 80 ctest --test-dir $B -R "RdfTool|RdfIo|rdf_tool" --output-on-failure --timeout 60 -j 4 > $R/rdf_tool_tests.txt 2>&1; echo "ctest rc=$?" >> $R/rdf_tool_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $R/rdf_tool_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
timeout 250 bash bench/run_bench.sh $R/field_split_bench -- $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --json $R/field_split_bench.json > /dev/null 2>&1
echo "split rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "setup|split double|direct single +gpu" $R/field_split_bench.log | head -30
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
: > $R/sanitizers.txt
while read -r tool exe filter; do
  [ $(( $(date +%s)-t0 )) -gt 520 ] && { echo "skipped (time): $tool $exe $filter" >> $R/sanitizers.txt; continue; }
  extra=(); [[ $tool == memcheck ]] && extra=(--leak-check full)
  echo "== $tool $exe ($filter)" >> $R/sanitizers.txt
  timeout 60 "$san" --tool $tool "${extra[@]}" --error-exitcode 3 "$B/$exe" --gtest_filter="$filter" 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK|LEAK SUMMARY|rror:" | head -8 >> $R/sanitizers.txt
  echo "rc=${PIPESTATUS[0]}" >> $R/sanitizers.txt
done <<'LIST'
memcheck test_rdf_gpu RdfGpu.*
memcheck test_rdf_exact RdfExact.*
memcheck test_field_split_gpu SplitGpuNuclei.*:SplitGpuEdges.*
racecheck test_rdf_gpu RdfGpu.DisjointAndOverlappingEqualCpu:RdfGpu.CrowdedCellEqualsCpu
synccheck test_rdf_gpu RdfGpu.IdenticalSelectionEqualsCpu:RdfGpu.CrowdedCellEqualsCpu
LIST
cat $R/sanitizers.txt; echo "t=$(( $(date +%s)-t0 ))"
cp .devkit/callA.sh $R/call.sh
tar czf $OUT/callA.tgz $R
