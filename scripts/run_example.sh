#!/usr/bin/env bash
# The main job: builds qmmm-accel and runs the VMC example, on the GPU when there is one, else on the CPU.
# Fresh Debian 12, as root: installs what is missing first.
#   bash scripts/run_example.sh [input.nml]     # default: water in the field of a second water molecule
# Builds everything `cmake --install` installs (library, Fortran module, qmmm-dcs, qmmm-rdf, qmmm_vmc), not the
# tests and benchmarks (scripts/run_tests.sh builds those). Output: first U_ES from the Fortran field example (a
# hand-checkable system), then the VMC run (blocks, energy with error bar, timing) and its JSON summary in
# $QMMM_BUILD_DIR/vmc_example.json (default build/vmc_example.json; the path is printed). Atomic units.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${QMMM_BUILD_DIR:-$root/build}
input=${1:-data/water_dimer/water_dimer_vmc.nml}

bash "$root/scripts/install_deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DQMMM_BUILD_TESTS=OFF -DQMMM_BUILD_BENCH=OFF ${QMMM_CMAKE_ARGS:-}
cmake --build "$build" -j "$(nproc)"
build=$(cd "$build" && pwd)   # absolute: the runs below start in the repository root

cd "$root"   # the example inputs name their data files relative to the repository root
echo "==== Fortran field example: U_ES along z (hartree) ===="
"$build/qmmm_field_example"
echo
echo "==== VMC: $input (backend auto: CUDA if built and a GPU is present, else CPU) ===="
"$build/vmc_driver/qmmm_vmc" "$input" "$build/vmc_example.json"
echo "JSON summary: $build/vmc_example.json"
echo "Programs: $build/qmmm-dcs, $build/qmmm-rdf, $build/vmc_driver/qmmm_vmc; install: cmake --install $build --prefix DIR"
