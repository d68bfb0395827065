#!/usr/bin/env bash
# Call B (e666a21): rdf_pipeline_bench (README RDF tables) and Nsight Compute on the split kernel's evaluation launch (N = 8192,
# M = 268,938, tolerance 1e-7): where its time goes, with source-line stall counters.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=e666a21d831ecb0266b82dd37c8ff469cdbd9db6
B=/work/main/build-tests; R=bench/results/h100_2026-11-25_e666a21; mkdir -p $R /tmp/rdftmp
t0=$(date +%s)
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
cmd=($B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 --tolerance 1e-7 --points 8192 --min-time 0.01)
timeout 150 "$ncu" --section LaunchStats -k regex:split_kernel -c 40 "${cmd[@]}" > $R/ncu_split_list.txt 2>&1
skip=$(grep -E "^  split_kernel|Grid Size" $R/ncu_split_list.txt | grep "Grid Size" | awk '{print NR-1, $NF}' | awk '$2=="1,024"{print $1; exit}')
echo "launches: $(grep -c 'Grid Size' $R/ncu_split_list.txt), first N=8192 launch: $skip t=$(( $(date +%s)-t0 ))"
timeout 200 "$ncu" --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats   --section MemoryWorkloadAnalysis --section InstructionStats --section SourceCounters -k regex:split_kernel --launch-skip ${skip:-0} -c 1   "${cmd[@]}" > $R/ncu_split_eval_n8192.txt 2>&1
echo "ncu rc=$? t=$(( $(date +%s)-t0 ))"
grep -E "Duration|Registers Per|Achieved Occ|Issue Slots Busy|Eligible Warps|Warp Cycles Per Issued|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|L1/TEX Cache Throughput|L2 Cache Throughput|Compute \(SM\)" $R/ncu_split_eval_n8192.txt | head -20
grep -iE "stall|cycles being" $R/ncu_split_eval_n8192.txt | head -12
timeout 280 bash bench/run_bench.sh $R/rdf_pipeline -- $B/rdf_pipeline_bench --atoms 1000000 --frames 20 --traj-frames 150 --tool $B/qmmm-rdf --tmp /tmp/rdftmp --json $R/rdf_pipeline.json > /dev/null 2>&1
echo "pipe rc=$? t=$(( $(date +%s)-t0 ))"; tail -18 $R/rdf_pipeline.log
cp .devkit/callB.sh $R/call.sh
tar czf $OUT/callB.tgz $R
