! field_example.f90 -- U_ES from Fortran for a small system: 8 density cells of 0.25 electrons on the
! corners of a cube of side 2 bohr, and a proton at its centre; U_ES printed along the z axis.
! From the centre each corner is sqrt(3) bohr away, so U_ES(0, 0, 0.5) can be checked by hand.
program field_example
  use qmmm_accel
  use, intrinsic :: iso_fortran_env, only: error_unit
  implicit none
  real(8) :: cells(3,8), q(8), nuc(3,1), z(1), pts(3,5), u(5)
  type(qmmm_field) :: f
  integer :: i, j, k, n, s, backend

  n = 0
  do i = -1, 1, 2
    do j = -1, 1, 2
      do k = -1, 1, 2
        n = n + 1
        cells(:, n) = [dble(i), dble(j), dble(k)]
      end do
    end do
  end do
  q = 0.25d0
  nuc(:, 1) = [0d0, 0d0, 0d0]
  z = 1d0
  do i = 1, 5
    pts(:, i) = [0d0, 0d0, 0.5d0 * i]
  end do

  s = qmmm_field_create(f, cells, q, nuc, z, precision=QMMM_PRECISION_DOUBLE)
  if (s /= QMMM_SUCCESS) call die('qmmm_field_create')
  s = qmmm_field_backend(f, backend)
  s = qmmm_field_eval(f, pts, u)
  if (s /= QMMM_SUCCESS) call die('qmmm_field_eval')
  write(*, '(a)') 'qmmm-accel field example: 8 cells x 0.25 e on a cube of side 2 bohr, proton at centre'
  write(*, '(a,a)') 'backend: ', merge('CUDA', 'CPU ', backend == QMMM_BACKEND_CUDA)
  write(*, '(a)') '      z (bohr)        U_ES (hartree)'
  do i = 1, 5
    write(*, '(f14.6, es22.14)') pts(3, i), u(i)
  end do
  s = qmmm_field_destroy(f)
contains
  subroutine die(what)
    character(*), intent(in) :: what
    write(error_unit, '(a,a,a,a,a)') what, ' failed: ', qmmm_status_string(s), ': ', qmmm_error_message()
    error stop 1
  end subroutine
end program field_example
