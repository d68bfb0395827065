#!/usr/bin/env bash
# Call V (d11f7ac): every test (all labels but memcheck: no valgrind there) with QMMM_REQUIRE_GPU=1, and
# rdf_pipeline_bench (frame rows: median of 3 calls; tool rows on 150-frame DCD/XTC files, each run twice) recorded
# by run_bench.sh.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec QMMM_BENCH_COMMIT=d11f7ac6e25519eae45894e0071b63aba1aeb28e
B=/work/main/build-tests; R=bench/results/h100_2026-11-24_d11f7ac; mkdir -p $R /tmp/rdftmp
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
timeout 290 ctest --test-dir $B -LE memcheck --timeout 250 -j 8 > $R/all_tests.txt 2>&1; echo "ctest rc=$?" >> $R/all_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $R/all_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
timeout 290 bash bench/run_bench.sh $R/rdf_pipeline -- $B/rdf_pipeline_bench --atoms 1000000 --frames 20 --traj-frames 150 --tool $B/qmmm-rdf --tmp /tmp/rdftmp --json $R/rdf_pipeline.json > /dev/null 2>&1
echo "pipe rc=$? t=$(( $(date +%s)-t0 ))"; tail -18 $R/rdf_pipeline.log
cp .devkit/callV.sh $R/call.sh
tar czf $OUT/callV.tgz $R
