! Uses the installed Fortran module: a Z=2 nucleus at the origin seen from (0, 0, 4) bohr: U = -0.5.
program consumer_f90
  use qmmm_accel
  implicit none
  real(8) :: nothing(3,0), noq(0), nuc(3,1) = 0d0, z(1) = 2d0, p(3,1), u(1)
  type(qmmm_field) :: f
  p(:,1) = [0d0, 0d0, 4d0]
  if (qmmm_field_create(f, nothing, noq, nuc, z, backend=QMMM_BACKEND_CPU) /= QMMM_SUCCESS) error stop 1
  if (qmmm_field_eval(f, p, u) /= QMMM_SUCCESS) error stop 2
  if (abs(u(1) + 0.5d0) > 1d-15) error stop 3
  if (qmmm_field_destroy(f) /= QMMM_SUCCESS) error stop 4
  print '(a,f18.15)', 'consumer_f90: U = ', u(1)
end program consumer_f90
