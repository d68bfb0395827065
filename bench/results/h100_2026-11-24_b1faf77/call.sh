#!/usr/bin/env bash
# Call X (b1faf77): GPU tests with QMMM_REQUIRE_GPU=1 and rdf_pipeline_bench (frame rows: 1 and 3 pairs alternating,
# median of 5 calls; tool rows on 150-frame DCD/XTC files, each run twice) recorded by run_bench.sh.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec QMMM_BENCH_COMMIT=b1faf77f64aa42e6de08a83533225ec397ba8cc1
B=/work/main/build-tests; R=bench/results/h100_2026-11-24_b1faf77; mkdir -p $R /tmp/rdftmp
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
timeout 240 ctest --test-dir $B -L gpu --output-on-failure --timeout 200 -j 4 > $R/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $R/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $R/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
timeout 330 bash bench/run_bench.sh $R/rdf_pipeline -- $B/rdf_pipeline_bench --atoms 1000000 --frames 20 --traj-frames 150 --tool $B/qmmm-rdf --tmp /tmp/rdftmp --json $R/rdf_pipeline.json > /dev/null 2>&1
echo "pipe rc=$? t=$(( $(date +%s)-t0 ))"; tail -18 $R/rdf_pipeline.log
cp .devkit/callX.sh $R/call.sh
tar czf $OUT/callX.tgz $R
