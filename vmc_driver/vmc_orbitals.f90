! vmc_orbitals.f90 -- atomic-orbital values, gradients and Laplacians at a point, and occupied MOs.
! phi = P(x,y,z) R(r^2) with P a homogeneous polynomial of degree l; R = sum c exp(-a r^2).
! grad phi = grad(P) R + P R' 2r ;  lap phi = lap(P) R + P [(2l+3) g1 + r^2 g2] with
! g1 = sum c (-2a) e, g2 = sum c (4a^2) e (Euler's theorem gives r.grad P = l P).
module vmc_orbitals
  use, intrinsic :: iso_fortran_env, only: real64
  use vmc_molden
  implicit none
  private
  public :: ao_values, ao_derivs

  ! A primitive with alpha r^2 > SCREEN is below exp(-40) ~ 4e-18 of its peak: skipped (the tight core
  ! primitives are negligible almost everywhere, and exp dominates the cost).
  real(real64), parameter :: SCREEN = 40.0_real64

contains

  ! chi(nbf): values only (the Metropolis ratio needs nothing else).
  subroutine ao_values(bs, r, chi)
    type(basis_t), intent(in) :: bs
    real(real64), intent(in) :: r(3)
    real(real64), intent(out) :: chi(:)
    integer :: s, k, c, i, j, m
    real(real64) :: d(3), r2, g0, pw(0:3, 3), mono(10)
    do s = 1, bs%nshell
      associate (sh => bs%sh(s))
        d = r - bs%xyz(:, sh%atom)
        r2 = d(1)**2 + d(2)**2 + d(3)**2
        if (r2 > sh%rcut2) then
          chi(sh%bf0 + 1:sh%bf0 + sh%nfunc) = 0
          cycle
        end if
        g0 = 0
        do k = 1, sh%nprim
          if (sh%alpha(k) * r2 > SCREEN) cycle
          g0 = g0 + sh%coef(k) * exp(-sh%alpha(k) * r2)
        end do
        if (sh%l == 0) then
          chi(sh%bf0 + 1) = g0 * sh%t(1, 1)
          cycle
        end if
        if (sh%l == 1) then            ! x, y, z (t is the identity for p)
          chi(sh%bf0 + 1:sh%bf0 + 3) = d * g0
          cycle
        end if
        pw(0, :) = 1
        do k = 1, sh%l
          pw(k, :) = pw(k - 1, :) * d
        end do
        do c = 1, sh%ncart
          mono(c) = pw(sh%ijk(1, c), 1) * pw(sh%ijk(2, c), 2) * pw(sh%ijk(3, c), 3)
        end do
        do m = 1, sh%nfunc
          i = sh%bf0 + m
          chi(i) = 0
          do j = 1, sh%ncart
            chi(i) = chi(i) + sh%t(m, j) * mono(j)
          end do
          chi(i) = chi(i) * g0
        end do
      end associate
    end do
  end subroutine

  ! Values, gradients (3, nbf) and Laplacians.
  subroutine ao_derivs(bs, r, chi, dchi, lchi)
    type(basis_t), intent(in) :: bs
    real(real64), intent(in) :: r(3)
    real(real64), intent(out) :: chi(:), dchi(:,:), lchi(:)
    integer :: s, k, c, i, j, m, e(3)
    real(real64) :: d(3), r2, g0, g1, g2, ex, pw(-2:3, 3), mono(10), dm(3, 10), lm(10), a, rad
    do s = 1, bs%nshell
      associate (sh => bs%sh(s))
        d = r - bs%xyz(:, sh%atom)
        r2 = d(1)**2 + d(2)**2 + d(3)**2
        if (r2 > sh%rcut2) then
          chi(sh%bf0 + 1:sh%bf0 + sh%nfunc) = 0
          dchi(:, sh%bf0 + 1:sh%bf0 + sh%nfunc) = 0
          lchi(sh%bf0 + 1:sh%bf0 + sh%nfunc) = 0
          cycle
        end if
        g0 = 0; g1 = 0; g2 = 0
        do k = 1, sh%nprim
          a = sh%alpha(k)
          if (a * r2 > SCREEN) cycle
          ex = sh%coef(k) * exp(-a * r2)
          g0 = g0 + ex
          g1 = g1 - 2 * a * ex
          g2 = g2 + 4 * a * a * ex
        end do
        ! Fast paths for s and p shells (most of a cc-pVDZ basis): lap P = 0 for l <= 1.
        if (sh%l == 0) then
          i = sh%bf0 + 1
          chi(i) = g0 * sh%t(1, 1)
          dchi(:, i) = g1 * d * sh%t(1, 1)
          lchi(i) = (3 * g1 + r2 * g2) * sh%t(1, 1)
          cycle
        end if
        if (sh%l == 1) then
          rad = 5 * g1 + r2 * g2
          do m = 1, 3
            i = sh%bf0 + m
            chi(i) = d(m) * g0
            dchi(:, i) = d(m) * g1 * d
            dchi(m, i) = dchi(m, i) + g0
            lchi(i) = d(m) * rad
          end do
          cycle
        end if
        pw(-2:-1, :) = 0
        pw(0, :) = 1
        do k = 1, sh%l
          pw(k, :) = pw(k - 1, :) * d
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
        rad = (2 * sh%l + 3) * g1 + r2 * g2
        do m = 1, sh%nfunc
          i = sh%bf0 + m
          chi(i) = 0; dchi(:, i) = 0; lchi(i) = 0
          do j = 1, sh%ncart
            if (sh%t(m, j) == 0) cycle
            chi(i) = chi(i) + sh%t(m, j) * mono(j)
            dchi(:, i) = dchi(:, i) + sh%t(m, j) * (dm(:, j) * g0 + mono(j) * g1 * d)
            lchi(i) = lchi(i) + sh%t(m, j) * (lm(j) * g0 + mono(j) * rad)
          end do
          chi(i) = chi(i) * g0
        end do
      end associate
    end do
  end subroutine

end module vmc_orbitals
