#!/usr/bin/env bash
# field_ncu.sh BUILD_DIR OUT_DIR -- Nsight Compute summaries of the field kernels, for kernel tuning: the
# throughput path (tile_kernel) at N = 1024 and 8192 in SINGLE (1), MIXED (2) and DOUBLE (0), and the latency
# path (latency_kernel) at N = 1, M = 268,782 cells. Run on the GPU machine.
set -uo pipefail
build=${1:?usage: field_ncu.sh BUILD_DIR OUT_DIR}; out=${2:?OUT_DIR}
mkdir -p "$out"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
sections=(--section SpeedOfLight --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis
          --section InstructionStats --section WarpStateStats --section SchedulerStats)
for prec in 1 2 0; do
  for n in 1024 8192; do
    "$ncu" "${sections[@]}" --kernel-name-base demangled -k "regex:tile_kernel<[^,]*${prec}," -c 1 "$build/field_bench" --only-cuda \
      --cells 268782 --points "$n" --min-time 0.01 > "$out/ncu_tile_p${prec}_n${n}.txt" 2>&1
  done
done
"$ncu" "${sections[@]}" --kernel-name-base demangled -k "regex:latency_kernel<[^>]*1>" -c 1 "$build/field_bench" --only-cuda --cells 268782 \
  --points 1 --min-time 0.01 > "$out/ncu_latency_p1_n1.txt" 2>&1
ls -la "$out"
