#!/usr/bin/env bash
# Call T (4b0365c): all GPU tests with QMMM_REQUIRE_GPU=1 after the device-sorted RDF cell lists; rdf_pipeline_bench
# (frame rows: median of 3 calls; tool rows on 150-frame DCD/XTC files) recorded by run_bench.sh.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec QMMM_BENCH_COMMIT=4b0365cd34800bc84d1175ee2b6750c63bc11a7a
B=/work/main/build-tests; R=bench/results/h100_2026-11-24_4b0365c; mkdir -p $R /tmp/rdftmp
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
timeout 240 ctest --test-dir $B -L gpu --output-on-failure --timeout 200 -j 4 > $R/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $R/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $R/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
timeout 330 bash bench/run_bench.sh $R/rdf_pipeline -- $B/rdf_pipeline_bench --atoms 1000000 --frames 20 --traj-frames 150 --tool $B/qmmm-rdf --tmp /tmp/rdftmp --json $R/rdf_pipeline.json > /dev/null 2>&1
echo "pipe rc=$? t=$(( $(date +%s)-t0 ))"; tail -18 $R/rdf_pipeline.log
cp .devkit/callT.sh $R/call.sh
tar czf $OUT/callT.tgz $R
