! test_fortran_dcs.f90 -- the DCS module from Fortran: one charge's q/r on a lattice, ion placement, errors.
program test_fortran_dcs
  use qmmm_accel
  implicit none
  type(qmmm_dcs_lattice) :: lat
  real(8) :: xyz(3,1), q(1), ion(3,1), r, worst
  real(8), allocatable :: map(:,:,:)
  integer :: s, i, j, k, fails
  fails = 0
  lat%origin = [-2.0d0, -2.0d0, -2.0d0]
  lat%spacing = [0.5d0, 0.4d0, 0.3d0]
  lat%count = [9_8, 11_8, 13_8]
  allocate(map(9, 11, 13))
  xyz(:,1) = [0.1d0, 0.05d0, 0.07d0]
  q(1) = -2.0d0
  s = qmmm_dcs_map(xyz, q, lat, map, backend=QMMM_BACKEND_CPU, precision=QMMM_PRECISION_DOUBLE)
  if (s /= QMMM_SUCCESS) then
    print *, 'map failed: ', qmmm_error_message()
    fails = fails + 1
  end if
  worst = 0
  do k = 1, 13
    do j = 1, 11
      do i = 1, 9
        r = norm2(lat%origin + lat%spacing * [i - 1, j - 1, k - 1] - xyz(:,1))
        worst = max(worst, abs(map(i, j, k) - q(1) / r) * r / abs(q(1)))
      end do
    end do
  end do
  if (worst > 1d-14) then
    print *, 'q/r relative error ', worst
    fails = fails + 1
  end if
  ! A cation goes to the lattice point nearest the negative charge beyond 0.45 bohr.
  s = qmmm_dcs_place_ions(xyz, q, lat, map, 1.0d0, 0.45d0, 0.0d0, ion)
  r = norm2(ion(:,1) - xyz(:,1))
  if (s /= QMMM_SUCCESS .or. r < 0.45d0 .or. r > 0.6d0) then
    print *, 'ion placement: status ', s, ' distance ', r
    fails = fails + 1
  end if
  lat%spacing(2) = 0
  s = qmmm_dcs_map(xyz, q, lat, map, backend=QMMM_BACKEND_CPU)
  if (s /= QMMM_ERR_INVALID_ARG .or. index(qmmm_error_message(), 'spacing[y]') == 0) then
    print *, 'zero spacing: status ', s, ' ', qmmm_error_message()
    fails = fails + 1
  end if
  if (fails == 0) print '(a)', 'fortran_dcs: all passed'
end program test_fortran_dcs
