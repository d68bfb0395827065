#!/usr/bin/env bash
# Call M7 (issue 19's runs 2-4 where one call allows; see .devkit/commit): on the 4-GPU machine, dcs_bench (one GPU
# against four, single precision, 100,000 and 200,000 atoms, 256^3 and 512^3), rdf_bench (brute and cell-list
# workloads, one GPU against four), and every GPU test with QMMM_REQUIRE_GPU=1.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/x4_2026-11-27_$(cat .devkit/commit); mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callM7.sh $D/call_m7.sh; tar czf $OUT/m7.tgz $D; }
nvidia-smi -L | tee $D/gpus.txt
timeout 150 bash bench/run_bench.sh $D/dcs_bench -- $B/dcs_bench --atoms 100000 200000 --sizes 256 512 --devices 0 1 2 3 --precisions single --repeat 3 --json $D/dcs_bench.json > /dev/null 2>&1
echo "dcs rc=$? t=$(( $(date +%s)-t0 ))"; tail -25 $D/dcs_bench.log
pack
timeout 120 bash bench/run_bench.sh $D/rdf_bench -- $B/rdf_bench --sizes 100000 400000 1000000 --workloads brute cells --devices 0 1 2 3 --frames 5 --no-cpu --json $D/rdf_bench.json > /dev/null 2>&1
echo "rdf rc=$? t=$(( $(date +%s)-t0 ))"; tail -25 $D/rdf_bench.log
pack
left=$(( 380 - ($(date +%s)-t0) )); [ $left -gt 60 ] && { timeout $left ctest --test-dir $B -L gpu --output-on-failure --timeout $left -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt; }
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
