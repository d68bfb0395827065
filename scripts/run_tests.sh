#!/usr/bin/env bash
# Builds qmmm-accel and runs every test (ctest). Fresh Debian 12, as root: installs what is missing first.
#   bash scripts/run_tests.sh            # build dir: ./build-tests (QMMM_BUILD_DIR overrides)
# CUDA is built when nvcc is found (QMMM_CUDA=AUTO); tests labelled `gpu` run where a GPU is present and are
# reported as skipped, with the reason, where there is none. Exit status: non-zero when any test fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${QMMM_BUILD_DIR:-$root/build-tests}
jobs=$(nproc)

bash "$root/scripts/install_deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release ${QMMM_CMAKE_ARGS:-}
cmake --build "$build" -j "$jobs"

status=0
ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 900 || status=$?

# Say why tests were skipped (no GPU, no CUDA build), so a skip is never silent.
log="$build/Testing/Temporary/LastTest.log"
if [[ -f $log ]] && grep -qE '\[  SKIPPED \]|SKIPPED:' "$log"; then
  echo "---- skip reasons ----"
  grep -hE 'SKIPPED: |no CUDA device|no usable GPU' "$log" | grep -vE '^\[  SKIPPED \]|Skip regular expression' |
    sed 's/^ *//' | sort | uniq -c | sort -rn | head -10
fi
exit $status
