#!/usr/bin/env bash
# Call Y (0a2eadb): GPU tests with QMMM_REQUIRE_GPU=1; compute-sanitizer on the RDF GPU tests (memcheck with leak check on
# all, racecheck and synccheck on the cell-list and crowded-cell tests); rdf_bench (as bench/rdf_gpu_check.sh runs it,
# CPU rows off) and rdf_pipeline_bench recorded by run_bench.sh.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec QMMM_BENCH_COMMIT=0a2eadb202e9abdce3f898fa592d8cd7cdcff674
B=/work/main/build-tests; R=bench/results/h100_2026-11-25_0a2eadb; mkdir -p $R /tmp/rdftmp
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
timeout 200 ctest --test-dir $B -L gpu --output-on-failure --timeout 150 -j 4 > $R/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $R/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $R/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
while read -r tool exe filter; do
  extra=(); [[ $tool == memcheck ]] && extra=(--leak-check full)
  echo "== $tool $exe ($filter)"
  timeout 100 "$san" --tool $tool "${extra[@]}" --error-exitcode 3 "$B/$exe" --gtest_filter="$filter" 2>&1 | grep -E "PASSED|FAILED|SKIPPED|ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|rror:" | head -8
  echo "rc=${PIPESTATUS[0]}"
done <<'LIST' | tee $R/sanitizers.txt
memcheck test_rdf_gpu RdfGpu.*
racecheck test_rdf_gpu RdfGpu.DisjointAndOverlappingEqualCpu:RdfGpu.CrowdedCellEqualsCpu
synccheck test_rdf_gpu RdfGpu.IdenticalSelectionEqualsCpu:RdfGpu.CrowdedCellEqualsCpu
memcheck test_rdf_exact RdfExact.*
LIST
echo "t=$(( $(date +%s)-t0 ))"
timeout 150 bash bench/run_bench.sh $R/rdf_bench -- $B/rdf_bench --sizes 100000,400000,1000000 --frames 5 --no-cpu --json $R/rdf_bench.json > /dev/null 2>&1
echo "rdf_bench rc=$? t=$(( $(date +%s)-t0 ))"; head -16 $R/rdf_bench.log
timeout 280 bash bench/run_bench.sh $R/rdf_pipeline -- $B/rdf_pipeline_bench --atoms 1000000 --frames 20 --traj-frames 150 --tool $B/qmmm-rdf --tmp /tmp/rdftmp --json $R/rdf_pipeline.json > /dev/null 2>&1
echo "pipe rc=$? t=$(( $(date +%s)-t0 ))"; tail -18 $R/rdf_pipeline.log
cp .devkit/callY.sh $R/call.sh
tar czf $OUT/callY.tgz $R
