#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14, ASan + UBSan) and runs each one from its committed corpus with a fixed
# seed, then replays the committed regression inputs. Exit status non-zero on any crash, leak, sanitizer report,
# broken invariant, timeout or build failure. See tests/fuzz/README.md.
#   bash tests/fuzz/run_fuzz.sh                     # every target, a fixed number of inputs each (CI)
#   bash tests/fuzz/run_fuzz.sh --runs 100000       # every target this many inputs
#   bash tests/fuzz/run_fuzz.sh --seconds 600       # time-boxed: the long run (10 minutes per target), not CI
#   bash tests/fuzz/run_fuzz.sh --target fuzz_cube  # one target (repeatable)
# Options: --runs N, --seconds N, --target NAME, --jobs N (targets at a time; default: the core count),
# --build-dir DIR (default: build-fuzz in the repository; QMMM_FUZZ_BUILD_DIR also sets it), --no-build.
# A fixed count from a fixed seed tries the same inputs on a quiet machine and a loaded one, so CI's verdict does
# not depend on the machine's speed; a time box tries more inputs where the machine is faster.
# New corpus entries and crash inputs go to BUILD/fuzz-work/, never into the repository.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
src=$root/tests/fuzz
build=${QMMM_FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=0
runs=0
parallel=$(nproc)
do_build=1
targets=()
while (($#)); do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --target) targets+=("$2"); shift 2 ;;
    --jobs) parallel=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "run_fuzz: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $seconds =~ ^[0-9]+$ ]] || { echo "run_fuzz: --seconds needs a whole number" >&2; exit 2; }
[[ $runs =~ ^[0-9]+$ ]] || { echo "run_fuzz: --runs needs a whole number" >&2; exit 2; }
((seconds > 0 && runs > 0)) && { echo "run_fuzz: give --runs or --seconds, not both" >&2; exit 2; }
[[ $parallel =~ ^[0-9]+$ && $parallel -ge 1 ]] || { echo "run_fuzz: --jobs needs a whole number >= 1" >&2; exit 2; }

# ---- tools: clang-14 with libFuzzer and the sanitizer runtimes, libomp for OpenMP under clang ----
pkgs=(clang-14 libfuzzer-14-dev libclang-rt-14-dev libomp-14-dev cmake make gfortran zlib1g-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "run_fuzz: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# ---- the fuzz build: only the fuzz targets (the library and readers instrumented) ----
if ((do_build)); then
  CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQMMM_FUZZ=ON \
    -DQMMM_CUDA=OFF -DQMMM_MPI=OFF -DQMMM_GROMACS=OFF -DQMMM_BUILD_TESTS=OFF -DQMMM_BUILD_BENCH=OFF >"$build.configure.log" 2>&1 ||
    { cat "$build.configure.log"; echo "run_fuzz: configure failed" >&2; exit 1; }
  rm -f "$build.configure.log"
  cmake --build "$build" --target qmmm_fuzz -j "$parallel" >"$build/fuzz-build.log" 2>&1 ||
    { tail -50 "$build/fuzz-build.log"; echo "run_fuzz: build failed (log: $build/fuzz-build.log)" >&2; exit 1; }
fi
bin=$build/tests/fuzz
if ((${#targets[@]} == 0)); then
  for f in "$bin"/fuzz_*; do [[ -x $f && ! -d $f ]] && targets+=("$(basename "$f")"); done
fi
((${#targets[@]})) || { echo "run_fuzz: no fuzz targets in $bin" >&2; exit 1; }

work=$build/fuzz-work
mkdir -p "$work"
export OMP_NUM_THREADS=1
unset QMMM_BACKEND QMMM_DEVICE QMMM_FUZZ_TRACE

# CI's default: inputs per target, about twice what each ran in 5 s on a loaded 2-core Debian 12 machine under ASan +
# UBSan (so ~3-10 s each; the targets' speeds differ 100-fold: the tool command lines write files, the selection
# parser does not). The committed corpus is replayed first and counts among them.
declare -A default_runs=(
  [fuzz_capi]=3000 [fuzz_cube]=28000 [fuzz_dcs_io]=19000 [fuzz_magnitudes]=1300 [fuzz_pot]=9000
  [fuzz_rdf_io]=15000 [fuzz_rdf_select]=56000 [fuzz_tool_cli]=600 [fuzz_vmc_readers]=2500
)

# One target: fuzz from the committed corpus (fixed seed), then replay its regression inputs.
run_one() {
  local t=$1 log=$work/$1.log
  local corpus=$work/corpus/$t dict=$src/dict/$t.dict
  rm -rf "$corpus" && mkdir -p "$corpus" "$work/artifacts"
  local args=(-seed=1 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512
              -artifact_prefix="$work/artifacts/$t-" -print_final_stats=1)
  local budget
  if ((seconds > 0)); then
    args+=(-max_total_time="$seconds"); budget="in $seconds s"
  else
    local n=$runs
    ((n > 0)) || n=${default_runs[$t]:-10000}
    args+=(-runs="$n"); budget="of $n (fixed seed)"
  fi
  [[ -f $dict ]] && args+=(-dict="$dict")
  # The Fortran readers have no edge coverage (gfortran): their comparisons guide the fuzzer (CMakeLists.txt).
  [[ $t == fuzz_vmc_readers ]] && args+=(-use_value_profile=1)
  local seeds=()
  [[ -d $src/corpus/$t ]] && seeds+=("$src/corpus/$t")
  if ! "$bin/$t" "${args[@]}" "$corpus" "${seeds[@]}" >"$log" 2>&1; then
    echo "FAIL $t: fuzzing found a problem (log: $log)"
    return 1
  fi
  local regressions=()
  if [[ -d $src/regressions/$t ]]; then
    for f in "$src/regressions/$t"/*; do [[ -f $f ]] && regressions+=("$f"); done
  fi
  if ((${#regressions[@]})) && ! "$bin/$t" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 "${regressions[@]}" >>"$log" 2>&1; then
    echo "FAIL $t: a regression input fails again (log: $log)"
    return 1
  fi
  local executed
  executed=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  echo "ok   $t: $executed executions $budget, ${#regressions[@]} regression inputs pass"
}

status=0
names=()
for t in "${targets[@]}"; do
  [[ -x $bin/$t ]] || { echo "FAIL $t: not built"; status=1; continue; }
  while (($(jobs -rp | wc -l) >= parallel)); do sleep 0.2; done
  run_one "$t" >"$work/$t.result" &
  names+=("$t")
done
# Each target's outcome is its result file: `jobs` above may already have reaped a finished job, so waiting on
# its pid could fail with "not a child of this shell" although the target passed.
wait
for t in "${names[@]}"; do
  cat "$work/$t.result"
  grep -q '^ok ' "$work/$t.result" || status=1
done
if ((status)); then
  for t in "${names[@]}"; do
    if grep -q '^FAIL' "$work/$t.result"; then
      echo "---- $t (last lines of $work/$t.log) ----"
      grep -E 'ERROR|FUZZ_CHECK|runtime error|SUMMARY|Test unit written' "$work/$t.log" | head -20 || true
      tail -5 "$work/$t.log"
    fi
  done
  echo "run_fuzz: FAILED (crash inputs: $work/artifacts)"
else
  echo "run_fuzz: all ${#names[@]} targets clean"
fi
exit $status
