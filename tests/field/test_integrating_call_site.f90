! test_integrating_call_site.f90 -- docs/integrating.md's call site as the page prints it (generated into
! call_site by integrating_call_site.cmake) on 5 MM charges and 3 electrons: the energy of the electrons in the
! charges' field, physical sign (-q/r), against the same sum in extended precision.
program test_integrating_call_site
  use integrating_call_site_m, only: call_site
  implicit none
  integer, parameter :: xp = selected_real_kind(18), nq = 5, ne = 3
  double precision :: x(nq), y(nq), z(nq), q(nq), coord(3, ne), e_mm
  real(xp) :: eref
  integer :: st, i, k
  x = [4.0d0, -3.5d0, 0.5d0, 2.0d0, -1.0d0]
  y = [0.5d0, 2.5d0, -4.0d0, 3.0d0, -2.5d0]
  z = [1.0d0, -1.5d0, 2.0d0, -3.0d0, 4.5d0]
  q = [0.417d0, -0.834d0, 0.417d0, 1.0d0, -1.0d0]
  coord = reshape([0.1d0, 0.2d0, -0.3d0, -0.7d0, 0.4d0, 0.9d0, 1.1d0, -0.6d0, 0.2d0], [3, ne])
  call call_site(x, y, z, q, ne, coord, e_mm, st)
  eref = 0
  do k = 1, ne
    do i = 1, nq
      eref = eref - real(q(i), xp) / sqrt((real(coord(1, k), xp) - x(i))**2 + (real(coord(2, k), xp) - y(i))**2 + &
           (real(coord(3, k), xp) - z(i))**2)
    end do
  end do
  write(*, '(a,es24.16,a,es24.16)') 'integrating_call_site: e_mm ', e_mm, '  reference ', real(eref, 8)
  if (st /= 0 .or. .not. abs(e_mm - eref) <= 1e-14_xp * abs(eref)) then
    write(*, '(a,i0)') 'integrating_call_site: FAILED: status ', st
    stop 1
  end if
  write(*, '(a)') 'integrating_call_site: all passed'
end program
