! vmc_wavefunction.f90 -- Slater-Jastrow trial function Psi = det_up det_down exp(J).
! Slater matrices are stored inverted and transposed: ainv(j,k) = (D^-1)(j,k) with D(k,j) = phi_j(r_k),
! so the ratio for a move of electron k is sum_j phi_j(r') ainv(j,k) and one accepted move costs O(n^2)
! (Sherman-Morrison). Jastrow (cusp conditions exact):
!   J = sum_{i<j} a_ij r/(1 + b_ee r)  - sum_{i,I} Z_I r/(1 + b_en Z_I r),  a = 1/4 (same spin), 1/2 (opposite)
! so that e-e cusps (1/4, 1/2) and e-n cusps (-Z: Gaussian orbitals have none) hold, with values,
! gradients and Laplacians analytic. With the nuclear cusp correction of the MOs (vmc_cusp.f90, the
! default) the orbitals carry the e-n cusps, so the e-n term becomes cusp-free (zero slope at r = 0):
!   J_en = - sum_{i,I} b_en r^2 / (1 + b_en^2 r^2)     (range and depth 1/b_en, the same for every nucleus:
! a Z-scaled curvature at the nucleus costs far more kinetic energy than it gains, measured for water)
module vmc_wavefunction
  use, intrinsic :: iso_fortran_env, only: real64
  use vmc_molden
  use vmc_orbitals
  use vmc_cusp
  implicit none
  private
  public :: wf_t, wf_ws_t, wf_setup, wf_workspace, wf_invert, wf_ratio, wf_accept, wf_local_energy

  ! The trial function: read-only once set up, so one wf_t serves every thread.
  type wf_t
    type(basis_t) :: bs
    integer :: na = 0, nb = 0, ne = 0, nbf = 0
    logical :: jastrow = .false., cusp = .false.
    type(cusp_t) :: cusp_a, cusp_b   ! cusp corrections of the alpha and beta MOs
    real(real64) :: b_ee = 1, b_en = 1
  end type

  ! Scratch of one thread: AO values and derivatives at a point, MO values, the Slater matrix being
  ! inverted, cusp corrections at one point. wf_ratio leaves phi here for the following wf_accept.
  type wf_ws_t
    real(real64), allocatable :: chi(:), dchi(:,:), lchi(:), phi(:), d(:,:), t(:)
    real(real64), allocatable :: cv(:), cg(:,:), cl(:)
  end type

contains

  subroutine wf_setup(wf, bs, jastrow, b_ee, b_en, cusp, rc_z, rc_max)
    type(wf_t), intent(out) :: wf
    type(basis_t), intent(in) :: bs
    logical, intent(in) :: jastrow
    real(real64), intent(in) :: b_ee, b_en
    logical, intent(in), optional :: cusp   ! nuclear cusp correction of the MOs (default: on)
    real(real64), intent(in), optional :: rc_z, rc_max   ! its radius, min(rc_z / Z, rc_max) (vmc_cusp defaults)
    wf%bs = bs
    wf%na = bs%nalpha; wf%nb = bs%nbeta; wf%ne = wf%na + wf%nb; wf%nbf = bs%nbf
    wf%jastrow = jastrow; wf%b_ee = b_ee; wf%b_en = b_en
    wf%cusp = .true.
    if (present(cusp)) wf%cusp = cusp
    if (wf%cusp) then
      call cusp_build(wf%cusp_a, bs, bs%ca, rc_z, rc_max)
      call cusp_build(wf%cusp_b, bs, bs%cb, rc_z, rc_max)
    end if
  end subroutine

  ! A workspace sized for wf (one per thread).
  subroutine wf_workspace(wf, ws)
    type(wf_t), intent(in) :: wf
    type(wf_ws_t), intent(out) :: ws
    integer :: n
    n = max(wf%na, wf%nb, 1)
    allocate(ws%chi(wf%nbf), ws%dchi(3, wf%nbf), ws%lchi(wf%nbf), ws%phi(n), ws%d(n, n), ws%t(n), ws%cv(n), &
         ws%cg(3, n), ws%cl(n))
  end subroutine

  subroutine mo_values(wf, ws, c, cu, r, phi)
    type(wf_t), intent(in) :: wf
    type(wf_ws_t), intent(inout) :: ws
    real(real64), intent(in) :: c(:,:), r(3)
    type(cusp_t), intent(in) :: cu
    real(real64), intent(out) :: phi(:)
    integer :: j, a, n
    real(real64) :: d(3), rr
    n = size(c, 2)
    call ao_values(wf%bs, r, ws%chi)
    do j = 1, n
      phi(j) = dot_product(c(:, j), ws%chi)
    end do
    if (.not. wf%cusp) return
    a = cusp_find(cu, wf%bs, r, d, rr)
    if (a == 0) return
    call cusp_delta(cu, wf%bs, c, a, d, rr, .false., ws%cv(1:n), ws%cg(:, 1:n), ws%cl(1:n))
    phi(1:n) = phi(1:n) + ws%cv(1:n)
  end subroutine

  ! Rebuilds both inverse Slater matrices from the positions (Gauss-Jordan, partial pivoting).
  ! ok = .false. when a matrix is numerically singular.
  subroutine wf_invert(wf, ws, pos, ainva, ainvb, ok)
    type(wf_t), intent(in) :: wf
    type(wf_ws_t), intent(inout) :: ws
    real(real64), intent(in) :: pos(:,:)
    real(real64), intent(out) :: ainva(:,:), ainvb(:,:)
    logical, intent(out) :: ok
    integer :: k
    ok = .true.
    do k = 1, wf%na
      call mo_values(wf, ws, wf%bs%ca, wf%cusp_a, pos(:, k), ws%phi)
      ws%d(k, 1:wf%na) = ws%phi(1:wf%na)
    end do
    if (wf%na > 0) call invert(ws%d(1:wf%na, 1:wf%na), ainva, ok)
    if (.not. ok) return
    do k = 1, wf%nb
      call mo_values(wf, ws, wf%bs%cb, wf%cusp_b, pos(:, wf%na + k), ws%phi)
      ws%d(k, 1:wf%nb) = ws%phi(1:wf%nb)
    end do
    if (wf%nb > 0) call invert(ws%d(1:wf%nb, 1:wf%nb), ainvb, ok)
  end subroutine

  subroutine invert(a0, ainv, ok)
    real(real64), intent(in) :: a0(:,:)
    real(real64), intent(out) :: ainv(:,:)
    logical, intent(out) :: ok
    real(real64) :: a(size(a0, 1), size(a0, 1)), f, amax
    integer :: n, i, k, p
    n = size(a0, 1)
    a = a0
    ainv = 0
    do i = 1, n
      ainv(i, i) = 1
    end do
    amax = maxval(abs(a0))
    ok = amax > 0
    if (.not. ok) return
    do k = 1, n
      p = k - 1 + maxloc(abs(a(k:n, k)), 1)
      if (abs(a(p, k)) <= 1e-14_real64 * amax) then
        ok = .false.; return
      end if
      if (p /= k) then
        call swap(a(k, :), a(p, :)); call swap(ainv(k, :), ainv(p, :))
      end if
      f = 1 / a(k, k)
      a(k, :) = a(k, :) * f; ainv(k, :) = ainv(k, :) * f
      do i = 1, n
        if (i == k) cycle
        f = a(i, k)
        if (f == 0) cycle
        a(i, :) = a(i, :) - f * a(k, :)
        ainv(i, :) = ainv(i, :) - f * ainv(k, :)
      end do
    end do
  contains
    subroutine swap(x, y)
      real(real64), intent(inout) :: x(:), y(:)
      real(real64) :: t(size(x))
      t = x; x = y; y = t
    end subroutine
  end subroutine

  ! Jastrow part that depends on electron e at x (the others at pos).
  real(real64) function jastrow_one(wf, pos, e, x) result(j)
    type(wf_t), intent(in) :: wf
    real(real64), intent(in) :: pos(:,:), x(3)
    integer, intent(in) :: e
    integer :: k
    real(real64) :: r, a, u, up, upp
    j = 0
    do k = 1, wf%ne
      if (k == e) cycle
      r = norm2(x - pos(:, k))
      a = 0.5_real64
      if ((k <= wf%na) .eqv. (e <= wf%na)) a = 0.25_real64
      j = j + a * r / (1 + wf%b_ee * r)
    end do
    do k = 1, wf%bs%natom
      r = norm2(x - wf%bs%xyz(:, k))
      call en_term(wf, wf%bs%z(k), r, u, up, upp)
      j = j + u
    end do
  end function

  ! e-n Jastrow u(r) and its radial derivatives: with the e-n cusp (-Z) when the orbitals have none,
  ! cusp-free (r^2 near the nucleus) when the cusp correction puts it in the orbitals.
  pure subroutine en_term(wf, z, r, u, up, upp)
    type(wf_t), intent(in) :: wf
    real(real64), intent(in) :: z, r
    real(real64), intent(out) :: u, up, upp
    real(real64) :: b, q
    if (wf%cusp) then   ! u = -(1/b) s^2 / (1 + s^2), s = b r: depth 1/b, range 1/b, curvature -2b at 0
      b = wf%b_en
      q = 1 + b * b * r * r
      u = -b * r * r / q
      up = -2 * b * r / q**2
      upp = -2 * b * (1 - 3 * b * b * r * r) / q**3
    else
      b = wf%b_en * z
      u = -z * r / (1 + b * r)
      up = -z / (1 + b * r)**2
      upp = 2 * z * b / (1 + b * r)**3
    end if
  end subroutine

  ! Metropolis weight |Psi(new)/Psi(old)|^2 for electron e moved to x; leaves phi(x) in ws%phi and
  ! the determinant ratio in ratio for wf_accept.
  real(real64) function wf_ratio(wf, ws, pos, ainva, ainvb, e, x, ratio) result(p)
    type(wf_t), intent(in) :: wf
    type(wf_ws_t), intent(inout) :: ws
    real(real64), intent(in) :: pos(:,:), ainva(:,:), ainvb(:,:), x(3)
    integer, intent(in) :: e
    real(real64), intent(out) :: ratio
    integer :: k
    if (e <= wf%na) then
      k = e
      call mo_values(wf, ws, wf%bs%ca, wf%cusp_a, x, ws%phi)
      ratio = dot_product(ws%phi(1:wf%na), ainva(:, k))
    else
      k = e - wf%na
      call mo_values(wf, ws, wf%bs%cb, wf%cusp_b, x, ws%phi)
      ratio = dot_product(ws%phi(1:wf%nb), ainvb(:, k))
    end if
    p = ratio * ratio
    if (wf%jastrow .and. p > 0) p = p * exp(2 * (jastrow_one(wf, pos, e, x) - jastrow_one(wf, pos, e, pos(:, e))))
  end function

  ! Accepts the move last priced by wf_ratio (Sherman-Morrison on the spin's inverse).
  subroutine wf_accept(wf, ws, pos, ainva, ainvb, e, x, ratio)
    type(wf_t), intent(in) :: wf
    type(wf_ws_t), intent(inout) :: ws
    real(real64), intent(inout) :: pos(:,:), ainva(:,:), ainvb(:,:)
    integer, intent(in) :: e
    real(real64), intent(in) :: x(3), ratio
    if (e <= wf%na) then
      call sm_update(ainva, e, ws%phi(1:wf%na), ratio, ws%t)
    else
      call sm_update(ainvb, e - wf%na, ws%phi(1:wf%nb), ratio, ws%t)
    end if
    pos(:, e) = x
  end subroutine

  subroutine sm_update(ainv, k, v, ratio, t)
    real(real64), intent(inout) :: ainv(:,:), t(:)
    integer, intent(in) :: k
    real(real64), intent(in) :: v(:), ratio
    integer :: n, m
    real(real64) :: f
    n = size(v)
    do m = 1, n
      t(m) = dot_product(v, ainv(:, m))
    end do
    f = 1 / ratio
    ainv(:, k) = ainv(:, k) * f
    do m = 1, n
      if (m == k) cycle
      ainv(:, m) = ainv(:, m) - ainv(:, k) * t(m)
    end do
  end subroutine

  ! Kinetic energy, e-e and e-n potential energy of one configuration.
  subroutine wf_local_energy(wf, ws, pos, ainva, ainvb, ekin, vee, ven)
    type(wf_t), intent(in) :: wf
    type(wf_ws_t), intent(inout) :: ws
    real(real64), intent(in) :: pos(:,:), ainva(:,:), ainvb(:,:)
    real(real64), intent(out) :: ekin, vee, ven
    integer :: e, k, ac, n
    real(real64) :: gd(3), ld, gj(3), lj, dv(3), r, a, b, u, up, upp, dc(3), rc
    ekin = 0; vee = 0; ven = 0
    do e = 1, wf%ne
      call ao_derivs(wf%bs, pos(:, e), ws%chi, ws%dchi, ws%lchi)
      gd = 0; ld = 0
      if (e <= wf%na) then
        ws%chi = matmul(wf%bs%ca, ainva(:, e))   ! sum_j C(:,j) ainv(j,e): one AO-space vector
        gd = matmul(ws%dchi, ws%chi)
        ld = dot_product(ws%lchi, ws%chi)
        if (wf%cusp) then   ! corrected MOs: add sum_j ainv(j,e) (grad, lap)(phit_j - phi_j)
          ac = cusp_find(wf%cusp_a, wf%bs, pos(:, e), dc, rc)
          if (ac > 0) then
            n = wf%na
            call cusp_delta(wf%cusp_a, wf%bs, wf%bs%ca, ac, dc, rc, .true., ws%cv(1:n), ws%cg(:, 1:n), ws%cl(1:n))
            gd = gd + matmul(ws%cg(:, 1:n), ainva(:, e))
            ld = ld + dot_product(ws%cl(1:n), ainva(:, e))
          end if
        end if
      else
        ws%chi = matmul(wf%bs%cb, ainvb(:, e - wf%na))
        gd = matmul(ws%dchi, ws%chi)
        ld = dot_product(ws%lchi, ws%chi)
        if (wf%cusp) then
          ac = cusp_find(wf%cusp_b, wf%bs, pos(:, e), dc, rc)
          if (ac > 0) then
            n = wf%nb
            call cusp_delta(wf%cusp_b, wf%bs, wf%bs%cb, ac, dc, rc, .true., ws%cv(1:n), ws%cg(:, 1:n), ws%cl(1:n))
            gd = gd + matmul(ws%cg(:, 1:n), ainvb(:, e - wf%na))
            ld = ld + dot_product(ws%cl(1:n), ainvb(:, e - wf%na))
          end if
        end if
      end if
      gj = 0; lj = 0
      do k = 1, wf%ne
        if (k == e) cycle
        dv = pos(:, e) - pos(:, k)
        r = norm2(dv)
        if (k > e) vee = vee + 1 / r
        if (.not. wf%jastrow) cycle
        a = 0.5_real64
        if ((k <= wf%na) .eqv. (e <= wf%na)) a = 0.25_real64
        b = wf%b_ee
        up = a / (1 + b * r)**2
        upp = -2 * a * b / (1 + b * r)**3
        gj = gj + up * dv / r
        lj = lj + upp + 2 * up / r
      end do
      do k = 1, wf%bs%natom
        dv = pos(:, e) - wf%bs%xyz(:, k)
        r = norm2(dv)
        ven = ven - wf%bs%z(k) / r
        if (.not. wf%jastrow) cycle
        call en_term(wf, wf%bs%z(k), r, u, up, upp)
        gj = gj + up * dv / r
        lj = lj + upp + 2 * up / r
      end do
      ekin = ekin - 0.5_real64 * (ld + 2 * dot_product(gd, gj) + lj + dot_product(gj, gj))
    end do
  end subroutine

end module vmc_wavefunction
