#!/usr/bin/env bash
# Call L (7122a6d; RDF code as at b48bfa0): rdf_pipeline_bench with the tool rows on DCD and, now that the build links
# GROMACS, XTC (1M atoms, 50 frames), recorded by run_bench.sh.
set -uo pipefail
export QMMM_BENCH_COMMIT=7122a6db7446ee877234d8659cc4cd92aaf1bf33
B=/work/main/build-tests; R=bench/results/h100_2026-11-24_7122a6d; mkdir -p $R /tmp/rdftmp
t0=$(date +%s)
timeout 400 bash bench/run_bench.sh $R/rdf_pipeline -- $B/rdf_pipeline_bench --atoms 1000000 --frames 20 --traj-frames 50   --tool $B/qmmm-rdf --tmp /tmp/rdftmp --json $R/rdf_pipeline.json > /dev/null 2>&1
echo "pipe rc=$? t=$(( $(date +%s)-t0 ))"; tail -22 $R/rdf_pipeline.log
tar czf $OUT/callL.tgz $R
