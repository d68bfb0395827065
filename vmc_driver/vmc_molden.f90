! vmc_molden.f90 -- reads a Molden file: atoms, contracted Gaussian shells (s, p, d, f), occupied MOs.
! Conventions (Molden format; checked against psi4 1.3.2 by tests/vmc_overlap_check):
!  - [Atoms] (AU) or (Angs); the third column is the nuclear charge.
!  - contraction coefficients multiply normalised primitives; each contracted shell is renormalised.
!  - [5D] = spherical d and f, [5D7F] likewise, [5D10F] spherical d / cartesian f, [7F] spherical f only;
!    no tag: cartesian. Spherical order 0,+1,-1,+2,-2,(+3,-3); cartesian order xx,yy,zz,xy,xz,yz and
!    xxx,yyy,zzz,xyy,xxy,xxz,xzz,yzz,yyz,xyz. Cartesian functions carry psi4's normalisation: every
!    component has the norm of x^l (so xy is not unit-normalised); the MO overlap is then the identity.
!  - MOs with Occup=2 are doubly occupied (alpha and beta), Occup=1 with Spin=Alpha/Beta singly.
module vmc_molden
  use, intrinsic :: iso_fortran_env, only: real64
  use vmc_util
  implicit none
  private
  public :: basis_t, molden_read, ncart_of, cart_exps

  real(real64), parameter :: ANG = 1.0_real64 / 0.52917721092_real64   ! bohr per Angstrom (psi4's value)
  real(real64), parameter :: PI = 3.14159265358979323846_real64

  type, public :: shell_t
    integer :: atom = 0, l = 0, nprim = 0, nfunc = 0, ncart = 0, bf0 = 0
    logical :: pure = .false.
    real(real64), allocatable :: alpha(:), coef(:)   ! coef includes the primitive x^l normalisation
    real(real64), allocatable :: t(:,:)              ! t(nfunc, ncart): function = sum_c t * x^i y^j z^k * R
    integer, allocatable :: ijk(:,:)                 ! (3, ncart) cartesian exponents
    real(real64) :: rcut2 = huge(1.0_real64)         ! beyond this r^2 every primitive is < 1e-18 of its peak
  end type

  type basis_t
    integer :: natom = 0, nshell = 0, nbf = 0, nalpha = 0, nbeta = 0
    real(real64), allocatable :: xyz(:,:), z(:)
    type(shell_t), allocatable :: sh(:)
    real(real64), allocatable :: ca(:,:), cb(:,:)   ! occupied MO coefficients (nbf, nalpha) / (nbf, nbeta)
  end type

contains

  pure integer function ncart_of(l)
    integer, intent(in) :: l
    ncart_of = (l + 1) * (l + 2) / 2
  end function

  ! Cartesian exponents in Molden order.
  subroutine cart_exps(l, ijk)
    integer, intent(in) :: l
    integer, intent(out) :: ijk(3, ncart_of(l))
    select case (l)
    case (0); ijk = reshape([0,0,0], [3,1])
    case (1); ijk = reshape([1,0,0, 0,1,0, 0,0,1], [3,3])
    case (2); ijk = reshape([2,0,0, 0,2,0, 0,0,2, 1,1,0, 1,0,1, 0,1,1], [3,6])
    case (3); ijk = reshape([3,0,0, 0,3,0, 0,0,3, 1,2,0, 2,1,0, 2,0,1, 1,0,2, 0,1,2, 0,2,1, 1,1,1], [3,10])
    end select
  end subroutine

  pure real(real64) function dfact(n)   ! (n)!! for odd n >= -1
    integer, intent(in) :: n
    integer :: k
    dfact = 1
    do k = n, 2, -2
      dfact = dfact * k
    end do
  end function

  ! Transformation from cartesian monomials (all with the x^l radial normalisation) to the functions.
  subroutine shell_transform(s)
    type(shell_t), intent(inout) :: s
    real(real64) :: a, b, c
    integer :: k
    s%ncart = ncart_of(s%l)
    allocate(s%ijk(3, s%ncart))
    call cart_exps(s%l, s%ijk)
    if (.not. s%pure .or. s%l < 2) then   ! psi4 writes every cartesian component with the x^l norm
      s%nfunc = s%ncart
      allocate(s%t(s%nfunc, s%ncart))
      s%t = 0
      do k = 1, s%ncart
        s%t(k, k) = 1
      end do
      return
    end if
    s%nfunc = 2 * s%l + 1
    allocate(s%t(s%nfunc, s%ncart))
    s%t = 0
    if (s%l == 2) then              ! xx yy zz xy xz yz
      a = sqrt(3.0_real64)
      s%t(1, 1:3) = [-0.5_real64, -0.5_real64, 1.0_real64]
      s%t(2, 5) = a
      s%t(3, 6) = a
      s%t(4, 1:2) = [a / 2, -a / 2]
      s%t(5, 4) = a
    else                            ! xxx yyy zzz xyy xxy xxz xzz yzz yyz xyz
      a = sqrt(3.0_real64 / 8); b = sqrt(5.0_real64 / 8); c = sqrt(15.0_real64)
      s%t(1, [3, 6, 9]) = [1.0_real64, -1.5_real64, -1.5_real64]
      s%t(2, [7, 1, 4]) = [4 * a, -a, -a]
      s%t(3, [8, 5, 2]) = [4 * a, -a, -a]
      s%t(4, [6, 9]) = [c / 2, -c / 2]
      s%t(5, 10) = c
      s%t(6, [1, 4]) = [b, -3 * b]
      s%t(7, [5, 2]) = [3 * b, -b]
    end if
  end subroutine

  subroutine normalise_shell(s)
    type(shell_t), intent(inout) :: s
    integer :: k, m
    real(real64) :: ov, p
    do k = 1, s%nprim
      s%coef(k) = s%coef(k) * (2 * s%alpha(k) / PI)**0.75_real64 * (4 * s%alpha(k))**(0.5_real64 * s%l) / &
           sqrt(dfact(2 * s%l - 1))
    end do
    ov = 0
    do k = 1, s%nprim
      do m = 1, s%nprim
        p = s%alpha(k) + s%alpha(m)
        ov = ov + s%coef(k) * s%coef(m) * (PI / p)**1.5_real64 * dfact(2 * s%l - 1) / (2 * p)**s%l
      end do
    end do
    s%coef = s%coef / sqrt(ov)
    s%rcut2 = 42.0_real64 / minval(s%alpha)   ! exp(-42) ~ 6e-19
  end subroutine

  subroutine molden_read(path, bs)
    character(len=*), intent(in) :: path
    type(basis_t), intent(out) :: bs
    character(len=512), allocatable :: lines(:)
    integer :: n, i, j, ios, sec_atoms, sec_gto, sec_mo, nsh, iatom, l, np, k, ib
    logical :: pure_d, pure_f, angs
    character(len=512) :: t
    character(len=16) :: sym
    real(real64) :: scale, occ, coefv, x(3), zz
    type(shell_t), allocatable :: tmp(:)
    character(len=8) :: spin
    real(real64), allocatable :: c(:), ca(:,:), cb(:,:)
    integer :: nmo_a, nmo_b

    call read_lines(path, lines, n)
    sec_atoms = 0; sec_gto = 0; sec_mo = 0
    pure_d = .false.; pure_f = .false.
    do i = 1, n
      t = lower(adjustl(lines(i)))
      if (t(1:1) /= '[') cycle
      if (t(1:7) == '[atoms]') sec_atoms = i
      if (t(1:5) == '[gto]') sec_gto = i
      if (t(1:4) == '[mo]') sec_mo = i
      if (t(1:4) == '[5d]' .or. t(1:6) == '[5d7f]') then
        pure_d = .true.; pure_f = .true.
      end if
      if (t(1:7) == '[5d10f]') pure_d = .true.
      if (t(1:4) == '[7f]') pure_f = .true.
      if (t(1:5) == '[sto]') call die(trim(path) // ':' // itoa(i) // ': Slater-type orbitals are not supported')
    end do
    if (sec_atoms == 0) call die(trim(path) // ': no [Atoms] section (not a Molden file?)')
    if (sec_gto == 0) call die(trim(path) // ': no [GTO] section')
    if (sec_mo == 0) call die(trim(path) // ': no [MO] section')

    ! ---- atoms ----
    t = lower(lines(sec_atoms))
    angs = index(t, 'angs') > 0
    if (.not. angs .and. index(t, '(au)') == 0) &
         call die(trim(path) // ':' // itoa(sec_atoms) // ': [Atoms] needs (AU) or (Angs)')
    scale = 1
    if (angs) scale = ANG
    bs%natom = 0
    do i = sec_atoms + 1, n
      if (is_section(lines(i)) .or. len_trim(lines(i)) == 0) exit
      bs%natom = bs%natom + 1
    end do
    if (bs%natom == 0) call die(trim(path) // ':' // itoa(sec_atoms) // ': [Atoms] lists no atoms')
    allocate(bs%xyz(3, bs%natom), bs%z(bs%natom))
    do i = 1, bs%natom
      read(lines(sec_atoms + i), *, iostat=ios) sym, j, zz, x
      if (ios /= 0 .or. j /= i) call die(trim(path) // ':' // itoa(sec_atoms + i) // &
           ': expected "symbol index Z x y z" for atom ' // itoa(i))
      if (zz < 0 .or. zz > 118) call die(trim(path) // ':' // itoa(sec_atoms + i) // ': nuclear charge out of range')
      bs%z(i) = zz
      bs%xyz(:, i) = x * scale
    end do

    ! ---- shells ----
    allocate(tmp(64 * bs%natom + 64))
    nsh = 0
    iatom = 0
    i = sec_gto + 1
    do while (i <= n)
      if (is_section(lines(i))) exit
      if (len_trim(lines(i)) == 0) then
        i = i + 1; cycle
      end if
      t = lower(adjustl(lines(i)))
      if (index('spdfghi', t(1:1)) > 0 .and. (t(2:2) == ' ' .or. t(2:2) == char(9))) then
        if (iatom == 0) call die(trim(path) // ':' // itoa(i) // ': shell before an atom index line')
        l = index('spdfghi', t(1:1)) - 1
        if (l > 3) call die(trim(path) // ':' // itoa(i) // ': ' // t(1:1) // ' shells are not supported (s-f only)')
        read(t(2:), *, iostat=ios) np
        if (ios /= 0 .or. np < 1) call die(trim(path) // ':' // itoa(i) // ': bad shell line (want "l nprim 1.00")')
        nsh = nsh + 1
        if (nsh > size(tmp)) call die(trim(path) // ': too many shells')
        tmp(nsh)%atom = iatom
        tmp(nsh)%l = l
        tmp(nsh)%nprim = np
        tmp(nsh)%pure = (l == 2 .and. pure_d) .or. (l == 3 .and. pure_f)
        allocate(tmp(nsh)%alpha(np), tmp(nsh)%coef(np))
        do k = 1, np
          if (i + k > n) call die(trim(path) // ':' // itoa(i + k) // ': file ends inside a shell')
          read(lines(i + k), *, iostat=ios) tmp(nsh)%alpha(k), tmp(nsh)%coef(k)
          if (ios /= 0 .or. .not. (tmp(nsh)%alpha(k) > 0 .and. tmp(nsh)%alpha(k) < 1e12_real64) .or. &
               abs(tmp(nsh)%coef(k)) > 1e12_real64) &
               call die(trim(path) // ':' // itoa(i + k) // ': expected "exponent coefficient"')
        end do
        i = i + np + 1
      else
        read(t, *, iostat=ios) iatom
        if (ios /= 0 .or. iatom < 1 .or. iatom > bs%natom) &
             call die(trim(path) // ':' // itoa(i) // ': expected an atom index line or a shell line')
        i = i + 1
      end if
    end do
    if (nsh == 0) call die(trim(path) // ':' // itoa(sec_gto) // ': [GTO] has no shells')
    bs%nshell = nsh
    allocate(bs%sh(nsh))
    bs%nbf = 0
    do k = 1, nsh
      bs%sh(k) = tmp(k)
      call normalise_shell(bs%sh(k))
      call shell_transform(bs%sh(k))
      bs%sh(k)%bf0 = bs%nbf
      bs%nbf = bs%nbf + bs%sh(k)%nfunc
    end do

    ! ---- MOs: only occupied ones are kept ----
    allocate(c(bs%nbf), ca(bs%nbf, bs%nbf), cb(bs%nbf, bs%nbf))
    nmo_a = 0; nmo_b = 0
    i = sec_mo + 1
    do while (i <= n)
      if (is_section(lines(i))) exit
      if (len_trim(lines(i)) == 0) then
        i = i + 1; cycle
      end if
      spin = 'alpha'; occ = -1
      j = i
      do while (j <= n)
        if (index(lines(j), '=') == 0) exit
        t = lower(adjustl(lines(j)))
        k = index(t, '=')
        if (t(1:k-1) == 'spin') spin = adjustl(t(k+1:))
        if (t(1:k-1) == 'occup') then
          read(t(k+1:), *, iostat=ios) occ
          if (ios /= 0) call die(trim(path) // ':' // itoa(j) // ': bad Occup= value')
        end if
        j = j + 1
      end do
      if (occ < 0) call die(trim(path) // ':' // itoa(i) // ': MO without Occup=')
      c = 0
      do while (j <= n)
        if (len_trim(lines(j)) == 0) then
          j = j + 1; cycle
        end if
        if (index(lines(j), '=') > 0 .or. is_section(lines(j))) exit
        read(lines(j), *, iostat=ios) ib, coefv
        if (ios /= 0 .or. ib < 1 .or. ib > bs%nbf) call die(trim(path) // ':' // itoa(j) // &
             ': expected "index coefficient" with index 1..' // itoa(bs%nbf))
        c(ib) = coefv
        j = j + 1
      end do
      if (abs(occ - 2) < 1e-6_real64) then
        if (spin(1:4) == 'beta') call die(trim(path) // ':' // itoa(i) // ': Occup=2 on a Beta orbital')
        nmo_a = nmo_a + 1; ca(:, nmo_a) = c
        nmo_b = nmo_b + 1; cb(:, nmo_b) = c
      else if (abs(occ - 1) < 1e-6_real64) then
        if (spin(1:4) == 'beta') then
          nmo_b = nmo_b + 1; cb(:, nmo_b) = c
        else
          nmo_a = nmo_a + 1; ca(:, nmo_a) = c
        end if
      else if (abs(occ) > 1e-6_real64) then
        call die(trim(path) // ':' // itoa(i) // ': fractional occupation ' // rtoa(occ) // &
             ' (a single determinant needs 0, 1 or 2)')
      end if
      i = j
    end do
    if (nmo_a + nmo_b == 0) call die(trim(path) // ':' // itoa(sec_mo) // ': no occupied orbitals')
    bs%nalpha = nmo_a; bs%nbeta = nmo_b
    bs%ca = ca(:, 1:nmo_a)
    bs%cb = cb(:, 1:nmo_b)
  end subroutine

  logical function is_section(s)
    character(len=*), intent(in) :: s
    character(len=len(s)) :: t
    t = adjustl(s)
    is_section = t(1:1) == '['
  end function

  subroutine read_lines(path, lines, n)
    character(len=*), intent(in) :: path
    character(len=512), allocatable, intent(out) :: lines(:)
    integer, intent(out) :: n
    integer :: u, ios
    character(len=512) :: buf
    character(len=256) :: msg
    open(newunit=u, file=path, status='old', action='read', iostat=ios, iomsg=msg)
    if (ios /= 0) call die(trim(path) // ': cannot open Molden file (' // trim(msg) // ')')
    n = 0
    do
      read(u, '(a)', iostat=ios) buf
      if (ios /= 0) exit
      n = n + 1
    end do
    allocate(lines(n))
    rewind(u)
    do ios = 1, n
      read(u, '(a)') lines(ios)
      call detab(lines(ios))
    end do
    close(u)
    if (n == 0) call die(trim(path) // ': empty Molden file')
  end subroutine

  subroutine detab(s)
    character(len=*), intent(inout) :: s
    integer :: i
    do i = 1, len(s)
      if (s(i:i) == char(9) .or. s(i:i) == char(13)) s(i:i) = ' '
    end do
  end subroutine

end module vmc_molden
