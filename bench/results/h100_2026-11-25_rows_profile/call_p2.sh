#!/usr/bin/env bash
# Call P2 (c415b1a + the setup-phase timers of /tmp/prof_patch3.py, an experiment build): where the CUDA split's setup
# goes at 1.1M cells, and ncu of the first (largest) grid row-kernel launch.
set -uo pipefail
export QMMM_MPIEXEC=mpiexec QMMM_SPLIT_PROFILE=1
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_rows_profile; mkdir -p $D
t0=$(date +%s)
pack() { cp .devkit/callP2.sh $D/call_p2.sh; tar czf $OUT/p2.tgz $D; }
for r in 1 2; do timeout 100 $B/field_split_bench --data data/glycine_trimer --thresholds 0 0.00041 --tolerance 1e-7 --points 8192 --min-time 0.05 --no-cpu > $D/prof_$r.txt 2>&1; grep -E "SETUPPROF|split setup" $D/prof_$r.txt; done
echo "t=$(( $(date +%s)-t0 ))"
pack
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || echo /usr/local/cuda/bin/ncu)
timeout 200 $ncu --set full --import-source yes -k regex:grid_coulomb --launch-count 1 -o $D/ncu_grid_rows_1p1M $B/field_split_bench --data data/glycine_trimer --thresholds 0 --tolerance 1e-7 --points 8192 --min-time 0.01 --no-cpu > $D/ncu_run.txt 2>&1; echo "ncu rc=$?"
timeout 60 $ncu --import $D/ncu_grid_rows_1p1M.ncu-rep --print-details all > $D/ncu_grid_rows_1p1M.txt 2>&1
grep -E "grid_coulomb|^    Duration|Achieved Occupancy|Registers Per|FP64|Issue Slots|Compute \(SM\)|Stall|Warp Cycles Per Issued" $D/ncu_grid_rows_1p1M.txt | head -24
timeout 60 $ncu --import $D/ncu_grid_rows_1p1M.ncu-rep --page source --csv --print-source sass > $D/ncu_grid_rows_sass.csv 2>&1
rm -f $D/ncu_grid_rows_1p1M.ncu-rep
pack
echo "t=$(( $(date +%s)-t0 ))"
