# device_check.sh [BUILD_DIR] -- on the GPU machine: CPU vs CUDA (double/single/mixed), compute-sanitizer, vmc_bench. Writes to $OUT.
set -x
export PATH=/usr/local/cuda/bin:$PATH
B=${1:-build}; V=$B/vmc_driver/qmmm_vmc; C=$B/vmc_driver/vmc_check; I=vmc_driver/tests/inputs
for r in cpu_double cuda_double cuda_single cuda_mixed; do $V $I/gpu_$r.nml $OUT/gpu_$r.json > $OUT/gpu_$r.log 2>&1; echo "$r rc=$?"; done
$C close $OUT/gpu_cpu_double.json $OUT/gpu_cuda_double.json 1e-10
$C close $OUT/gpu_cpu_double.json $OUT/gpu_cuda_single.json 1e-5
$C close $OUT/gpu_cpu_double.json $OUT/gpu_cuda_mixed.json 1e-8
grep -h "time (s)\|backend" $OUT/gpu_*.log
sed -e "s/n_walkers = 256, n_equil = 20, n_blocks = 4, steps_per_block = 10/n_walkers = 16, n_equil = 2, n_blocks = 2, steps_per_block = 1/" $I/gpu_cuda_single.nml > $OUT/san.nml
timeout 200 compute-sanitizer --tool memcheck --leak-check full $V $OUT/san.nml $OUT/san.json 2>&1 | tail -4
timeout 100 compute-sanitizer --tool racecheck $V $OUT/san.nml $OUT/san2.json 2>&1 | tail -3
bash bench/vmc/vmc_bench.sh $B $OUT/bench 128 20 2>&1
