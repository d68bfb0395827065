set -uo pipefail
B=/work/main/build-tests; R=/tmp/res/E; mkdir -p $R
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec
cat .devkit/commit.txt > $R/device.txt; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> $R/device.txt
timeout 400 ctest --test-dir $B -L gpu --output-on-failure --timeout 250 -j 4 > $R/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $R/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|Skipped|rc=" $R/gpu_tests.txt
grep -E "energy |max dev|differ|close" $R/gpu_tests.txt | head -12
tar czf $OUT/callE.tgz -C /tmp/res E
