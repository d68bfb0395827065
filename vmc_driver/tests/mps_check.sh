#!/usr/bin/env bash
# mps_check.sh NOMPI EXE CHECK MPIEXEC IN_CPU IN_CUDA OUT RANKS -- RANKS MPI ranks sharing one
# GPU through CUDA MPS give the energies of one CPU double process (vmc_check close, 1e-10), and every rank's
# report says "mps on". Uses the daemon that already serves $CUDA_MPS_PIPE_DIRECTORY (default /tmp/nvidia-mps) if
# there is one; otherwise starts a private one (its own pipe and log directories) and stops it on exit, which
# needs root and nvidia-cuda-mps-control, as the README's MPS section says. Skips ("SKIPPED: ...") without a GPU, without MPS's control program or without root; with
# QMMM_REQUIRE_GPU set (bench/common/gpu_verify.sh) the missing GPU is a failure, and so is a daemon that will not
# start.
set -uo pipefail
nompi=$1 exe=$2 check=$3 mpiexec=${QMMM_MPIEXEC:-$4} in_cpu=$5 in_cuda=$6 out=$7 ranks=$8
require=0; [[ -n ${QMMM_REQUIRE_GPU:-} && ${QMMM_REQUIRE_GPU} != 0 ]] && require=1
skip() { if ((require)) && [[ $2 == gpu ]]; then echo "FAILED: QMMM_REQUIRE_GPU is set: $1"; exit 1; fi
         echo "SKIPPED: $1"; exit 0; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
((ngpu > 0)) || skip "no usable GPU (nvidia-smi lists none)" gpu
running=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}
started=0 dir=""
cleanup() {
  ((started)) && echo quit | nvidia-cuda-mps-control > /dev/null 2>&1
  [[ -n $dir ]] && { sleep 0.2; rm -rf "$dir"; }
}
trap cleanup EXIT
if [[ -p $running/control || -S $running/control ]]; then
  # A daemon already serves this GPU (the node's own): use it rather than start a second one beside it.
  export CUDA_MPS_PIPE_DIRECTORY=$running
  echo "using the MPS daemon already running at $running"
else
  command -v nvidia-cuda-mps-control > /dev/null || skip "MPS: no nvidia-cuda-mps-control on this machine" mps
  [[ $(id -u) == 0 ]] || skip "MPS: starting the daemon needs root here (README: CUDA MPS)" mps
  dir=$(mktemp -d /tmp/qmmm_mps_check_XXXXXX)
  export CUDA_MPS_PIPE_DIRECTORY=$dir/pipe CUDA_MPS_LOG_DIRECTORY=$dir/log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d || { echo "FAILED: nvidia-cuda-mps-control -d exited with $?"; exit 1; }
  started=1
  for ((i = 0; i < 100; i++)); do [[ -p $dir/pipe/control || -S $dir/pipe/control ]] && break; sleep 0.05; done
  [[ -p $dir/pipe/control || -S $dir/pipe/control ]] || {
    echo "FAILED: the MPS daemon made no control pipe in $dir/pipe"; ls -la "$dir/pipe"; cat "$dir"/log/* 2>/dev/null; exit 1; }
fi

rm -f "${out}_ref.json" "${out}_mps.json"
"$nompi" "$in_cpu" "${out}_ref.json" > "${out}_ref.log" 2>&1 || { echo "FAILED: CPU reference"; cat "${out}_ref.log"; exit 1; }
$mpiexec -n "$ranks" "$exe" "$in_cuda" "${out}_mps.json" > "${out}_mps.log" 2>&1
rc=$?; cat "${out}_mps.log"
((rc == 0)) || { echo "FAILED: $ranks ranks under MPS exited with $rc"; [[ -n $dir ]] && cat "$dir"/log/* 2>/dev/null; exit 1; }
"$check" close "${out}_ref.json" "${out}_mps.json" 1e-10 || { echo "FAILED: energies under MPS differ"; exit 1; }
on=$(grep -c '"mps": "on"' "${out}_mps.json")
((on == ranks)) || { echo "FAILED: $on of $ranks ranks reported 'mps on'"; exit 1; }
echo "PASSED: $ranks ranks under MPS: the CPU double energies, every rank reports mps on"
