#!/usr/bin/env bash
# Call H: Nsight Compute on the split kernel of an evaluation (N = 8192, glycine 268,938 cells, tolerance 1e-7):
# one profile per launch configuration, so the setup's launches (other grid sizes) and the evaluation's separate.
set -uo pipefail
B=/work/main/build-tests; R=/tmp/res/H; mkdir -p $R
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout 300 "$ncu" --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats \
  --section MemoryWorkloadAnalysis --section InstructionStats --section SourceCounters \
  -k regex:split_kernel --filter-mode per-launch-config -c 8 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 \
  --tolerance 1e-7 --points 8192 1 --min-time 0.02 > $R/ncu_split_eval.txt 2>&1
echo "rc=$?"
grep -E "split_kernel|Grid Size|Duration|Registers Per|Achieved Occ|Issue Slots Busy|Executed Ipc A|L1/TEX Hit|L2 Hit|DRAM Throughput|Memory Throughput" $R/ncu_split_eval.txt | head -80
tar czf $OUT/callH.tgz -C /tmp/res H
