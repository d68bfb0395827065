#!/usr/bin/env bash
# Call Q1 (e92a0ad, no code change): why the SINGLE tile kernel issues at ~64 % -- ncu (detailed + warp state +
# SASS stall sampling, clocks not locked) of tile_kernel<SINGLE,8,32> at N = 8,192, <SINGLE,4,32> at N = 1,024 and
# <DOUBLE,4,32> at N = 8,192; the SM clock under load (nvidia-smi every 100 ms); tile shapes by QMMM_CUDA_TILE.
set -uo pipefail
B=/work/main/build-tests; D=bench/results/h100_2026-11-27_q1; mkdir -p $D
t0=$(date +%s)
pack() { cp .devkit/callQ1.sh $D/call_q1.sh; tar czf $OUT/q1.tgz $D; }
nvidia-smi -q -d CLOCK,POWER,PERFORMANCE > $D/smi_before.txt 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.max.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 100 > $D/clock_trace.csv 2>&1 &
SMI=$!
for cfg in 8032 4064 4032 8032; do
  QMMM_CUDA_TILE=$cfg timeout 60 $B/field_bench --only-cuda --cells 268782 --points 1024 8192 --min-time 1.0 --handles 0 > $D/tile_$cfg.log 2>&1
  echo "cfg $cfg: $(grep -E 'cuda_(single|double|mixed) ' $D/tile_$cfg.log | awk '$2>1{printf "%s/%s %s; ", $3,$2,$6}')" | tee -a $D/tiles.txt
  date +%H:%M:%S.%N >> $D/tiles.txt
done
kill $SMI
pack
echo "t=$(( $(date +%s)-t0 ))"
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || echo /usr/local/cuda/bin/ncu)
prof() {  # tag regex n
  timeout 90 $ncu --clock-control none --set detailed --import-source no --section SourceCounters --section WarpStateStats --section InstructionStats --kernel-name-base demangled -k "$2" --launch-skip 2 --launch-count 1 -o $D/ncu_$1 -f $B/field_bench --only-cuda --cells 268782 --points $3 --min-time 0.05 --handles 0 > $D/ncu_run_$1.txt 2>&1; echo "ncu $1 rc=$?"
  $ncu --import $D/ncu_$1.ncu-rep --page details > $D/ncu_$1.txt 2>&1
  $ncu --import $D/ncu_$1.ncu-rep --page source --csv --print-source sass > $D/ncu_$1_sass.csv 2>&1
  $ncu --import $D/ncu_$1.ncu-rep --page raw --csv > $D/ncu_$1_raw.csv 2>&1
  rm -f $D/ncu_$1.ncu-rep
  grep -E "SM Frequency|^    Duration|Achieved Occupancy|Issue Slots Busy|Warp Cycles Per Issued|Executed Ipc A|No Eligible" $D/ncu_$1.txt | head -8
}
prof single_p8_n8192 "regex:tile_kernel<.int.1, .int.8," 8192
pack
prof single_p4_n1024 "regex:tile_kernel<.int.1, .int.4," 1024
pack
prof double_p4_n8192 "regex:tile_kernel<.int.0, .int.4," 8192
pack
echo "t=$(( $(date +%s)-t0 ))"
