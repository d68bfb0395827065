#!/usr/bin/env bash
# publish_results.sh BUILD_DIR [SOURCE...] -- reruns the benchmarks whose results the generated tables read
# (bench/results/README_SOURCES.json), each through bench/common/run_bench.sh into the source's own place, so that the
# new result and its run record (NAME.meta.json, NAME.log) replace the old ones. Without SOURCE: all of them.
# Then: python3 scripts/readme_tables.py render, and commit the result files, the .meta.json and the .log files
# (git status shows exactly those; the other files a run writes are ignored by bench/results/.gitignore).
# On a machine whose copy of the tree has no (or a stale) git history, set QMMM_BENCH_COMMIT to the commit that
# was copied (bench/common/run_bench.sh). Run from the repository root, on a GPU host with the build of that commit.
# The VMC runs launch MPI with mpiexec.mpich; set QMMM_MPIEXEC where the launcher has another name. The GPU host
# needs the 16 cores that the node tables' rows name (cpu_16, gpu_16_mps, hyb_4x4: NCORES defaults to nproc).
# Sources: field_direct cube_glycine_rows cube_glycine_tiles split_glycine precision_vmc node_vmc_double
#          node_vmc_single rdf_pipeline legacy_loop legacy_loop_node split_charges forces crowd dipoles pol
#          legacy_loop_exp_soft legacy_loop_exp_hard legacy_loop_gaussian vmc_forces (about 10 minutes in all on an
#          H200 host with 16 cores before the last eight were added). pol_bench exits 1 when a solve misses its
#          tolerance: that run is recorded as failed and its table refuses it.
# forces_cpu_vm (not among the defaults) runs on the 2-core development VM with its CPU build: BUILD_DIR build.
set -uo pipefail
if [[ $# -lt 1 ]]; then
  echo "usage: publish_results.sh BUILD_DIR [SOURCE...]" >&2
  exit 2
fi
B=$(cd "$1" && pwd) || exit 2
shift
export QMMM_REQUIRE_GPU=1  # a benchmark that cannot reach the GPU fails instead of measuring the CPU
R=bench/results
CUBE=data/glycine_trimer/fragments23_density.cube.gz
run() { bash bench/common/run_bench.sh "$@"; }

publish() {
  case $1 in
    field_direct)
      run $R/field/direct -- "$B/field_bench" --cells 268782 --points 1 1024 8192 --json $R/field/direct.json ;;
    cube_glycine_rows)
      run $R/cube/glycine_rows -- env QMMM_CUDA_ROWS=1 "$B/field_bench" --only-cuda --cube $CUBE \
        --points 1024 8192 --handles 0 --min-time 0.3 --json $R/cube/glycine_rows.json ;;
    cube_glycine_tiles)
      run $R/cube/glycine_tiles -- env QMMM_CUDA_ROWS=0 "$B/field_bench" --only-cuda --cube $CUBE \
        --points 1024 8192 --handles 0 --min-time 0.3 --json $R/cube/glycine_tiles.json ;;
    split_glycine)
      run $R/split/glycine -- "$B/field_split_bench" --data data/glycine_trimer --thresholds 0.00041 0 \
        --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --json $R/split/glycine.json ;;
    precision_vmc)
      rm -rf $R/precision/vmc
      run $R/precision/vmc -- bash bench/vmc/precision_study.sh "$B" $R/precision/vmc ;;
    node_vmc_double)
      rm -rf $R/node/vmc_double
      run $R/node/vmc_double -- env PRECISION=double ONLY="cpu_16 gpu_1 hyb_1x16 hyb_2x8 hyb_4x4 gpu_16_mps hyb_2x8_mps" \
        WALKERS=1024 SWEEPS=48 RUN_TIMEOUT=200 bash bench/node/node_throughput.sh "$B" $R/node/vmc_double ;;
    node_vmc_single)
      rm -rf $R/node/vmc_single
      run $R/node/vmc_single -- env WALKERS=1024 SWEEPS=48 RUN_TIMEOUT=200 \
        bash bench/node/node_throughput.sh "$B" $R/node/vmc_single ;;
    split_charges)
      run $R/split/charges -- "$B/split_charges_bench" --json $R/split/charges.json ;;
    legacy_loop)
      run $R/field/legacy_loop -- "$B/legacy_loop_bench" --json $R/field/legacy_loop.json ;;
    legacy_loop_exp_soft | legacy_loop_exp_hard | legacy_loop_gaussian)
      local kind=${1#legacy_loop_}
      run $R/field/$1 -- "$B/legacy_loop_bench" --screening "${kind//_/-}" --charges 100 1000 10000 100000 \
        --electrons 1 22 128 --json $R/field/$1.json ;;
    legacy_loop_node)
      run $R/field/legacy_loop_node -- bash bench/field/legacy_loop_node.sh "$B" $R/field/legacy_loop_node.json ;;
    forces)
      run $R/forces/forces -- "$B/forces_bench" --cube $CUBE --json $R/forces/forces.json ;;
    forces_cpu_vm)  # the CPU of the 2-core development VM (the CI machine's kind), from the CPU build; not on the GPU host
      run $R/forces/forces_cpu_vm -- "$B/forces_bench" --cpu-only --cube $CUBE --json $R/forces/forces_cpu_vm.json ;;
    crowd)
      run $R/field/crowd -- "$B/crowd_bench" --json $R/field/crowd.json ;;
    dipoles)
      run $R/field/dipoles -- "$B/dipoles_bench" --json $R/field/dipoles.json ;;
    vmc_forces)
      rm -rf $R/vmc/forces_cost
      run $R/vmc/forces_cost -- env REPEATS=3 bash bench/vmc/vmc_forces_cost.sh "$B" $R/vmc/forces_cost cuda 128 256 4 ;;
    pol)
      run $R/pol/pol -- "$B/pol_bench" --sites 10000 100000 --backend cuda --json $R/pol/pol.json ;;
    rdf_pipeline)
      run $R/rdf/pipeline -- "$B/rdf_pipeline_bench" --atoms 1000000 --frames 20 --traj-frames 150 \
        --tool "$B/qmmm-rdf" --tmp "${TMPDIR:-/tmp}" --json $R/rdf/pipeline.json ;;
    *)
      echo "publish_results: unknown source '$1'" >&2
      return 2 ;;
  esac
}

sources=("$@")
((${#sources[@]})) || sources=(field_direct cube_glycine_rows cube_glycine_tiles split_glycine precision_vmc
                               node_vmc_double node_vmc_single rdf_pipeline legacy_loop legacy_loop_node split_charges
                               forces crowd dipoles pol legacy_loop_exp_soft legacy_loop_exp_hard legacy_loop_gaussian
                               vmc_forces)
status=0
for s in "${sources[@]}"; do
  publish "$s" > /dev/null
  rc=$?
  echo "publish_results: $s exit status $rc" >&2
  ((rc == 0)) || status=1
done
exit $status
