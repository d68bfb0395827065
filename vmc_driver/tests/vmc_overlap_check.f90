! vmc_overlap_check -- the Molden conventions of vmc_molden.f90 against psi4: with the AO overlap matrix S
! computed analytically (Gaussian product theorem, 1-D moments) from the basis as vmc_molden builds it
! (primitive and contraction normalisation, cartesian components with the norm of x^l, spherical
! transforms), psi4's occupied MOs must be orthonormal: C^T S C = 1 for each spin.
!   vmc_overlap_check MOLDEN [TOL]      (TOL default 1e-10)
! Negative controls, which must FAIL the same check by far (> 1e-3), show that it can see a wrong
! convention: cartesian d/f components unit-normalised (the usual convention, not psi4's), and the first
! two components of every p, d, f shell swapped (a wrong component order). Exit 0 only if all hold.
program vmc_overlap_check
  use, intrinsic :: iso_fortran_env, only: real64
  use vmc_molden
  implicit none
  type(basis_t) :: bs
  character(len=512) :: path, arg
  character(len=:), allocatable :: msg
  real(real64), allocatable :: s(:,:), s2(:,:)
  real(real64) :: tol, dev, dctl
  integer :: st, i, k, nfail
  logical :: cart_hi, order

  call get_command_argument(1, path)
  tol = 1e-10_real64
  call get_command_argument(2, arg)
  if (len_trim(arg) > 0) read(arg, *) tol
  call molden_read(trim(path), bs, st, msg)
  if (st /= 0) then
    print '(a)', 'FAILED: ' // msg
    error stop 1
  end if
  nfail = 0
  s = overlap(bs)
  dev = max(orth_dev(bs%ca, s), orth_dev(bs%cb, s))
  print '(a,i0,a,i0,a,i0,a,es10.3)', trim(path) // ': ', bs%nbf, ' basis functions, ', bs%nalpha, ' alpha, ', &
       bs%nbeta, ' beta MOs: max |C^T S C - 1| = ', dev
  if (.not. dev <= tol) nfail = nfail + 1

  ! The controls only where the occupied MOs use the functions they change.
  cart_hi = .false.; order = .false.
  do k = 1, bs%nshell
    associate (sh => bs%sh(k))
      if (weight(sh%bf0 + 1, sh%bf0 + sh%nfunc) < 1e-3_real64) cycle
      if (sh%l >= 2 .and. .not. sh%pure) cart_hi = .true.
      if (sh%l >= 1) order = .true.
    end associate
  end do
  if (cart_hi) then   ! every AO unit-normalised: S -> D^-1/2 S D^-1/2
    s2 = s
    do i = 1, bs%nbf
      s2(i, :) = s2(i, :) / sqrt(s(i, i)); s2(:, i) = s2(:, i) / sqrt(s(i, i))
    end do
    dctl = max(orth_dev(bs%ca, s2), orth_dev(bs%cb, s2))
    print '(a,es10.3,a)', '  control, cartesian components unit-normalised: ', dctl, ' (must be > 1e-3)'
    if (.not. dctl > 1e-3_real64) nfail = nfail + 1
  end if
  if (order) then     ! components 1 and 2 of every p, d, f shell swapped
    s2 = s
    do k = 1, bs%nshell
      if (bs%sh(k)%l < 1) cycle
      i = bs%sh(k)%bf0
      call swap_rows_cols(s2, i + 1, i + 2)
    end do
    dctl = max(orth_dev(bs%ca, s2), orth_dev(bs%cb, s2))
    print '(a,es10.3,a)', '  control, components 1 and 2 of p/d/f shells swapped: ', dctl, ' (must be > 1e-3)'
    if (.not. dctl > 1e-3_real64) nfail = nfail + 1
  end if
  if (nfail > 0) then
    print '(a,i0,a)', 'FAILED: ', nfail, ' check(s)'
    error stop 1
  end if
  print '(a)', 'vmc_overlap_check: all passed'

contains

  real(real64) function weight(i0, i1)
    integer, intent(in) :: i0, i1
    weight = 0
    if (bs%nalpha > 0) weight = maxval(abs(bs%ca(i0:i1, :)))
    if (bs%nbeta > 0) weight = max(weight, maxval(abs(bs%cb(i0:i1, :))))
  end function

  real(real64) function orth_dev(c, s) result(d)
    real(real64), intent(in) :: c(:,:), s(:,:)
    real(real64) :: m(size(c, 2), size(c, 2))
    integer :: j
    d = 0
    if (size(c, 2) == 0) return
    m = matmul(transpose(c), matmul(s, c))
    do j = 1, size(m, 1)
      m(j, j) = m(j, j) - 1
    end do
    d = maxval(abs(m))
  end function

  subroutine swap_rows_cols(a, i, j)
    real(real64), intent(inout) :: a(:,:)
    integer, intent(in) :: i, j
    real(real64) :: t(size(a, 1))
    t = a(i, :); a(i, :) = a(j, :); a(j, :) = t
    t = a(:, i); a(:, i) = a(:, j); a(:, j) = t
  end subroutine

  ! S(I, J) = sum over cartesian components and primitives of the 1-D overlaps' product.
  function overlap(bs) result(s)
    type(basis_t), intent(in) :: bs
    real(real64) :: s(bs%nbf, bs%nbf)
    integer :: p, q, ca, cb, ka, kb, m, n
    real(real64) :: sc(10, 10), v, ra(3), rb(3)
    do p = 1, bs%nshell
      do q = 1, bs%nshell
        associate (a => bs%sh(p), b => bs%sh(q))
          ra = bs%xyz(:, a%atom); rb = bs%xyz(:, b%atom)
          do ca = 1, a%ncart
            do cb = 1, b%ncart
              v = 0
              do ka = 1, a%nprim
                do kb = 1, b%nprim
                  v = v + a%coef(ka) * b%coef(kb) * &
                       s1d(a%ijk(1, ca), b%ijk(1, cb), a%alpha(ka), b%alpha(kb), ra(1), rb(1)) * &
                       s1d(a%ijk(2, ca), b%ijk(2, cb), a%alpha(ka), b%alpha(kb), ra(2), rb(2)) * &
                       s1d(a%ijk(3, ca), b%ijk(3, cb), a%alpha(ka), b%alpha(kb), ra(3), rb(3))
                end do
              end do
              sc(ca, cb) = v
            end do
          end do
          do m = 1, a%nfunc
            do n = 1, b%nfunc
              s(a%bf0 + m, b%bf0 + n) = dot_product(a%t(m, 1:a%ncart), matmul(sc(1:a%ncart, 1:b%ncart), &
                   b%t(n, 1:b%ncart)))
            end do
          end do
        end associate
      end do
    end do
  end function

  ! int (x - A)^i (x - B)^j exp(-a (x - A)^2 - b (x - B)^2) dx: around P = (a A + b B)/p, p = a + b,
  ! binomial expansion and the moments int t^n exp(-p t^2) dt = (n-1)!! / (2p)^(n/2) sqrt(pi/p), n even.
  real(real64) function s1d(i, j, a, b, xa, xb) result(v)
    integer, intent(in) :: i, j
    real(real64), intent(in) :: a, b, xa, xb
    real(real64), parameter :: PI = 3.14159265358979323846_real64
    real(real64) :: p, xp, mom
    integer :: k, l, n, m
    p = a + b
    xp = (a * xa + b * xb) / p
    v = 0
    do k = 0, i
      do l = 0, j
        n = k + l
        if (mod(n, 2) /= 0) cycle
        mom = sqrt(PI / p)
        do m = n - 1, 1, -2
          mom = mom * m
        end do
        mom = mom / (2 * p)**(n / 2)
        v = v + binom(i, k) * binom(j, l) * (xp - xa)**(i - k) * (xp - xb)**(j - l) * mom
      end do
    end do
    v = v * exp(-a * b / p * (xa - xb)**2)
  end function

  real(real64) function binom(n, k)
    integer, intent(in) :: n, k
    integer :: m
    binom = 1
    do m = 1, k
      binom = binom * (n - k + m) / m
    end do
  end function

end program vmc_overlap_check
