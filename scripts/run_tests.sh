#!/usr/bin/env bash
# Builds qmmm-accel and runs every test (ctest), then the checks outside ctest: the measured tables of README.md
# and docs/ against the committed results of the current code (scripts/readme_tables.py), the scripts' tests
# (scripts/tests/) and a short fixed-seed fuzzing run (tests/fuzz/run_fuzz.sh). Fresh Debian 12, as root:
# installs what is missing first.
#   bash scripts/run_tests.sh            # build dir: ./build-tests (QMMM_BUILD_DIR overrides)
#   QMMM_CTEST_ARGS="-R Dcs" bash scripts/run_tests.sh     # extra ctest arguments (a subset, say)
#   QMMM_FUZZ_SECONDS=60 bash scripts/run_tests.sh          # each fuzz target this long (default: a fixed count)
# CUDA is built when nvcc is found (QMMM_CUDA=AUTO); tests labelled `gpu` run where a GPU is present and are
# reported as skipped, with the reason, where there is none. The last lines are an honest summary
# (scripts/test_summary.py): N passed, N skipped with each distinct reason once, N failed with their names.
# Exit status: non-zero when any test or check fails (or no test ran).
# For the edit-compile-test loop, not this script: `ctest --test-dir build-tests -L quick -j2` (every family, no long
# statistics or memcheck; about 2 min on 2 cores). The summary lists the ten longest tests (--slowest 10).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${QMMM_BUILD_DIR:-$root/build-tests}
jobs=$(nproc)

bash "$root/scripts/install_deps.sh"
if ! command -v python3 > /dev/null; then
  echo "run_tests: python3 is needed (README tables check, test summary); install it (scripts/install_deps.sh)" >&2
  exit 1
fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release ${QMMM_CMAKE_ARGS:-}
cmake --build "$build" -j "$jobs"

# The JUnit file keeps each test's status and output (the skip reason is in it). Output size: enough for the
# reason line of any skipped test, kept from both ends.
junit="$build/Testing/junit.xml"
rm -f "$junit"
ctest_status=0
ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 900 --output-junit "$junit" \
  --test-output-size-passed 16384 --test-output-truncation middle ${QMMM_CTEST_ARGS:-} || ctest_status=$?

readme_status=0
python3 "$root/scripts/readme_tables.py" check || readme_status=$?
scripts_status=0
python3 -m unittest discover -s "$root/scripts/tests" -p 'test_*.py' || scripts_status=$?
# Every libFuzzer target a fixed number of inputs from a fixed seed (the same inputs on any machine), and its
# regression inputs, under ASan + UBSan (tests/fuzz/README.md; installs clang-14 if missing, builds in
# build-fuzz: about 1.5 min on 2 cores).
fuzz_status=0
fuzz_budget=()
[[ -n ${QMMM_FUZZ_SECONDS:-} ]] && fuzz_budget=(--seconds "$QMMM_FUZZ_SECONDS")
bash "$root/tests/fuzz/run_fuzz.sh" "${fuzz_budget[@]}" || fuzz_status=$?

status=0
python3 "$root/scripts/test_summary.py" "$junit" --slowest 10 --check "readme_tables check=$readme_status" \
  --check "scripts/tests=$scripts_status" --check "tests/fuzz/run_fuzz.sh=$fuzz_status" || status=$?
# ctest failing without a failed test in the file (it could not start, say) is a failure too.
if ((ctest_status != 0 && status == 0)); then
  echo "run_tests: ctest exited with status $ctest_status"
  status=$ctest_status
fi
exit $status
