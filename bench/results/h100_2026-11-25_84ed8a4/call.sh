#!/usr/bin/env bash
# Call AC (84ed8a4): GPU tests and the RDF tool/reader tests with QMMM_REQUIRE_GPU=1 with streaming stores into the tool's batches only;
# rdf_pipeline_bench recorded by run_bench.sh.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec QMMM_BENCH_COMMIT=84ed8a4880a11ff1bc6ff3e242a54652911b8af7
B=/work/main/build-tests; R=bench/results/h100_2026-11-25_84ed8a4; mkdir -p $R /tmp/rdftmp
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
timeout 200 ctest --test-dir $B -L gpu --output-on-failure --timeout 150 -j 4 > $R/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $R/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $R/gpu_tests.txt
timeout 100 ctest --test-dir $B -R "RdfTool|RdfIo|rdf_tool" --output-on-failure --timeout 60 -j 4 > $R/rdf_tool_tests.txt 2>&1; echo "ctest rc=$?" >> $R/rdf_tool_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $R/rdf_tool_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
timeout 280 bash bench/run_bench.sh $R/rdf_pipeline -- $B/rdf_pipeline_bench --atoms 1000000 --frames 20 --traj-frames 150 --tool $B/qmmm-rdf --tmp /tmp/rdftmp --json $R/rdf_pipeline.json > /dev/null 2>&1
echo "pipe rc=$? t=$(( $(date +%s)-t0 ))"; tail -18 $R/rdf_pipeline.log
cp .devkit/callAC.sh $R/call.sh
tar czf $OUT/callAC.tgz $R
