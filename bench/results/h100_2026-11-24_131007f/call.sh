#!/usr/bin/env bash
# Call N (131007f): GPU tests with QMMM_REQUIRE_GPU=1 after the RDF cell-sort fix; rdf_pipeline_bench (tool rows with the
# parallel gather) recorded by run_bench.sh.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec QMMM_BENCH_COMMIT=131007fbe5076d106cdfae0e9a0a38cac507e6bf
B=/work/main/build-tests; R=bench/results/h100_2026-11-24_131007f; mkdir -p $R /tmp/rdftmp
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
timeout 200 ctest --test-dir $B -L gpu --output-on-failure --timeout 150 -j 4 > $R/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $R/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|Skipped|ctest rc" $R/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
timeout 300 bash bench/run_bench.sh $R/rdf_pipeline -- $B/rdf_pipeline_bench --atoms 1000000 --frames 20 --traj-frames 50   --tool $B/qmmm-rdf --tmp /tmp/rdftmp --json $R/rdf_pipeline.json > /dev/null 2>&1
echo "pipe rc=$? t=$(( $(date +%s)-t0 ))"; tail -16 $R/rdf_pipeline.log
tar czf $OUT/callN.tgz $R
