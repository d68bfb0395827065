"""Tests of scripts/test_summary.py: on a real ctest run of a throw-away project (pass, fail, skips by
qmmm-skip line, by SKIPPED line and by return code, a missing program, a time-out, a disabled test) the
summary counts skips apart from passes, lists each skip reason once with its count, names every failure and
exits non-zero; with only passes and skips it exits zero."""
import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import test_summary  # noqa: E402

PROJECT = r'''cmake_minimum_required(VERSION 3.25)
project(summary_demo NONE)
enable_testing()
add_test(NAME pass COMMAND sh -c "echo hello")
foreach(i 1 2 3)
  add_test(NAME gpu${i} COMMAND sh -c "echo '[ RUN ] x'; echo 'qmmm-skip: no CUDA device (or a build without CUDA)'")
  set_tests_properties(gpu${i} PROPERTIES SKIP_REGULAR_EXPRESSION "qmmm-skip: ")
endforeach()
add_test(NAME vmc_gpu COMMAND sh -c "seq 1 10000; echo 'SKIPPED: no usable GPU'; exit 1")
set_tests_properties(vmc_gpu PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED: no usable GPU")
add_test(NAME rc77 COMMAND sh -c "exit 77")
set_tests_properties(rc77 PROPERTIES SKIP_RETURN_CODE 77)
if(WITH_FAILURES)
  add_test(NAME broken COMMAND sh -c "echo bad; exit 1")
  add_test(NAME missing COMMAND /nonexistent/program)
  add_test(NAME slow COMMAND sh -c "sleep 5")
  set_tests_properties(slow PROPERTIES TIMEOUT 1)
  add_test(NAME off COMMAND sh -c "true")
  set_tests_properties(off PROPERTIES DISABLED ON)
endif()
'''


@unittest.skipUnless(shutil.which("cmake") and shutil.which("ctest"), "needs cmake and ctest")
class CtestSummary(unittest.TestCase):
    def run_ctest(self, with_failures):
        d = tempfile.mkdtemp(prefix="test_summary_")
        self.addCleanup(shutil.rmtree, d)
        with open(os.path.join(d, "CMakeLists.txt"), "w") as f:
            f.write(PROJECT)
        subprocess.run(["cmake", "-S", d, "-B", os.path.join(d, "b"), f"-DWITH_FAILURES={int(with_failures)}"],
                       check=True, capture_output=True)
        junit = os.path.join(d, "junit.xml")
        # The options scripts/run_tests.sh gives.
        subprocess.run(["ctest", "--test-dir", os.path.join(d, "b"), "--output-junit", junit,
                        "--test-output-size-passed", "16384", "--test-output-truncation", "middle"],
                       capture_output=True)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = test_summary.main([junit, "--check", "readme_tables check=0"])
        return status, out.getvalue()

    def test_skips_are_not_passes(self):
        status, text = self.run_ctest(with_failures=False)
        self.assertEqual(status, 0, text)
        self.assertIn("2 passed, 5 skipped, 0 failed (including 1 checks outside ctest)", text)
        self.assertIn("     3  no CUDA device (or a build without CUDA)\n", text)
        self.assertEqual(text.count("no CUDA device"), 1)  # each reason once
        self.assertIn("     1  no usable GPU\n", text)  # at the end of 48 kB of output
        self.assertIn("     1  no reason printed (SKIP_RETURN_CODE=77)\n", text)

    def test_failures_are_named_and_fail(self):
        status, text = self.run_ctest(with_failures=True)
        self.assertEqual(status, 1, text)
        self.assertIn("2 passed, 5 skipped, 3 failed, 1 disabled", text)
        for name in ("broken", "missing (not run", "slow"):
            self.assertIn("  " + name, text)


class Unreadable(unittest.TestCase):
    def test_missing_file_or_no_tests_fail(self):
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(test_summary.main(["/nonexistent/junit.xml"]), 1)
        with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
            f.write('<?xml version="1.0"?><testsuite tests="0"></testsuite>')
        self.addCleanup(os.remove, f.name)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(test_summary.main([f.name]), 1)
        self.assertIn("no test ran", out.getvalue())

    def test_failed_check_fails(self):
        with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
            f.write('<?xml version="1.0"?><testsuite><testcase name="a" status="run"/></testsuite>')
        self.addCleanup(os.remove, f.name)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(test_summary.main([f.name, "--check", "readme_tables check=1"]), 1)
        self.assertIn("1 passed, 0 skipped, 1 failed", out.getvalue())
        self.assertIn("readme_tables check (exit status 1)", out.getvalue())


class Slowest(unittest.TestCase):
    def test_longest_tests_listed_in_order(self):
        with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
            f.write('<?xml version="1.0"?><testsuite><testcase name="a" status="run" time="1.5"/>'
                    '<testcase name="b" status="run" time="12.25"/><testcase name="c" status="run" time="0.1"/>'
                    '</testsuite>')
        self.addCleanup(os.remove, f.name)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(test_summary.main([f.name, "--slowest", "2"]), 0)
        self.assertIn("longest 2 tests (seconds):\n      12.2  b\n       1.5  a\n", out.getvalue())
        self.assertNotIn("  c\n", out.getvalue())


if __name__ == "__main__":
    unittest.main()
