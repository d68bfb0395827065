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
    type(ao_t) :: ao                 ! the basis flattened for evaluation (vmc_orbitals)
    integer :: na = 0, nb = 0, ne = 0, nbf = 0
    logical :: jastrow = .false., cusp = .false.
    type(cusp_t) :: cusp_a, cusp_b   ! cusp corrections of the alpha and beta MOs
    real(real64) :: b_ee = 1, b_en = 1
    ! MO coefficients transposed, (n, nbf): phi(:) accumulates ct(:, k) chi(k) over the basis functions, a
    ! loop that vectorises over the MOs while every phi(j) keeps the plain order of its sum
    real(real64), allocatable :: cta(:,:), ctb(:,:)
    real(real64), allocatable :: aee(:,:)   ! (ne, ne) e-e Jastrow coefficient: 1/4 same spin, 1/2 opposite, 0 diagonal
  end type

  ! Scratch of one thread: AO values and derivatives at a point, MO values, the Slater matrix being
  ! inverted, cusp corrections at one point, C ainv for the local energy. wf_ratio leaves phi here for the
  ! following wf_accept.
  type wf_ws_t
    real(real64), allocatable :: chi(:), dchi(:,:), lchi(:), phi(:), d(:,:), t(:)
    real(real64), allocatable :: cv(:), cg(:,:), cl(:), v(:,:), r2(:)
  end type

