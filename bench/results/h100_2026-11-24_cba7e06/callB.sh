#!/usr/bin/env bash
# Call B: ncu summaries of the field kernels, CPU field per ISA on the host, split bench, RDF benches.
set -uo pipefail
B=/work/gpu-wt/build-gpu; R=/tmp/res/B; mkdir -p $R
export QMMM_REQUIRE_GPU=1
t0=$(date +%s)
timeout 170 bash bench/profile/field_ncu.sh $B $R/ncu > $R/ncu.log 2>&1; echo "ncu rc=$? t=$(( $(date +%s)-t0 ))"
grep -h "Duration\|Registers Per\|Achieved Occupancy\|Issue Slots Busy\|Executed Ipc A" $R/ncu/*.txt | head -40
timeout 120 bash bench/field_cpu_isa.sh $B $R/cpu_isa > $R/cpu_isa.log 2>&1; echo "cpu_isa rc=$? t=$(( $(date +%s)-t0 ))"; tail -15 $R/cpu_isa.log
timeout 170 $B/field_split_bench --json $R/field_split_bench.json > $R/field_split_bench.txt 2>&1; echo "split rc=$? t=$(( $(date +%s)-t0 ))"; tail -30 $R/field_split_bench.txt
timeout 100 $B/rdf_bench --sizes 100000,400000,1000000 --frames 5 --json $R/rdf_bench.json > $R/rdf_bench.txt 2>&1; echo "rdf rc=$? t=$(( $(date +%s)-t0 ))"; tail -15 $R/rdf_bench.txt
mkdir -p /tmp/rdftmp; timeout 120 $B/rdf_pipeline_bench --atoms 1000000 --frames 20 --traj-frames 50 --tool $B/qmmm-rdf --tmp /tmp/rdftmp --json $R/pipeline.json > $R/pipeline.txt 2>&1; echo "pipe rc=$? t=$(( $(date +%s)-t0 ))"; tail -20 $R/pipeline.txt
tar czf $OUT/callB.tgz -C /tmp/res B
