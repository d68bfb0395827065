#!/usr/bin/env bash
# Call M: vmc_mpi_gpu_mps both ways: a private daemon started by the test, then a daemon already running at the
# default pipe directory (started here as the node's own, stopped after).
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; R=/tmp/res/M; mkdir -p $R
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
ctest --test-dir $B -R vmc_mpi_gpu_mps -V > $R/private.txt 2>&1; echo "private rc=$?"
grep -E "using the MPS|PASSED:|FAILED|Passed|Failed|Skipped" $R/private.txt | head -5
mkdir -p /tmp/nvidia-mps /tmp/nvidia-log
CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps CUDA_MPS_LOG_DIRECTORY=/tmp/nvidia-log nvidia-cuda-mps-control -d; sleep 0.5; ls -la /tmp/nvidia-mps | head -5
ctest --test-dir $B -R vmc_mpi_gpu_mps -V > $R/running.txt 2>&1; echo "running rc=$?"
grep -E "using the MPS|PASSED:|FAILED|Passed|Failed|Skipped" $R/running.txt | head -5
echo quit | CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps nvidia-cuda-mps-control
tar czf $OUT/callM.tgz -C /tmp/res M
