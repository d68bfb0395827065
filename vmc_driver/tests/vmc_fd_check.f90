! vmc_fd_check -- checks the analytic kinetic energy of the Slater-Jastrow function against central
! finite differences of Psi ratios (the same quantity computed independently), for random
! configurations of the Molden file given on the command line, with and without the Jastrow factor.
! Also checks Sherman-Morrison updates against a full inversion. Exit 0 only if all agree.
program vmc_fd_check
  use, intrinsic :: iso_fortran_env, only: real64, int64
  use vmc_molden
  use vmc_wavefunction
  use vmc_rng
  implicit none
  type(basis_t) :: bs
  type(wf_t) :: wf
  character(len=512) :: path
  real(real64), allocatable :: pos(:,:), ainva(:,:), ainvb(:,:), ainva2(:,:), ainvb2(:,:)
  real(real64) :: ek, vee, ven, fd, h, x(3), ratio, p, pp, pm, pj, worst, smerr
  integer :: e, d, c, trial, ij, nfail
  logical :: ok
  integer(int64) :: key

  call get_command_argument(1, path)
  call molden_read(trim(path), bs)
  nfail = 0
  do ij = 0, 1
    call wf_setup(wf, bs, ij == 1, 1.0_real64, 1.0_real64)
    allocate(pos(3, wf%ne), ainva(max(wf%na,1), max(wf%na,1)), ainvb(max(wf%nb,1), max(wf%nb,1)))
    allocate(ainva2, mold=ainva); allocate(ainvb2, mold=ainvb)
    worst = 0; smerr = 0
    key = rng_key(11_int64, 0_int64)
    do trial = 1, 5
      do e = 1, wf%ne
        do c = 1, 3
          pos(c, e) = bs%xyz(c, mod(e - 1, bs%natom) + 1) + 1.6_real64 * (rng_uniform(key, int(trial, int64), &
               3 * e + c) - 0.5_real64)
        end do
      end do
      call wf_invert(wf, pos, ainva, ainvb, ok)
      if (.not. ok) stop 'singular test configuration'
      call wf_local_energy(wf, pos, ainva, ainvb, ek, vee, ven)
      ! -1/2 sum_e lap Psi / Psi by central differences of |Psi(r + h)/Psi(r)| (signs: ratio keeps its sign)
      h = 1e-4_real64
      fd = 0
      do e = 1, wf%ne
        do d = 1, 3
          x = pos(:, e); x(d) = x(d) + h
          pp = signed_ratio(e, x)
          x = pos(:, e); x(d) = x(d) - h
          pm = signed_ratio(e, x)
          fd = fd - 0.5_real64 * (pp + pm - 2) / h**2
        end do
      end do
      worst = max(worst, abs(fd - ek) / max(1.0_real64, abs(ek)))
      ! Sherman-Morrison: move electron 1 and compare with a fresh inversion
      x = pos(:, 1) + 0.3_real64
      p = wf_ratio(wf, pos, ainva, ainvb, 1, x, ratio)
      call wf_accept(wf, pos, ainva, ainvb, 1, x, ratio)
      call wf_invert(wf, pos, ainva2, ainvb2, ok)
      smerr = max(smerr, maxval(abs(ainva - ainva2)) / maxval(abs(ainva2)))
    end do
    print '(a,l1,a,es10.3,a,es10.3)', 'jastrow=', ij == 1, '  max rel |T_fd - T_analytic| = ', worst, &
         '  Sherman-Morrison rel err = ', smerr
    if (worst > 1e-5_real64 .or. smerr > 1e-10_real64) nfail = nfail + 1
    deallocate(pos, ainva, ainvb, ainva2, ainvb2)
  end do
  if (nfail > 0) error stop 1

contains

  real(real64) function signed_ratio(e, xn) result(r)
    integer, intent(in) :: e
    real(real64), intent(in) :: xn(3)
    real(real64) :: q, rr
    q = wf_ratio(wf, pos, ainva, ainvb, e, xn, rr)
    r = sign(sqrt(q), rr)   ! |Psi'/Psi| with the determinant's sign
  end function

end program vmc_fd_check
