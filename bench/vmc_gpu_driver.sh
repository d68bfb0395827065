#!/usr/bin/env bash
# vmc_gpu_driver.sh BUILD_DIR OUT_DIR -- the driver's GPU measurements in one call (a CUDA build on the GPU
# machine, from the repository root):
#  1. the VMC GPU tests (ctest -L gpu -R vmc: CUDA double/single/mixed and 'measured' vs the CPU field);
#  2. field time per sweep, 'measured' vs per-step 'batched' on the GPU (glycine, 512 walkers, 16 sweeps,
#     a local energy every 4 sweeps; asynchronous calls, exposed time): bench/vmc_field_modes.sh;
#  3. walkers on threads with one GPU: 1, 2, 4, 8, 16 threads, one process (bench/vmc_threads.sh), and the
#     same on the CPU field for comparison (1 and 16 threads, 64 walkers: the CPU field is slow);
#  4. two ranks x 8 threads sharing the node (one rank per GPU where there are two).
# Everything goes to OUT_DIR (logs, JSON, tables in summary.txt).
set -uo pipefail
build=${1:?usage: vmc_gpu_driver.sh BUILD_DIR OUT_DIR}; out=${2:?OUT_DIR}
mkdir -p "$out"
here=$(dirname "$0")
{
  echo "== 1. ctest -L gpu -R vmc"
  ctest --test-dir "$build" -L gpu -R vmc --output-on-failure > "$out/ctest_gpu_vmc.log" 2>&1
  echo "ctest status $?"; grep -E "tests passed|Failed|Skipped" "$out/ctest_gpu_vmc.log"
  echo "== 2. field modes on the GPU (exposed field time)"
  bash "$here/vmc_field_modes.sh" "$build" "$out/field_modes_gpu" cuda 512 16 4
  echo "== 3. threads x one GPU"
  bash "$here/vmc_threads.sh" "$build" "$out/threads_gpu" cuda 512 16 1 2 4 8 16
  echo "== 3b. threads, CPU field"
  bash "$here/vmc_threads.sh" "$build" "$out/threads_cpu" cpu 64 8 1 16
  echo "== 4. 2 ranks x 8 threads"
  source "$here/glycine_nml.sh"
  glycine_nml 512 10 2 8 cuda double measured 4 8 > "$out/ranks2x8.nml"
  "${QMMM_MPIEXEC:-mpiexec.mpich}" -n 2 "$build/vmc_driver/qmmm_vmc" "$out/ranks2x8.nml" "$out/ranks2x8.json" \
    > "$out/ranks2x8.log" 2>&1
  echo "status $?"; grep -E "rank [01] host|time \(s\)|energy  " "$out/ranks2x8.log"
  echo "compare its energy with threads_gpu/t16.json (same seed and walkers: the same configurations):"
  grep -h '"energy"' "$out/ranks2x8.json" "$out/threads_gpu/t16.json"
} 2>&1 | tee "$out/summary.txt"