contains

  subroutine wf_setup(wf, bs, jastrow, b_ee, b_en, cusp, rc_z, rc_max)
    type(wf_t), intent(out) :: wf
    type(basis_t), intent(in) :: bs
    logical, intent(in) :: jastrow
    real(real64), intent(in) :: b_ee, b_en
    logical, intent(in), optional :: cusp   ! nuclear cusp correction of the MOs (default: on)
    real(real64), intent(in), optional :: rc_z, rc_max   ! its radius, min(rc_z / Z, rc_max) (vmc_cusp defaults)
    integer :: j, k
    wf%bs = bs
    call ao_setup(wf%ao, bs)
    wf%na = bs%nalpha; wf%nb = bs%nbeta; wf%ne = wf%na + wf%nb; wf%nbf = bs%nbf
    wf%cta = transpose(bs%ca); wf%ctb = transpose(bs%cb)
    allocate(wf%aee(wf%ne, wf%ne))
    do k = 1, wf%ne
      do j = 1, wf%ne
        wf%aee(j, k) = merge(0.25_real64, 0.5_real64, (j <= wf%na) .eqv. (k <= wf%na))
      end do
      wf%aee(k, k) = 0
    end do
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
         ws%cg(3, n), ws%cl(n), ws%v(wf%nbf, n), ws%r2(wf%bs%natom))
  end subroutine

  ! MOs of one spin at r: c(nbf, n) the coefficients, ct their transpose.
  subroutine mo_values(wf, ws, c, ct, cu, r, phi)
    type(wf_t), intent(in) :: wf
    type(wf_ws_t), intent(inout) :: ws
    real(real64), intent(in), contiguous :: c(:,:), ct(:,:)
    real(real64), intent(in) :: r(3)
    type(cusp_t), intent(in) :: cu
    real(real64), intent(out), contiguous :: phi(:)
    integer :: a, n
    real(real64) :: d(3), rr
    n = size(c, 2)
    call ao_values(wf%ao, wf%bs, r, ws%chi, ws%r2)
    call ct_times_chi(ct, ws%chi, phi(1:n))
    if (.not. wf%cusp) return
    if (cusp_atom(cu, ws%r2) == 0) return
    a = cusp_find(cu, wf%bs, r, d, rr)
    if (a == 0) return
    call cusp_delta(cu, wf%bs, c, a, d, rr, .false., ws%cv(1:n), ws%cg(:, 1:n), ws%cl(1:n))
    phi(1:n) = phi(1:n) + ws%cv(1:n)
  end subroutine

  ! phi(j) = sum_k ct(j, k) chi(k), in k order for every j (the loop over j vectorises).
  ! Four basis functions per pass (phi loaded and stored once per four terms; Fortran adds left to right,
  ! so each phi(j) is still ((phi + t1) + t2) + ...).
  pure subroutine ct_times_chi(ct, chi, phi)
    real(real64), intent(in), contiguous :: ct(:,:), chi(:)
    real(real64), intent(out), contiguous :: phi(:)
    integer :: j, k, nk
    real(real64) :: x1, x2, x3, x4
    phi = 0
    nk = size(chi)
    do k = 1, nk - 3, 4
      x1 = chi(k); x2 = chi(k + 1); x3 = chi(k + 2); x4 = chi(k + 3)
      do j = 1, size(phi)
        phi(j) = phi(j) + ct(j, k) * x1 + ct(j, k + 1) * x2 + ct(j, k + 2) * x3 + ct(j, k + 3) * x4
      end do
    end do
    do k = nk - mod(nk, 4) + 1, nk
      x1 = chi(k)
      do j = 1, size(phi)
        phi(j) = phi(j) + ct(j, k) * x1
      end do
    end do
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
      call mo_values(wf, ws, wf%bs%ca, wf%cta, wf%cusp_a, pos(:, k), ws%phi)
      ws%d(k, 1:wf%na) = ws%phi(1:wf%na)
    end do
    if (wf%na > 0) call invert(ws%d(1:wf%na, 1:wf%na), ainva, ok)
    if (.not. ok) return
    do k = 1, wf%nb
      call mo_values(wf, ws, wf%bs%cb, wf%ctb, wf%cusp_b, pos(:, wf%na + k), ws%phi)
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

  ! Change of the Jastrow exponent when electron e moves from pos(:, e) to x: the pair terms new minus old
  ! element by element (a loop without branches, vectorised: aee(e, e) = 0 drops the electron itself),
  ! then summed in order.
  real(real64) function jastrow_diff(wf, pos, e, x) result(dj)
    type(wf_t), intent(in) :: wf
    real(real64), intent(in), contiguous :: pos(:,:)
    real(real64), intent(in) :: x(3)
    integer, intent(in) :: e
    integer :: k
    real(real64) :: rn, ro, b, xo(3), t(wf%ne), tn(wf%bs%natom)
    xo = pos(:, e)
    b = wf%b_ee
    do k = 1, wf%ne
      rn = sqrt((x(1) - pos(1, k))**2 + (x(2) - pos(2, k))**2 + (x(3) - pos(3, k))**2)
      ro = sqrt((xo(1) - pos(1, k))**2 + (xo(2) - pos(2, k))**2 + (xo(3) - pos(3, k))**2)
      t(k) = wf%aee(k, e) * (rn / (1 + b * rn) - ro / (1 + b * ro))
    end do
    if (wf%cusp) then
      b = wf%b_en
      do k = 1, wf%bs%natom
        rn = (x(1) - wf%bs%xyz(1, k))**2 + (x(2) - wf%bs%xyz(2, k))**2 + (x(3) - wf%bs%xyz(3, k))**2
        ro = (xo(1) - wf%bs%xyz(1, k))**2 + (xo(2) - wf%bs%xyz(2, k))**2 + (xo(3) - wf%bs%xyz(3, k))**2
        tn(k) = b * (ro / (1 + b * b * ro) - rn / (1 + b * b * rn))   ! -b r^2/(1 + b^2 r^2), new - old
      end do
    else
      do k = 1, wf%bs%natom
        rn = sqrt((x(1) - wf%bs%xyz(1, k))**2 + (x(2) - wf%bs%xyz(2, k))**2 + (x(3) - wf%bs%xyz(3, k))**2)
        ro = sqrt((xo(1) - wf%bs%xyz(1, k))**2 + (xo(2) - wf%bs%xyz(2, k))**2 + (xo(3) - wf%bs%xyz(3, k))**2)
        b = wf%b_en * wf%bs%z(k)
        tn(k) = wf%bs%z(k) * (ro / (1 + b * ro) - rn / (1 + b * rn))   ! -Z r/(1 + b Z r), new - old
      end do
    end if
    dj = 0
    do k = 1, wf%ne
      dj = dj + t(k)
    end do
    do k = 1, wf%bs%natom
      dj = dj + tn(k)
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
      q = 1 / (1 + b * b * r * r)
      u = -b * r * r * q
      up = -2 * b * r * q * q
      upp = -2 * b * (1 - 3 * b * b * r * r) * q * q * q
    else
      b = wf%b_en * z
      q = 1 / (1 + b * r)
      u = -z * r * q
      up = -z * q * q
      upp = 2 * z * b * q * q * q
    end if
  end subroutine

  ! Metropolis weight |Psi(new)/Psi(old)|^2 for electron e moved to x; leaves phi(x) in ws%phi and
  ! the determinant ratio in ratio for wf_accept.
  real(real64) function wf_ratio(wf, ws, pos, ainva, ainvb, e, x, ratio) result(p)
    type(wf_t), intent(in) :: wf
    type(wf_ws_t), intent(inout) :: ws
    real(real64), intent(in), contiguous :: pos(:,:), ainva(:,:), ainvb(:,:)
    real(real64), intent(in) :: x(3)
    integer, intent(in) :: e
    real(real64), intent(out) :: ratio
    integer :: k
    if (e <= wf%na) then
      k = e
      call mo_values(wf, ws, wf%bs%ca, wf%cta, wf%cusp_a, x, ws%phi)
      ratio = dot_product(ws%phi(1:wf%na), ainva(:, k))
    else
      k = e - wf%na
      call mo_values(wf, ws, wf%bs%cb, wf%ctb, wf%cusp_b, x, ws%phi)
      ratio = dot_product(ws%phi(1:wf%nb), ainvb(:, k))
    end if
    p = ratio * ratio
    if (wf%jastrow .and. p > 0) p = p * exp(2 * jastrow_diff(wf, pos, e, x))
  end function

  ! Accepts the move last priced by wf_ratio (Sherman-Morrison on the spin's inverse).
  subroutine wf_accept(wf, ws, pos, ainva, ainvb, e, x, ratio)
    type(wf_t), intent(in) :: wf
    type(wf_ws_t), intent(inout) :: ws
    real(real64), intent(inout), contiguous :: pos(:,:), ainva(:,:), ainvb(:,:)
    integer, intent(in) :: e
    real(real64), intent(in) :: x(3), ratio
    if (e <= wf%na) then
      call sm_update(ainva, e, ws%phi(1:wf%na), ratio, ws%t)
    else
      call sm_update(ainvb, e - wf%na, ws%phi(1:wf%nb), ratio, ws%t)
    end if
    pos(:, e) = x
  end subroutine

  ! ainv <- inverse after row k of the Slater matrix became v: t = v^T ainv, column k scaled by 1/ratio,
  ! the others less column k times t(m).
  pure subroutine sm_update(ainv, k, v, ratio, t)
    real(real64), intent(inout), contiguous :: ainv(:,:), t(:)
    integer, intent(in) :: k
    real(real64), intent(in), contiguous :: v(:)
    real(real64), intent(in) :: ratio
    integer :: n, m, j
    real(real64) :: f, s
    n = size(v)
    do m = 1, n
      s = 0
      do j = 1, n
        s = s + v(j) * ainv(j, m)
      end do
      t(m) = s
    end do
    f = 1 / ratio
    do j = 1, n
      ainv(j, k) = ainv(j, k) * f
    end do
    do m = 1, n
      if (m == k) cycle
      f = t(m)
      do j = 1, n
        ainv(j, m) = ainv(j, m) - ainv(j, k) * f
      end do
    end do
  end subroutine

  ! Kinetic energy, e-e and e-n potential energy of one configuration.
  ! -1/2 lap(det)/det for electron e (alpha) is -1/2 sum_j lap phi_j(r_e) ainv(j, e) = -1/2 lap(chi) . v_e
  ! with v_e = C ainv(:, e) in AO space: v for all electrons of a spin is one product C ainv, made first.
  subroutine wf_local_energy(wf, ws, pos, ainva, ainvb, ekin, vee, ven)
    type(wf_t), intent(in) :: wf
    type(wf_ws_t), intent(inout) :: ws
    real(real64), intent(in), contiguous :: pos(:,:), ainva(:,:), ainvb(:,:)
    real(real64), intent(out) :: ekin, vee, ven
    integer :: e, k, ac, n, ks
    real(real64) :: gd(3), ld, gj(3, wf%ne), lj(wf%ne), dv(3), r, a, b, u, up, upp, dc(3), rc, f(3)
    ekin = 0; vee = 0; ven = 0
    ! Jastrow gradient and Laplacian of every electron, and the potential energy, pair by pair (each e-e
    ! distance once; u(r_ek) contributes +grad to e and -grad to k).
    gj = 0; lj = 0
    b = wf%b_ee
    do e = 1, wf%ne
      do k = e + 1, wf%ne
        dv = pos(:, e) - pos(:, k)
        r = sqrt(dv(1)**2 + dv(2)**2 + dv(3)**2)
        vee = vee + 1 / r
        if (.not. wf%jastrow) cycle
        a = 0.5_real64
        if ((k <= wf%na) .eqv. (e <= wf%na)) a = 0.25_real64
        up = a / (1 + b * r)**2
        upp = -2 * a * b / (1 + b * r)**3
        f = up * dv / r
        gj(:, e) = gj(:, e) + f
        gj(:, k) = gj(:, k) - f
        lj(e) = lj(e) + upp + 2 * up / r
        lj(k) = lj(k) + upp + 2 * up / r
      end do
      do k = 1, wf%bs%natom
        dv = pos(:, e) - wf%bs%xyz(:, k)
        r = sqrt(dv(1)**2 + dv(2)**2 + dv(3)**2)
        ven = ven - wf%bs%z(k) / r
        if (.not. wf%jastrow) cycle
        call en_term(wf, wf%bs%z(k), r, u, up, upp)
        gj(:, e) = gj(:, e) + up * dv / r
        lj(e) = lj(e) + upp + 2 * up / r
      end do
    end do
    do e = 1, wf%ne
      if (e == 1 .and. wf%na > 0) call c_times_ainv(wf%bs%ca, ainva, ws%v)
      if (e == wf%na + 1) call c_times_ainv(wf%bs%cb, ainvb, ws%v)
      ks = e
      if (e > wf%na) ks = e - wf%na
      call ao_derivs(wf%ao, wf%bs, pos(:, e), ws%dchi, ws%lchi, ws%r2)
      call grad_lap(ws%dchi, ws%lchi, ws%v(:, ks), gd, ld)
      ac = 0
      if (wf%cusp) ac = cusp_atom(wf%cusp_a, ws%r2) + cusp_atom(wf%cusp_b, ws%r2)   ! inside a sphere?
      if (ac > 0) then   ! corrected MOs: add sum_j ainv(j,e) (grad, lap)(phit_j - phi_j)
        if (e <= wf%na) then
          ac = cusp_find(wf%cusp_a, wf%bs, pos(:, e), dc, rc)
          if (ac > 0) then
            n = wf%na
            call cusp_delta(wf%cusp_a, wf%bs, wf%bs%ca, ac, dc, rc, .true., ws%cv(1:n), ws%cg(:, 1:n), ws%cl(1:n))
            gd = gd + matmul(ws%cg(:, 1:n), ainva(:, ks))
            ld = ld + dot_product(ws%cl(1:n), ainva(:, ks))
          end if
        else
          ac = cusp_find(wf%cusp_b, wf%bs, pos(:, e), dc, rc)
          if (ac > 0) then
            n = wf%nb
            call cusp_delta(wf%cusp_b, wf%bs, wf%bs%cb, ac, dc, rc, .true., ws%cv(1:n), ws%cg(:, 1:n), ws%cl(1:n))
            gd = gd + matmul(ws%cg(:, 1:n), ainvb(:, ks))
            ld = ld + dot_product(ws%cl(1:n), ainvb(:, ks))
          end if
        end if
      end if
      ekin = ekin - 0.5_real64 * (ld + 2 * dot_product(gd, gj(:, e)) + lj(e) + dot_product(gj(:, e), gj(:, e)))
    end do
  end subroutine

  ! gd = dchi . v, ld = lchi . v (AO gradients and Laplacians against one AO-space vector).
  pure subroutine grad_lap(dchi, lchi, v, gd, ld)
    real(real64), intent(in), contiguous :: dchi(:,:), lchi(:), v(:)
    real(real64), intent(out) :: gd(3), ld
    integer :: k
    real(real64) :: g1, g2, g3
    g1 = 0; g2 = 0; g3 = 0; ld = 0
    do k = 1, size(v)
      g1 = g1 + dchi(1, k) * v(k)
      g2 = g2 + dchi(2, k) * v(k)
      g3 = g3 + dchi(3, k) * v(k)
      ld = ld + lchi(k) * v(k)
    end do
    gd = [g1, g2, g3]
  end subroutine

  ! v(:, k) = sum_j c(:, j) ainv(j, k): AO-space vectors of all electrons of one spin (vectorised over AOs).
  pure subroutine c_times_ainv(c, ainv, v)
    real(real64), intent(in), contiguous :: c(:,:), ainv(:,:)
    real(real64), intent(inout), contiguous :: v(:,:)
    integer :: i, j, k, n, nbf
    real(real64) :: x1, x2, x3, x4
    n = size(c, 2); nbf = size(c, 1)
    do k = 1, n
      v(:, k) = 0
      do j = 1, n - 3, 4   ! four terms per pass, as in ct_times_chi
        x1 = ainv(j, k); x2 = ainv(j + 1, k); x3 = ainv(j + 2, k); x4 = ainv(j + 3, k)
        do i = 1, nbf
          v(i, k) = v(i, k) + c(i, j) * x1 + c(i, j + 1) * x2 + c(i, j + 2) * x3 + c(i, j + 3) * x4
        end do
      end do
      do j = n - mod(n, 4) + 1, n
        x1 = ainv(j, k)
        do i = 1, nbf
          v(i, k) = v(i, k) + c(i, j) * x1
        end do
      end do
    end do
  end subroutine

end module vmc_wavefunction
