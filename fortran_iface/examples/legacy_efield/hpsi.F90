! hpsi.F90 -- an hpsi-like caller of the legacy routines in efield.f: each MPI rank (when built with MPI) moves its
! walkers' electrons in a mock Metropolis loop and adds the MM energy of every configuration twice, by the legacy
! loop (EFLOOP) and by qmmm-accel (EFQMMM), for no screening, EXP screening and Gaussian charges. It checks that
! the two agree to 1e-12 relative at every step and prints the largest difference; likewise the forces on the MM
! charges (FFLOOP against FFQMMM, relative to the largest force). Exit status 1 on any failure.
program hpsi
#ifdef QMMM_WITH_MPI
  use mpi
#endif
  implicit none
  integer, parameter :: maxchg = 5000, nelec = 22, nsteps = 40
  integer :: nchg, iscr
  double precision :: x(maxchg), y(maxchg), z(maxchg), q(maxchg), sa(maxchg), sb(maxchg)
  common /mmchg/ x, y, z, q, sa, sb, nchg, iscr
  double precision :: coord(3, nelec), e_loop, e_lib, worst, rel, u(3)
  double precision :: fx(maxchg), fy(maxchg), fz(maxchg), gx(maxchg), gy(maxchg), gz(maxchg), fmax
  integer :: rank, status, istep, k, m, ierr, mode
  character(len=200) :: msg
  rank = 0
#ifdef QMMM_WITH_MPI
  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
#endif
  worst = 0
  do mode = 0, 2
    ! The MM environment: 3,000 charges in a shell 5-15 bohr around the QM region, neutral overall.
    call random_seed_put(17 + rank)
    nchg = 3000
    iscr = mode
    do m = 1, nchg
      do
        call random_number(u)
        u = 30d0 * u - 15d0
        if (norm2(u) > 5d0 .and. norm2(u) < 15d0) exit
      end do
      x(m) = u(1); y(m) = u(2); z(m) = u(3)
      q(m) = merge(0.4d0, -0.4d0, mod(m, 2) == 0)
      sa(m) = merge(1.0d0, 0.7d0, mod(m, 3) == 0)    ! EXP: a; Gaussian: sigma (bohr)
      sb(m) = 0.5d0
    end do
    call efrset(status)
    call random_number(coord)
    coord = 4d0 * coord - 2d0
    do istep = 1, nsteps
      do k = 1, nelec                          ! a Metropolis sweep's worth of moves
        call random_number(u)
        coord(:, k) = coord(:, k) + 0.3d0 * (u - 0.5d0)
      end do
      call efloop(nelec, coord, e_loop)
      call efqmmm(nelec, coord, e_lib, status)
      if (status /= 0) then
        call qmmm_f77_error_message(msg, ierr)
        write (*, '(a, i0, a, a)') 'hpsi: qmmm-accel status ', status, ': ', trim(msg)
        stop 1
      end if
      rel = abs(e_lib - e_loop) / max(1d0, abs(e_loop))
      worst = max(worst, rel)
      call ffloop(nelec, coord, fx, fy, fz)
      call ffqmmm(nelec, coord, gx, gy, gz, status)
      if (status /= 0) then
        call qmmm_f77_error_message(msg, ierr)
        write (*, '(a, i0, a, a)') 'hpsi: qmmm-accel forces status ', status, ': ', trim(msg)
        stop 1
      end if
      fmax = max(maxval(abs(fx(1:nchg))), maxval(abs(fy(1:nchg))), maxval(abs(fz(1:nchg))))
      rel = max(maxval(abs(gx(1:nchg) - fx(1:nchg))), maxval(abs(gy(1:nchg) - fy(1:nchg))), &
           maxval(abs(gz(1:nchg) - fz(1:nchg)))) / fmax
      worst = max(worst, rel)
    end do
  end do
  call efrset(status)
  ! The library's message counts from 1: electron 3 on charge 5 (an unscreened one) is singular.
  iscr = 0
  coord(:, 3) = (/ x(5), y(5), z(5) /)
  call efqmmm(nelec, coord, e_lib, status)
  call qmmm_f77_error_message(msg, ierr)
  if (status /= 11 .or. index(msg, 'point 3 ') == 0 .or. index(msg, 'charge 5,') == 0) then
    write (*, '(a, i0, a, a)') 'hpsi: expected QMMM_ERR_SINGULAR naming point 3 and charge 5, got ', status, ': ', &
         trim(msg)
    stop 1
  end if
  call efrset(status)
  write (*, '(a, i0, a, es10.3)') 'legacy_efield: rank ', rank, ' max relative difference ', worst
  if (worst > 1d-12) stop 1
#ifdef QMMM_WITH_MPI
  call mpi_finalize(ierr)
#endif
contains
  subroutine random_seed_put(s)
    integer, intent(in) :: s
    integer :: n
    integer, allocatable :: seed(:)
    call random_seed(size=n)
    allocate (seed(n))
    seed = s
    call random_seed(put=seed)
  end subroutine
end program hpsi
