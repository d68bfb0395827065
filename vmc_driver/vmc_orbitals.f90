! vmc_orbitals.f90 -- atomic-orbital values, gradients and Laplacians at a point.
! phi = P(x,y,z) R(r^2) with P a homogeneous polynomial of degree l; R = sum c exp(-a r^2).
! grad phi = grad(P) R + P R' 2r ;  lap phi = lap(P) R + P [(2l+3) g1 + r^2 g2] with
! g1 = sum c (-2a) e, g2 = sum c (4a^2) e (Euler's theorem gives r.grad P = l P).
!
! For speed (this is most of the wavefunction's time) the basis is flattened once (ao_setup): the distinct
! exponents of each atom (an SP shell's s and p share theirs), so that at a point every exponential is
! computed once, in one loop the compiler vectorises (glibc's vector exp, libmvec); each shell then sums
! its terms c * exp. The displacement from each atom is computed once per point, not once per shell, and
! shells whose functions are plain monomials (s, p, cartesian d and f) skip the transformation.
module vmc_orbitals
  use, intrinsic :: iso_fortran_env, only: real64
  use vmc_molden
  implicit none
  private
  public :: ao_t, ao_setup, ao_values, ao_derivs

  ! A primitive with alpha r^2 > SCREEN is below exp(-40) ~ 4e-18 of its peak: zero (the tight core
  ! primitives are negligible almost everywhere).
  real(real64), parameter :: SCREEN = 40.0_real64

  type ao_t
    integer :: natom = 0, nprim = 0
    real(real64), allocatable :: alpha(:)           ! (nprim) distinct exponents, atom by atom, decreasing
    integer, allocatable :: patom(:)                ! (nprim) their atom
    integer, allocatable :: p0(:)                   ! (natom + 1) atom a's exponents: p0(a) .. p0(a + 1) - 1
    integer, allocatable :: t0(:), tn(:)            ! (nshell) a shell's first term and number of terms
    integer, allocatable :: tprim(:)                ! (terms) the term's primitive
    real(real64), allocatable :: c0(:), c1(:), c2(:)   ! (terms) c, -2 a c, 4 a^2 c
    integer, allocatable :: tshell(:)               ! (terms) the term's shell
    logical, allocatable :: mono(:)                 ! (nshell) functions are the monomials themselves
    ! shells by kind, for loops without branches: s, p, and the rest (d, f)
    integer, allocatable :: s_sh(:), p_sh(:), x_sh(:)
  end type

contains

  subroutine ao_setup(ao, bs)
    type(ao_t), intent(out) :: ao
    type(basis_t), intent(in) :: bs
    integer :: s, k, p, nt
    real(real64) :: a
    ao%natom = bs%natom
    nt = 0
    do s = 1, bs%nshell
      nt = nt + bs%sh(s)%nprim
    end do
    allocate(ao%alpha(nt), ao%patom(nt), ao%t0(bs%nshell), ao%tn(bs%nshell), ao%tprim(nt), ao%c0(nt), ao%c1(nt), &
         ao%c2(nt), ao%mono(bs%nshell), ao%tshell(nt))
    ao%nprim = 0; nt = 0
    do s = 1, bs%nshell
      associate (sh => bs%sh(s))
        ao%t0(s) = nt + 1; ao%tn(s) = sh%nprim
        ao%mono(s) = sh%l < 2 .or. .not. sh%pure
        do k = 1, sh%nprim
          a = sh%alpha(k)
          p = findloc(ao%alpha(1:ao%nprim) == a .and. ao%patom(1:ao%nprim) == sh%atom, .true., 1)
          if (p == 0) then
            ao%nprim = ao%nprim + 1; p = ao%nprim
            ao%alpha(p) = a; ao%patom(p) = sh%atom
          end if
          nt = nt + 1
          ao%tprim(nt) = p; ao%tshell(nt) = s
          ao%c0(nt) = sh%coef(k); ao%c1(nt) = -2 * a * sh%coef(k); ao%c2(nt) = 4 * a * a * sh%coef(k)
        end do
      end associate
    end do
    call sort_by_atom(ao)
    ao%s_sh = pack([(s, s = 1, bs%nshell)], [(bs%sh(s)%l == 0, s = 1, bs%nshell)])
    ao%p_sh = pack([(s, s = 1, bs%nshell)], [(bs%sh(s)%l == 1, s = 1, bs%nshell)])
    ao%x_sh = pack([(s, s = 1, bs%nshell)], [(bs%sh(s)%l >= 2, s = 1, bs%nshell)])
  end subroutine

  ! The distinct exponents grouped by atom and, within an atom, in decreasing order (the ones a point's
  ! distance screens are then a leading run); the terms' primitive indices follow them.
  subroutine sort_by_atom(ao)
    type(ao_t), intent(inout) :: ao
    integer :: order(ao%nprim), newpos(ao%nprim), a, p, q, n, k
    real(real64) :: alpha(ao%nprim)
    allocate(ao%p0(ao%natom + 1))
    n = 0
    do a = 1, ao%natom
      ao%p0(a) = n + 1
      do p = 1, ao%nprim
        if (ao%patom(p) /= a) cycle
        n = n + 1; order(n) = p
        do q = n, ao%p0(a) + 1, -1   ! insertion by decreasing exponent
          if (ao%alpha(order(q - 1)) >= ao%alpha(order(q))) exit
          k = order(q); order(q) = order(q - 1); order(q - 1) = k
        end do
      end do
    end do
    ao%p0(ao%natom + 1) = n + 1
    do p = 1, n
      newpos(order(p)) = p
      alpha(p) = ao%alpha(order(p))
    end do
    ao%alpha(1:n) = alpha(1:n)
    ao%patom(1:n) = ao%patom(order(1:n))
    ao%tprim = newpos(ao%tprim)
  end subroutine

  ! Displacements d(:, a) = r - R_a, squared distances and every distinct primitive's exponential.
  pure subroutine radial(ao, bs, r, d, r2, ex)
    type(ao_t), intent(in) :: ao
    type(basis_t), intent(in) :: bs
    real(real64), intent(in) :: r(3)
    real(real64), intent(out) :: d(3, ao%natom), r2(ao%natom), ex(ao%nprim)
    integer :: a, p, p1
    real(real64) :: lim
    do a = 1, ao%natom
      d(:, a) = r - bs%xyz(:, a)
      r2(a) = d(1, a)**2 + d(2, a)**2 + d(3, a)**2
      ! exponents above SCREEN / r^2 are screened: a leading run of this atom's (decreasing) exponents
      lim = SCREEN / max(r2(a), tiny(1.0_real64))
      p1 = ao%p0(a)
      do while (p1 < ao%p0(a + 1))
        if (ao%alpha(p1) <= lim) exit
        ex(p1) = 0
        p1 = p1 + 1
      end do
      p = ao%p0(a + 1) - p1
      if (p > 0) call exp_run(p, ao%alpha(p1:), r2(a), ex(p1:))
    end do
  end subroutine

  ! ex = exp(-alpha r2) on a contiguous run: explicit-shape arrays, so the loop vectorises (libmvec).
  pure subroutine exp_run(n, alpha, r2, ex)
    integer, intent(in) :: n
    real(real64), intent(in) :: alpha(n), r2
    real(real64), intent(out) :: ex(n)
    integer :: p
    do p = 1, n
      ex(p) = exp(-alpha(p) * r2)
    end do
  end subroutine

  ! chi(nbf): values only (the Metropolis ratio needs nothing else). A shell beyond its cut-off radius
  ! (rcut2: every primitive below exp(-42)) has all its primitives screened, hence zero functions.
  subroutine ao_values(ao, bs, r, chi, r2out)
    type(ao_t), intent(in) :: ao
    type(basis_t), intent(in) :: bs
    real(real64), intent(in) :: r(3)
    real(real64), intent(out) :: chi(:)
    real(real64), intent(out), optional :: r2out(:)   ! squared distances to the atoms (for the cusp spheres)
    integer :: s, k, i
    real(real64) :: d(3, ao%natom), r2(ao%natom), ex(ao%nprim), g0(size(ao%t0)), dd(3)
    call radial(ao, bs, r, d, r2, ex)
    if (present(r2out)) r2out(1:ao%natom) = r2
    g0 = 0
    do k = 1, size(ao%tprim)
      g0(ao%tshell(k)) = g0(ao%tshell(k)) + ao%c0(k) * ex(ao%tprim(k))
    end do
    do i = 1, size(ao%s_sh)
      s = ao%s_sh(i)
      chi(bs%sh(s)%bf0 + 1) = g0(s)
    end do
    do i = 1, size(ao%p_sh)                ! x, y, z
      s = ao%p_sh(i)
      chi(bs%sh(s)%bf0 + 1:bs%sh(s)%bf0 + 3) = d(:, bs%sh(s)%atom) * g0(s)
    end do
    do i = 1, size(ao%x_sh)
      s = ao%x_sh(i)
      associate (sh => bs%sh(s))
        dd = d(:, sh%atom)
        if (sh%l == 2 .and. ao%mono(s)) then   ! cartesian d: xx yy zz xy xz yz
          chi(sh%bf0 + 1:sh%bf0 + 6) = [dd(1) * dd(1), dd(2) * dd(2), dd(3) * dd(3), dd(1) * dd(2), &
               dd(1) * dd(3), dd(2) * dd(3)] * g0(s)
        else
          call transformed(sh, ao%mono(s), dd, g0(s), chi)
        end if
      end associate
    end do
  end subroutine

  ! Values of a d or f shell: monomials, transformed unless cartesian.
  pure subroutine transformed(sh, mono_only, dd, g0, chi)
    type(shell_t), intent(in) :: sh
    logical, intent(in) :: mono_only
    real(real64), intent(in) :: dd(3), g0
    real(real64), intent(inout) :: chi(:)
    real(real64) :: pw(0:3, 3), mono(10), v
    integer :: k, c, m, j
    pw(0, :) = 1
    do k = 1, sh%l
      pw(k, :) = pw(k - 1, :) * dd
    end do
    do c = 1, sh%ncart
      mono(c) = pw(sh%ijk(1, c), 1) * pw(sh%ijk(2, c), 2) * pw(sh%ijk(3, c), 3)
    end do
    if (mono_only) then
      chi(sh%bf0 + 1:sh%bf0 + sh%ncart) = mono(1:sh%ncart) * g0
      return
    end if
    do m = 1, sh%nfunc
      v = 0
      do j = 1, sh%ncart
        v = v + sh%t(m, j) * mono(j)
      end do
      chi(sh%bf0 + m) = v * g0
    end do
  end subroutine

  ! Gradients (3, nbf) and Laplacians (the local energy needs no values).
  subroutine ao_derivs(ao, bs, r, dchi, lchi, r2out)
    type(ao_t), intent(in) :: ao
    type(basis_t), intent(in) :: bs
    real(real64), intent(in) :: r(3)
    real(real64), intent(out) :: dchi(:,:), lchi(:)
    real(real64), intent(out), optional :: r2out(:)   ! squared distances to the atoms (for the cusp spheres)
    integer :: s, k, c, i, j, m, e(3), a, ii
    real(real64) :: d(3, ao%natom), r2(ao%natom), ex(ao%nprim), g0, g1, g2, pw(-2:3, 3), mono(10), dm(3, 10), &
         lm(10), rad, dd(3), x, gs(3, size(ao%t0))
    call radial(ao, bs, r, d, r2, ex)
    if (present(r2out)) r2out(1:ao%natom) = r2
    gs = 0
    do k = 1, size(ao%tprim)
      x = ex(ao%tprim(k)); s = ao%tshell(k)
      gs(1, s) = gs(1, s) + ao%c0(k) * x
      gs(2, s) = gs(2, s) + ao%c1(k) * x
      gs(3, s) = gs(3, s) + ao%c2(k) * x
    end do
    ! s and p shells (most of a basis): lap P = 0 for l <= 1.
    do ii = 1, size(ao%s_sh)
      s = ao%s_sh(ii); i = bs%sh(s)%bf0 + 1; a = bs%sh(s)%atom
      dchi(:, i) = gs(2, s) * d(:, a)
      lchi(i) = 3 * gs(2, s) + r2(a) * gs(3, s)
    end do
    do ii = 1, size(ao%p_sh)
      s = ao%p_sh(ii); a = bs%sh(s)%atom
      g0 = gs(1, s); g1 = gs(2, s); dd = d(:, a)
      rad = 5 * g1 + r2(a) * gs(3, s)
      do m = 1, 3
        i = bs%sh(s)%bf0 + m
        dchi(:, i) = dd(m) * g1 * dd
        dchi(m, i) = dchi(m, i) + g0
        lchi(i) = dd(m) * rad
      end do
    end do
    do ii = 1, size(ao%x_sh)
      s = ao%x_sh(ii)
      associate (sh => bs%sh(s))
        a = sh%atom
        g0 = gs(1, s); g1 = gs(2, s); g2 = gs(3, s)
        dd = d(:, a)
        if (sh%l == 2 .and. ao%mono(s)) then   ! cartesian d (6-31G*): xx yy zz xy xz yz written out
          rad = 7 * g1 + r2(a) * g2
          mono(1:6) = [dd(1) * dd(1), dd(2) * dd(2), dd(3) * dd(3), dd(1) * dd(2), dd(1) * dd(3), dd(2) * dd(3)]
          i = sh%bf0
          do c = 1, 6
            dchi(:, i + c) = mono(c) * g1 * dd
          end do
          dchi(1, i + 1) = dchi(1, i + 1) + 2 * dd(1) * g0
          dchi(2, i + 2) = dchi(2, i + 2) + 2 * dd(2) * g0
          dchi(3, i + 3) = dchi(3, i + 3) + 2 * dd(3) * g0
          dchi(1:2, i + 4) = dchi(1:2, i + 4) + [dd(2), dd(1)] * g0
          dchi(1, i + 5) = dchi(1, i + 5) + dd(3) * g0
          dchi(3, i + 5) = dchi(3, i + 5) + dd(1) * g0
          dchi(2:3, i + 6) = dchi(2:3, i + 6) + [dd(3), dd(2)] * g0
          lchi(i + 1:i + 6) = mono(1:6) * rad
          lchi(i + 1:i + 3) = lchi(i + 1:i + 3) + 2 * g0
          cycle
        end if
        pw(-2:-1, :) = 0
        pw(0, :) = 1
        do k = 1, sh%l
          pw(k, :) = pw(k - 1, :) * dd
        end do
        do c = 1, sh%ncart
          e = sh%ijk(:, c)
          mono(c) = pw(e(1), 1) * pw(e(2), 2) * pw(e(3), 3)
          dm(1, c) = e(1) * pw(e(1) - 1, 1) * pw(e(2), 2) * pw(e(3), 3)
          dm(2, c) = e(2) * pw(e(1), 1) * pw(e(2) - 1, 2) * pw(e(3), 3)
          dm(3, c) = e(3) * pw(e(1), 1) * pw(e(2), 2) * pw(e(3) - 1, 3)
          lm(c) = e(1) * (e(1) - 1) * pw(e(1) - 2, 1) * pw(e(2), 2) * pw(e(3), 3) + &
               e(2) * (e(2) - 1) * pw(e(1), 1) * pw(e(2) - 2, 2) * pw(e(3), 3) + &
               e(3) * (e(3) - 1) * pw(e(1), 1) * pw(e(2), 2) * pw(e(3) - 2, 3)
        end do
        rad = (2 * sh%l + 3) * g1 + r2(a) * g2
        if (ao%mono(s)) then           ! cartesian: each function is one monomial
          do c = 1, sh%ncart
            i = sh%bf0 + c
            dchi(:, i) = dm(:, c) * g0 + mono(c) * g1 * dd
            lchi(i) = lm(c) * g0 + mono(c) * rad
          end do
          cycle
        end if
        do m = 1, sh%nfunc
          i = sh%bf0 + m
          dchi(:, i) = 0; lchi(i) = 0
          do j = 1, sh%ncart
            if (sh%t(m, j) == 0) cycle
            dchi(:, i) = dchi(:, i) + sh%t(m, j) * (dm(:, j) * g0 + mono(j) * g1 * dd)
            lchi(i) = lchi(i) + sh%t(m, j) * (lm(j) * g0 + mono(j) * rad)
          end do
        end do
      end associate
    end do
  end subroutine

end module vmc_orbitals
