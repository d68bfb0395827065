! vmc_cusp.f90 -- nuclear cusp correction of Gaussian MOs (after Ma, Towler, Drummond & Needs,
! J. Chem. Phys. 122, 224322 (2005)). Gaussians have zero slope at a nucleus, so the local energy of a
! determinant diverges like -Z/r there and its variance is huge and heavy-tailed. Within a radius r_c of
! nucleus A the s-type part of MO j (the part from s shells centred on A, a radial function phi) is replaced by
!   phit(r) = C + sgn exp(p(r)),   p = a0 + a1 r + a2 r^2 + a3 r^3 + a4 r^4,
! matching phi's value, slope and curvature at r_c (the MO stays C2 there) and the cusp condition
!   phit'(0) = -Z (phit(0) + eta(0))     (eta: the rest of the MO, smooth at A; psi = phi + eta).
! The free parameter a0 (the value at the nucleus) minimises the largest deviation of the effective
! one-electron local energy  E(r) = -1/2 (phit'' + 2 phit'/r) / (phit + eta(0)) - Z/r  on [0, r_c] from
! E(r_c). Simpler than the paper in two documented ways: the target curve is flat (the paper fits an "ideal"
! curve rising towards the nucleus) and r_c is fixed per nucleus (rc_z/Z, at most rc_max and 0.4 of the
! nearest-neighbour distance; input keys cusp_rc_z, cusp_rc_max) instead of optimised per orbital. C = 0 unless phi changes sign inside r_c;
! then C shifts phi - C to one sign. Outside the spheres the MOs are unchanged.
module vmc_cusp
  use, intrinsic :: iso_fortran_env, only: real64
  use vmc_molden
  use vmc_orbitals
  implicit none
  private
  public :: cusp_t, cusp_build, cusp_find, cusp_atom, cusp_delta, cusp_radial_test

  real(real64), parameter :: RC_Z = 0.5_real64     ! default r_c = RC_Z / Z (bohr) ...
  real(real64), parameter :: RC_MAX = 0.2_real64   ! ... but at most this
  integer, parameter :: NGRID = 100

  type cusp_t
    integer :: natom = 0, nmo = 0, maxs = 0
    real(real64), allocatable :: rcat(:)            ! (natom) sphere radius (0: no correction at this atom)
    real(real64), allocatable :: rcat2(:)           ! (natom) its square (-1: no correction)
    real(real64), allocatable :: rc(:,:)            ! (nmo, natom) r_c of MO j at atom A (0: not corrected)
    real(real64), allocatable :: poly(:,:,:)        ! (0:4, nmo, natom) coefficients of p
    real(real64), allocatable :: shift(:,:), sgn(:,:)
    integer, allocatable :: nss(:), sshell(:,:)     ! s shells centred on each atom
  end type

contains

  ! Builds the correction of the MOs c(nbf, nmo) (one spin set).
  subroutine cusp_build(cu, bs, c, rcz_in, rcmax_in)
    type(cusp_t), intent(out) :: cu
    type(basis_t), intent(in) :: bs
    real(real64), intent(in) :: c(:,:)
    real(real64), intent(in), optional :: rcz_in, rcmax_in   ! override RC_Z, RC_MAX (both or neither)
    integer :: a, b, s, j, i
    real(real64) :: rca, dmin, chi(bs%nbf), f(size(c, 2)), fp(size(c, 2)), fpp(size(c, 2))
    real(real64) :: phi0(size(c, 2)), psi0, eta0, fg(0:NGRID), scale, cshift, sg
    real(real64) :: x1, x2, x3, frc, et
    type(ao_t) :: ao
    call ao_setup(ao, bs)
    cu%natom = bs%natom; cu%nmo = size(c, 2)
    allocate(cu%nss(bs%natom))
    cu%nss = 0
    do s = 1, bs%nshell
      if (bs%sh(s)%l == 0) cu%nss(bs%sh(s)%atom) = cu%nss(bs%sh(s)%atom) + 1
    end do
    cu%maxs = max(1, maxval(cu%nss))
    allocate(cu%sshell(cu%maxs, bs%natom))
    cu%nss = 0
    do s = 1, bs%nshell
      if (bs%sh(s)%l /= 0) cycle
      a = bs%sh(s)%atom
      cu%nss(a) = cu%nss(a) + 1
      cu%sshell(cu%nss(a), a) = s
    end do
    allocate(cu%rcat(bs%natom), cu%rc(cu%nmo, bs%natom), cu%poly(0:4, cu%nmo, bs%natom), &
         cu%shift(cu%nmo, bs%natom), cu%sgn(cu%nmo, bs%natom))
    cu%rcat = 0; cu%rc = 0; cu%poly = 0; cu%shift = 0; cu%sgn = 1
    do a = 1, bs%natom
      if (bs%z(a) < 0.5_real64 .or. cu%nss(a) == 0) cycle
      dmin = huge(1.0_real64)
      do b = 1, bs%natom
        if (b /= a) dmin = min(dmin, norm2(bs%xyz(:, a) - bs%xyz(:, b)))
      end do
      rca = min(RC_Z / bs%z(a), RC_MAX, 0.4_real64 * dmin)
      if (present(rcz_in) .and. present(rcmax_in)) rca = min(rcz_in / bs%z(a), rcmax_in, 0.4_real64 * dmin)
      call ao_values(ao, bs, bs%xyz(:, a), chi)
      call cusp_radial(cu, bs, c, a, 0.0_real64, phi0, fp, fpp)
      scale = maxval(abs(phi0))
      do j = 1, cu%nmo
        ! Orbitals with a negligible s part at A carry a negligible share of the divergence.
        if (abs(phi0(j)) <= 1e-6_real64 * scale .or. abs(phi0(j)) < 1e-12_real64) cycle
        psi0 = dot_product(c(:, j), chi)
        eta0 = psi0 - phi0(j)
        sg = sign(1.0_real64, phi0(j))
        do i = 0, NGRID
          call cusp_radial(cu, bs, c, a, rca * i / NGRID, f, fp, fpp)
          fg(i) = f(j)
        end do
        cshift = 0
        if (minval(sg * fg) <= 0.05_real64 * abs(phi0(j))) &   ! phi crosses zero inside r_c: shift it
             cshift = sg * (minval(sg * fg) - 0.1_real64 * maxval(abs(fg)))
        call cusp_radial(cu, bs, c, a, rca, f, fp, fpp)
        frc = f(j) - cshift
        x1 = log(abs(frc)); x2 = fp(j) / frc; x3 = fpp(j) / frc
        et = -0.5_real64 * (fpp(j) + 2 * fp(j) / rca) / (f(j) + eta0) - bs%z(a) / rca
        cu%rc(j, a) = rca
        cu%shift(j, a) = cshift
        cu%sgn(j, a) = sg
        call optimise_a0(bs%z(a), rca, cshift, sg, eta0, x1, x2, x3, et, log(abs(phi0(j) - cshift)), &
             cu%poly(:, j, a))
      end do
      if (any(cu%rc(:, a) > 0)) cu%rcat(a) = rca
    end do
    cu%rcat2 = merge(cu%rcat**2, -1.0_real64, cu%rcat > 0)
  end subroutine

  ! p for a given a0: a1 from the cusp condition, a2..a4 from value, slope, curvature at r_c.
  subroutine solve_poly(z, rc, cshift, sg, eta0, x1, x2, x3, a0, p)
    real(real64), intent(in) :: z, rc, cshift, sg, eta0, x1, x2, x3, a0
    real(real64), intent(out) :: p(0:4)
    real(real64) :: r0, y1, y2, y3, u, v, w
    r0 = sg * exp(a0)
    p(0) = a0
    p(1) = -z * (r0 + cshift + eta0) / r0
    y1 = x1 - a0 - p(1) * rc          ! a2 rc^2 + a3 rc^3 + a4 rc^4
    y2 = x2 - p(1)                    ! 2 a2 rc + 3 a3 rc^2 + 4 a4 rc^3
    y3 = x3 - x2 * x2                 ! p''(rc): phi''/phi = p'' + p'^2
    v = (y3 * rc * rc - 4 * y2 * rc + 6 * y1) / 2   ! a4 rc^4
    u = y2 * rc - 2 * y1 - 2 * v                    ! a3 rc^3
    w = y1 - u - v                                  ! a2 rc^2
    p(2) = w / rc**2; p(3) = u / rc**3; p(4) = v / rc**4
  end subroutine

  ! Largest |E(r) - E(r_c)| on the grid (the objective for a0).
  real(real64) function deviation(z, rc, cshift, sg, eta0, p, et) result(dev)
    real(real64), intent(in) :: z, rc, cshift, sg, eta0, p(0:4), et
    integer :: i
    real(real64) :: r, q, qp, qpp, rr, e
    dev = 0
    do i = 1, NGRID
      r = rc * i / NGRID
      call poly_eval(p, r, q, qp, qpp)
      rr = sg * exp(q)
      e = -0.5_real64 * rr * (qpp + qp * qp + 2 * qp / r) / (cshift + rr + eta0) - z / r
      if (.not. (abs(e) < huge(e))) then
        dev = huge(1.0_real64); return
      end if
      dev = max(dev, abs(e - et))
    end do
  end function

  ! Coarse scan of a0 in [a - 1, a + 1] around the uncorrected value, then golden-section refinement.
  subroutine optimise_a0(z, rc, cshift, sg, eta0, x1, x2, x3, et, aguess, p)
    real(real64), intent(in) :: z, rc, cshift, sg, eta0, x1, x2, x3, et, aguess
    real(real64), intent(out) :: p(0:4)
    integer, parameter :: NS = 200
    real(real64), parameter :: GR = 0.6180339887498949_real64
    integer :: i, ibest, it
    real(real64) :: a0, d, best, lo, hi, m1, m2, d1, d2, h
    best = huge(1.0_real64); ibest = 0
    h = 2.0_real64 / NS
    do i = 0, NS
      a0 = aguess - 1 + h * i
      call solve_poly(z, rc, cshift, sg, eta0, x1, x2, x3, a0, p)
      d = deviation(z, rc, cshift, sg, eta0, p, et)
      if (d < best) then
        best = d; ibest = i
      end if
    end do
    lo = aguess - 1 + h * (ibest - 1); hi = aguess - 1 + h * (ibest + 1)
    do it = 1, 60
      m1 = hi - GR * (hi - lo); m2 = lo + GR * (hi - lo)
      call solve_poly(z, rc, cshift, sg, eta0, x1, x2, x3, m1, p); d1 = deviation(z, rc, cshift, sg, eta0, p, et)
      call solve_poly(z, rc, cshift, sg, eta0, x1, x2, x3, m2, p); d2 = deviation(z, rc, cshift, sg, eta0, p, et)
      if (d1 < d2) then
        hi = m2
      else
        lo = m1
      end if
    end do
    call solve_poly(z, rc, cshift, sg, eta0, x1, x2, x3, 0.5_real64 * (lo + hi), p)
  end subroutine

  pure subroutine poly_eval(p, r, q, qp, qpp)
    real(real64), intent(in) :: p(0:4), r
    real(real64), intent(out) :: q, qp, qpp
    q = p(0) + r * (p(1) + r * (p(2) + r * (p(3) + r * p(4))))
    qp = p(1) + r * (2 * p(2) + r * (3 * p(3) + r * 4 * p(4)))
    qpp = 2 * p(2) + r * (6 * p(3) + r * 12 * p(4))
  end subroutine

  ! s part of every MO at distance r from atom a: value, first and second radial derivative.
  subroutine cusp_radial(cu, bs, c, a, r, f, fp, fpp)
    type(cusp_t), intent(in) :: cu
    type(basis_t), intent(in) :: bs
    real(real64), intent(in) :: c(:,:), r
    integer, intent(in) :: a
    real(real64), intent(out) :: f(:), fp(:), fpp(:)
    integer :: k, s, i
    real(real64) :: g0, g1, g2, ex, al
    f = 0; fp = 0; fpp = 0
    do k = 1, cu%nss(a)
      s = cu%sshell(k, a)
      associate (sh => bs%sh(s))
        g0 = 0; g1 = 0; g2 = 0
        do i = 1, sh%nprim
          al = sh%alpha(i)
          ex = sh%coef(i) * exp(-al * r * r)
          g0 = g0 + ex
          g1 = g1 - 2 * al * r * ex
          g2 = g2 + (4 * al * al * r * r - 2 * al) * ex
        end do
        g0 = g0 * sh%t(1, 1); g1 = g1 * sh%t(1, 1); g2 = g2 * sh%t(1, 1)
        f = f + c(sh%bf0 + 1, :) * g0
        fp = fp + c(sh%bf0 + 1, :) * g1
        fpp = fpp + c(sh%bf0 + 1, :) * g2
      end associate
    end do
  end subroutine

  ! The atom whose correction sphere contains the point with squared distances r2(natom) to the atoms
  ! (0: none; the spheres do not overlap). A quick test with distances already at hand.
  pure integer function cusp_atom(cu, r2) result(a)
    type(cusp_t), intent(in) :: cu
    real(real64), intent(in) :: r2(:)
    integer :: k
    a = 0
    do k = 1, cu%natom
      if (r2(k) < cu%rcat2(k)) a = k
    end do
  end function

  ! The atom whose correction sphere contains x (0: none); d = x - R_A, r = |d|.
  integer function cusp_find(cu, bs, x, d, r) result(a)
    type(cusp_t), intent(in) :: cu
    type(basis_t), intent(in) :: bs
    real(real64), intent(in) :: x(3)
    real(real64), intent(out) :: d(3), r
    integer :: k
    a = 0
    do k = 1, cu%natom
      if (cu%rcat(k) <= 0) cycle
      d = x - bs%xyz(:, k)
      r = d(1)**2 + d(2)**2 + d(3)**2
      if (r < cu%rcat(k)**2) then
        r = sqrt(r); a = k; return
      end if
    end do
  end function

  ! Corrections to add to the uncorrected MOs at a point at d (distance r) from atom a:
  ! dv(j) = phit_j - phi_j, and if derivs, gradients dg(3, j) and Laplacians dl(j) of the same.
  subroutine cusp_delta(cu, bs, c, a, d, r, derivs, dv, dg, dl)
    type(cusp_t), intent(in) :: cu
    type(basis_t), intent(in) :: bs
    real(real64), intent(in) :: c(:,:), d(3), r
    integer, intent(in) :: a
    logical, intent(in) :: derivs
    real(real64), intent(out) :: dv(:), dg(:,:), dl(:)
    real(real64) :: f(cu%nmo), fp(cu%nmo), fpp(cu%nmo), q, qp, qpp, ep, dp, dpp, rs
    integer :: j
    rs = max(r, 1e-300_real64)   ! the gradient direction is undefined exactly at the nucleus
    call cusp_radial(cu, bs, c, a, r, f, fp, fpp)
    dv = 0
    if (derivs) then
      dg = 0; dl = 0
    end if
    do j = 1, cu%nmo
      if (r >= cu%rc(j, a)) cycle
      call poly_eval(cu%poly(:, j, a), r, q, qp, qpp)
      ep = cu%sgn(j, a) * exp(q)
      dv(j) = cu%shift(j, a) + ep - f(j)
      if (.not. derivs) cycle
      dp = ep * qp - fp(j)
      dpp = ep * (qpp + qp * qp) - fpp(j)
      dg(:, j) = dp * d / rs
      dl(j) = dpp + 2 * dp / rs
    end do
  end subroutine

  ! For tests: corrected s part of MO j at atom a, value and radial derivatives (uncorrected outside r_c).
  subroutine cusp_radial_test(cu, bs, c, a, j, r, v, vp, vpp)
    type(cusp_t), intent(in) :: cu
    type(basis_t), intent(in) :: bs
    real(real64), intent(in) :: c(:,:), r
    integer, intent(in) :: a, j
    real(real64), intent(out) :: v, vp, vpp
    real(real64) :: f(cu%nmo), fp(cu%nmo), fpp(cu%nmo), q, qp, qpp, ep
    call cusp_radial(cu, bs, c, a, r, f, fp, fpp)
    v = f(j); vp = fp(j); vpp = fpp(j)
    if (r >= cu%rc(j, a)) return
    call poly_eval(cu%poly(:, j, a), r, q, qp, qpp)
    ep = cu%sgn(j, a) * exp(q)
    v = cu%shift(j, a) + ep; vp = ep * qp; vpp = ep * (qpp + qp * qp)
  end subroutine

end module vmc_cusp
