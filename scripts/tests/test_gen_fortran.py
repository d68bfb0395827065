"""Tests of scripts/gen_fortran.py on a throw-away repository: what a header maps to (constants, a bind(C) type
with its defaults, interfaces by value and through pointers, a module-free subroutine), that a declaration it
cannot map stops it with the header's file and line, and that check-wrappers refuses a public function with
neither a wrapper nor a listed reason, and a stale list entry."""
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import gen_fortran  # noqa: E402

HEADER = """#ifndef QMMM_ACCEL_TOY_H
#define QMMM_ACCEL_TOY_H
#include <stdint.h>
#define QMMM_API __attribute__((visibility("default")))
#ifdef __cplusplus
extern "C" {
#endif
#define QMMM_TOY_MAX 4 /**< entries of devices */
#define QMMM_TOY_SCALE 2.5e-3
/** Modes. */
enum {
    QMMM_TOY_A = 0, /**< a */
    QMMM_TOY_B = -1
};
typedef struct qmmm_toy_options {
    int32_t backend;
    double tolerance; /**< default 1e-7 */
    const double *region;
    int32_t devices[QMMM_TOY_MAX];
} qmmm_toy_options;
typedef struct qmmm_toy_s *qmmm_toy;
/** @brief Creates. */
QMMM_API int qmmm_toy_create(qmmm_toy *h, int64_t n, const double *xyz,
                             const qmmm_toy_options *opt);
QMMM_API int qmmm_toy_destroy(qmmm_toy h);
QMMM_API const char *qmmm_toy_name(void);
#ifdef __cplusplus
}
#endif
#endif
"""


class GenFortranTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()
        self.write('cmake/qmmm_families.txt', '# name deps header kind\ntoy - qmmm_accel_toy.h library\n'
                   'tools toy - programs\n')
        self.write('src_cxx/toy/qmmm_accel_toy.h', HEADER)
        self.write('fortran_iface/type_defaults.txt', 'qmmm_toy_options.tolerance = 1e-7\n')
        self.write('fortran_iface/f77_functions.txt', 'toy_destroy qmmm_toy_destroy\ntoy_name qmmm_toy_name\n')
        self.write('fortran_iface/raw_only.txt', 'qmmm_toy_name  a reason\n')
        self.write('fortran_iface/qmmm_accel_toy.f90', 'integer function qmmm_toy_create(h) result(s)\n'
                   'integer function qmmm_toy_destroy(h) result(s)\n')

    def tearDown(self):
        shutil.rmtree(self.root)

    def write(self, rel, text):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write(text)

    def generated(self, name):
        out = os.path.join(self.root, 'out')
        gen_fortran.generate(self.root, out)
        with open(os.path.join(out, name)) as f:
            return f.read()

    def test_module_maps_constants_types_and_interfaces(self):
        m = self.generated('qmmm_accel_toy_c.f90')
        for line in ['integer, parameter :: QMMM_TOY_MAX = 4',
                     'real(c_double), parameter :: QMMM_TOY_SCALE = 2.5e-3_c_double',
                     'integer, parameter :: QMMM_TOY_B = -1',
                     'type, bind(c) :: qmmm_toy_options',
                     'real(c_double) :: tolerance = 1e-7_c_double',
                     'type(c_ptr) :: region = c_null_ptr',
                     'integer(c_int32_t) :: devices(QMMM_TOY_MAX) = 0',
                     "function c_qmmm_toy_create(h, n, xyz, opt) bind(c, name='qmmm_toy_create') result(c_status)",
                     'type(c_ptr) :: h', 'integer(c_int64_t), value :: n', 'type(c_ptr), value :: xyz',
                     'type(c_ptr) :: c_status']:
            self.assertIn(line, m)
        self.assertNotIn('qmmm_accel_tools', ' '.join(os.listdir(os.path.join(self.root, 'out'))))

    def test_module_free_interface(self):
        cpp = self.generated('qmmm_accel_f77.cpp')
        self.assertIn('QMMM_API void qmmm_f77_toy_destroy_(int64_t *h, int *status)', cpp)
        self.assertIn('if (*status == QMMM_SUCCESS) *h = 0;', cpp)
        self.assertIn('QMMM_API void qmmm_f77_toy_name_(char *text, int *status, size_t text_len)', cpp)
        fi = self.generated('qmmm_accel_f77.fi')
        self.assertIn('      PARAMETER (QMMM_TOY_SCALE = 2.5D-3)', fi)
        self.assertIn('CALL QMMM_F77_TOY_DESTROY(H, STATUS)', fi)
        self.assertTrue(all(len(line) <= 72 for line in fi.splitlines()))

    def test_unmappable_declaration_names_file_and_line(self):
        self.write('src_cxx/toy/qmmm_accel_toy.h', HEADER.replace(
            'QMMM_API int qmmm_toy_destroy(qmmm_toy h);', 'QMMM_API int qmmm_toy_destroy(qmmm_toy h);\n'
            'QMMM_API int qmmm_toy_bad(struct other o);'))
        with self.assertRaises(gen_fortran.GenError) as e:
            gen_fortran.generate(self.root, os.path.join(self.root, 'out'))
        self.assertIn('qmmm_accel_toy.h:26', str(e.exception))
        self.write('src_cxx/toy/qmmm_accel_toy.h', HEADER.replace('#define QMMM_TOY_MAX 4', '#define QMMM_TOY_MAX (4)'))
        with self.assertRaises(gen_fortran.GenError) as e:
            gen_fortran.generate(self.root, os.path.join(self.root, 'out'))
        self.assertIn('qmmm_accel_toy.h:8', str(e.exception))

    def test_check_wrappers(self):
        gen_fortran.check_wrappers(self.root, None)
        self.write('fortran_iface/qmmm_accel_toy.f90', 'integer function qmmm_toy_create(h) result(s)\n')
        with self.assertRaisesRegex(gen_fortran.GenError, 'qmmm_toy_destroy has no Fortran wrapper'):
            gen_fortran.check_wrappers(self.root, None)
        self.write('fortran_iface/raw_only.txt', 'qmmm_toy_name  a reason\nqmmm_toy_destroy  why\nqmmm_gone  old\n')
        with self.assertRaisesRegex(gen_fortran.GenError, 'qmmm_gone is not a public C function'):
            gen_fortran.check_wrappers(self.root, None)


if __name__ == '__main__':
    unittest.main()
