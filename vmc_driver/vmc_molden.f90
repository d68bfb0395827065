! vmc_molden.f90 -- reads a Molden file: atoms, contracted Gaussian shells (s, p, d, f), occupied MOs.
! Conventions (Molden format; checked against psi4 1.3.2 by tests/vmc_overlap_check.f90, ctest vmc_overlap_*:
! psi4's occupied MOs are orthonormal with the analytic AO overlap of the basis as built here):
!  - [Atoms] (AU) or (Angs); the third column is the nuclear charge.
!  - contraction coefficients multiply normalised primitives; each contracted shell is renormalised.
!  - [5D] = spherical d and f, [5D7F] likewise, [5D10F] spherical d / cartesian f, [7F] spherical f only;
!    no tag: cartesian. Spherical order 0,+1,-1,+2,-2,(+3,-3); cartesian order xx,yy,zz,xy,xz,yz and
!    xxx,yyy,zzz,xyy,xxy,xxz,xzz,yzz,yyz,xyz. Cartesian functions carry psi4's normalisation: every
!    component has the norm of x^l (so xy is not unit-normalised); the MO overlap is then the identity.
!  - MOs with Occup=2 are doubly occupied (alpha and beta), Occup=1 with Spin=Alpha/Beta singly.
!  - Every MO lists every basis function's coefficient exactly once: a missing one (a file cut inside an MO)
!    or a repeated index would otherwise leave a zero or an overwritten coefficient and a wrong orbital.
!    A file cut between MOs drops whole orbitals: the driver finds that from the electron count (sum Z - charge).
module vmc_molden
  use, intrinsic :: iso_fortran_env, only: real64
  use vmc_util
  use qmmm_accel_core, only: QMMM_BOHR_ANGSTROM   ! a parameter: needs the .mod, not the library
  implicit none
  private
  public :: basis_t, molden_read, ncart_of, cart_exps

  real(real64), parameter :: ANG = 1.0_real64 / QMMM_BOHR_ANGSTROM   ! bohr per Angstrom (the library's, CODATA 2018)
  real(real64), parameter :: PI = 3.14159265358979323846_real64
  ! Limits that keep a damaged or hostile file from exhausting memory (all far beyond a QM fragment).
  integer, parameter :: LINE_LEN = 512, MAX_LINES = 1000000, MAX_ATOMS = 10000
  real(real64), parameter :: MAX_COORD = 1e6_real64   ! bohr
  ! Two nuclei closer than this are a duplicated atom or a unit mistake, not a molecule (the shortest bond, H2's,
  ! is 1.4 bohr): on top of each other their repulsion and the cusp radii (0.4 x the nearest-neighbour
  ! distance) degenerate into a non-finite or absurd local energy.
  real(real64), parameter :: MIN_NUCLEAR_DISTANCE = 0.1_real64   ! bohr
  ! Gaussian exponents: from far more diffuse to far tighter than any basis set's (aug- and Rydberg functions
  ! ~1e-3, heavy-atom cores ~1e8 bohr^-2); beyond, the normalisation over- or underflows (1e-300 made every
  ! coefficient of its shell 0, 1e300 was read as a malformed line).
  real(real64), parameter :: MIN_EXPONENT = 1e-6_real64, MAX_EXPONENT = 1e12_real64   ! bohr^-2
  real(real64), parameter :: MAX_CONTRACTION = 1e12_real64   ! |contraction coefficient|

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
    integer :: mo_line = 0                          ! line of [MO] (messages about the orbitals as a whole)
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

  ! Reads path into bs. stat = 0 on success, else msg names the file, the line and the problem; the
  ! process never stops here (the driver stops with msg; a fuzzer goes on to the next input).
  subroutine molden_read(path, bs, stat, msg)
    character(len=*), intent(in) :: path
    type(basis_t), intent(out) :: bs
    integer, intent(out) :: stat
    character(len=:), allocatable, intent(out) :: msg
    character(len=LINE_LEN), allocatable :: lines(:)
    integer :: n, i, j, ios, sec_atoms, sec_gto, sec_mo, nsh, iatom, l, np, k, ib, n_occ_lines
    logical :: pure_d, pure_f, angs
    character(len=LINE_LEN) :: t
    character(len=16) :: sym
    real(real64) :: scale, occ, coefv, x(3), zz
    type(shell_t), allocatable :: tmp(:)
    character(len=8) :: spin
    real(real64), allocatable :: c(:), ca(:,:), cb(:,:)
    integer, allocatable :: seen(:)   ! line of each coefficient of the current MO (0: not yet given)
    integer :: nmo_a, nmo_b, imo

    stat = 0; msg = ''
    call read_lines(path, lines, n, stat, msg)
    if (stat /= 0) return
    sec_atoms = 0; sec_gto = 0; sec_mo = 0
    pure_d = .false.; pure_f = .false.
    n_occ_lines = 0
    do i = 1, n
      t = lower(adjustl(lines(i)))
      if (t(1:6) == 'occup=' .or. t(1:6) == 'occup ') n_occ_lines = n_occ_lines + 1
      if (t(1:1) /= '[') cycle
      if (t(1:7) == '[atoms]') sec_atoms = i
      if (t(1:5) == '[gto]') sec_gto = i
      if (t(1:4) == '[mo]') sec_mo = i
      if (t(1:4) == '[5d]' .or. t(1:6) == '[5d7f]') then
        pure_d = .true.; pure_f = .true.
      end if
      if (t(1:7) == '[5d10f]') pure_d = .true.
      if (t(1:4) == '[7f]') pure_f = .true.
      if (t(1:5) == '[sto]') then
        call fail(i, 'Slater-type orbitals are not supported'); return
      end if
    end do
    if (sec_atoms == 0) then
      call fail(0, 'no [Atoms] section (not a Molden file?)'); return
    end if
    if (sec_gto == 0) then
      call fail(0, 'no [GTO] section'); return
    end if
    if (sec_mo == 0) then
      call fail(0, 'no [MO] section'); return
    end if

    ! ---- atoms ----
    t = lower(lines(sec_atoms))
    angs = index(t, 'angs') > 0
    if (.not. angs .and. index(t, '(au)') == 0) then
      call fail(sec_atoms, '[Atoms] needs (AU) or (Angs)'); return
    end if
    scale = 1
    if (angs) scale = ANG
    bs%natom = 0
    do i = sec_atoms + 1, n
      if (is_section(lines(i)) .or. len_trim(lines(i)) == 0) exit
      bs%natom = bs%natom + 1
    end do
    if (bs%natom == 0) then
      call fail(sec_atoms, '[Atoms] lists no atoms'); return
    end if
    if (bs%natom > MAX_ATOMS) then
      call fail(sec_atoms, '[Atoms] lists more than ' // itoa(MAX_ATOMS) // ' atoms'); return
    end if
    allocate(bs%xyz(3, bs%natom), bs%z(bs%natom))
    do i = 1, bs%natom
      ! A Molden atom line has no repeat counts; gfortran's list-directed read (libgfortran 12) also leaks its
      ! copy of a repeated character value ("3*H") when the next item then fails, so '*' is refused first.
      if (index(lines(sec_atoms + i), '*') > 0) then
        call fail(sec_atoms + i, 'expected "symbol index Z x y z" for atom ' // itoa(i) // ' (no "*")'); return
      end if
      read(lines(sec_atoms + i), *, iostat=ios) sym, j, zz, x
      if (ios /= 0 .or. j /= i) then
        call fail(sec_atoms + i, 'expected "symbol index Z x y z" for atom ' // itoa(i)); return
      end if
      if (.not. all(is_finite(x))) then
        call fail(sec_atoms + i, 'coordinate of atom ' // itoa(i) // ' is not a finite number (' // &
             trim(adjustl(lines(sec_atoms + i))) // ')'); return
      end if
      if (any(abs(x * scale) > MAX_COORD)) then
        call fail(sec_atoms + i, 'coordinate of atom ' // itoa(i) // ' beyond ' // rtoa(MAX_COORD) // ' bohr'); return
      end if
      if (.not. (zz >= 0 .and. zz <= 118)) then
        call fail(sec_atoms + i, 'nuclear charge out of range (0..118 or not a number)'); return
      end if
      bs%z(i) = zz
      bs%xyz(:, i) = x * scale
      do j = 1, i - 1
        if (sum((bs%xyz(:, i) - bs%xyz(:, j))**2) < MIN_NUCLEAR_DISTANCE**2) then
          call fail(sec_atoms + i, 'atom ' // itoa(i) // ' is ' // short(norm2(bs%xyz(:, i) - bs%xyz(:, j))) // &
               ' bohr from atom ' // itoa(j) // ' (line ' // itoa(sec_atoms + j) // '): nuclei closer than ' // &
               short(MIN_NUCLEAR_DISTANCE) // ' bohr are refused (an atom given twice?)')
          return
        end if
      end do
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
        if (iatom == 0) then
          call fail(i, 'shell before an atom index line'); return
        end if
        l = index('spdfghi', t(1:1)) - 1
        if (l > 3) then
          call fail(i, t(1:1) // ' shells are not supported (s-f only)'); return
        end if
        read(t(2:), *, iostat=ios) np
        if (ios /= 0 .or. np < 1) then
          call fail(i, 'bad shell line (want "l nprim 1.00")'); return
        end if
        if (np > n - i) then
          call fail(n, 'file ends inside a shell (' // itoa(np) // ' primitives announced at line ' // itoa(i) // ')')
          return
        end if
        nsh = nsh + 1
        if (nsh > size(tmp)) then
          call fail(i, 'more than ' // itoa(size(tmp)) // ' shells'); return
        end if
        tmp(nsh)%atom = iatom
        tmp(nsh)%l = l
        tmp(nsh)%nprim = np
        tmp(nsh)%pure = (l == 2 .and. pure_d) .or. (l == 3 .and. pure_f)
        allocate(tmp(nsh)%alpha(np), tmp(nsh)%coef(np))
        do k = 1, np
          read(lines(i + k), *, iostat=ios) tmp(nsh)%alpha(k), tmp(nsh)%coef(k)
          if (ios /= 0) then
            call fail(i + k, 'expected "exponent coefficient" (two numbers)'); return
          end if
          if (.not. (tmp(nsh)%alpha(k) >= MIN_EXPONENT .and. tmp(nsh)%alpha(k) <= MAX_EXPONENT)) then
            call fail(i + k, 'exponent ' // short(tmp(nsh)%alpha(k)) // ' is outside [' // short(MIN_EXPONENT) // &
                 ', ' // short(MAX_EXPONENT) // '] bohr^-2'); return
          end if
          if (.not. (abs(tmp(nsh)%coef(k)) <= MAX_CONTRACTION)) then
            call fail(i + k, 'contraction coefficient ' // short(tmp(nsh)%coef(k)) // ' is not a finite number of ' // &
                 'magnitude <= ' // short(MAX_CONTRACTION)); return
          end if
        end do
        i = i + np + 1
      else
        read(t, *, iostat=ios) iatom
        if (ios /= 0 .or. iatom < 1 .or. iatom > bs%natom) then
          call fail(i, 'expected an atom index line or a shell line'); return
        end if
        i = i + 1
      end if
    end do
    if (nsh == 0) then
      call fail(sec_gto, '[GTO] has no shells'); return
    end if
    bs%nshell = nsh
    allocate(bs%sh(nsh))
    bs%nbf = 0
    do k = 1, nsh
      bs%sh(k) = tmp(k)
      call normalise_shell(bs%sh(k))
      if (.not. all(is_finite(bs%sh(k)%coef))) then
        call fail(sec_gto, 'shell ' // itoa(k) // ' cannot be normalised (all its coefficients zero?)'); return
      end if
      call shell_transform(bs%sh(k))
      bs%sh(k)%bf0 = bs%nbf
      bs%nbf = bs%nbf + bs%sh(k)%nfunc
    end do

    ! ---- MOs: only occupied ones are kept (at most one per Occup= line); every one must be complete ----
    allocate(c(bs%nbf), seen(bs%nbf), ca(bs%nbf, max(n_occ_lines, 1)), cb(bs%nbf, max(n_occ_lines, 1)))
    bs%mo_line = sec_mo
    nmo_a = 0; nmo_b = 0; imo = 0
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
          if (ios /= 0 .or. .not. is_finite(occ)) then
            call fail(j, 'bad Occup= value'); return
          end if
        end if
        j = j + 1
      end do
      if (occ < 0) then
        call fail(i, 'MO without Occup= (or a negative one)'); return
      end if
      imo = imo + 1
      c = 0; seen = 0
      do while (j <= n)
        if (len_trim(lines(j)) == 0) then
          j = j + 1; cycle
        end if
        if (index(lines(j), '=') > 0 .or. is_section(lines(j))) exit
        read(lines(j), *, iostat=ios) ib, coefv
        if (ios /= 0 .or. ib < 1 .or. ib > bs%nbf) then
          call fail(j, 'expected "index coefficient" with index 1..' // itoa(bs%nbf)); return
        end if
        if (.not. (abs(coefv) <= 1e6_real64)) then
          call fail(j, 'MO coefficient is not a finite number of magnitude <= 1e6'); return
        end if
        if (seen(ib) > 0) then
          call fail(j, 'coefficient ' // itoa(ib) // ' of MO ' // itoa(imo) // ' already given on line ' // &
               itoa(seen(ib))); return
        end if
        seen(ib) = j
        c(ib) = coefv
        j = j + 1
      end do
      if (any(seen == 0)) then
        k = findloc(seen, 0, dim=1)
        if (j > n) then
          call fail(n, 'file ends inside MO ' // itoa(imo) // ' (from line ' // itoa(i) // '): ' // &
               itoa(count(seen > 0)) // ' of ' // itoa(bs%nbf) // ' coefficients given, index ' // itoa(k) // &
               ' missing (file truncated?)'); return
        end if
        call fail(i, 'MO ' // itoa(imo) // ' lists ' // itoa(count(seen > 0)) // ' of ' // itoa(bs%nbf) // &
             ' coefficients (index ' // itoa(k) // ' missing): every MO needs one line per basis function'); return
      end if
      if (abs(occ - 2) < 1e-6_real64) then
        if (spin(1:4) == 'beta') then
          call fail(i, 'Occup=2 on a Beta orbital'); return
        end if
        nmo_a = nmo_a + 1; ca(:, nmo_a) = c
        nmo_b = nmo_b + 1; cb(:, nmo_b) = c
      else if (abs(occ - 1) < 1e-6_real64) then
        if (spin(1:4) == 'beta') then
          nmo_b = nmo_b + 1; cb(:, nmo_b) = c
        else
          nmo_a = nmo_a + 1; ca(:, nmo_a) = c
        end if
      else if (abs(occ) > 1e-6_real64) then
        call fail(i, 'fractional occupation ' // rtoa(occ) // ' (a single determinant needs 0, 1 or 2)'); return
      end if
      i = j
    end do
    if (nmo_a + nmo_b == 0) then
      call fail(sec_mo, 'no occupied orbitals'); return
    end if
    bs%nalpha = nmo_a; bs%nbeta = nmo_b
    bs%ca = ca(:, 1:nmo_a)
    bs%cb = cb(:, 1:nmo_b)

  contains

    subroutine fail(line, text)
      integer, intent(in) :: line
      character(len=*), intent(in) :: text
      stat = 1
      if (line > 0) then
        msg = trim(path) // ':' // itoa(line) // ': ' // text
      else
        msg = trim(path) // ': ' // text
      end if
    end subroutine

  end subroutine

  logical function is_section(s)
    character(len=*), intent(in) :: s
    character(len=len(s)) :: t
    t = adjustl(s)
    is_section = t(1:1) == '['
  end function

  subroutine read_lines(path, lines, n, stat, msg)
    character(len=*), intent(in) :: path
    character(len=LINE_LEN), allocatable, intent(out) :: lines(:)
    integer, intent(out) :: n, stat
    character(len=:), allocatable, intent(inout) :: msg
    integer :: u, ios, sz
    character(len=LINE_LEN) :: buf
    character(len=256) :: iom
    n = 0; stat = 0
    open(newunit=u, file=path, status='old', action='read', iostat=ios, iomsg=iom)
    if (ios /= 0) then
      stat = 1; msg = trim(path) // ': cannot open Molden file (' // trim(iom) // ')'; return
    end if
    allocate(lines(256))
    do
      read(u, '(a)', advance='no', iostat=ios, size=sz) buf
      if (is_iostat_end(ios)) exit
      if (ios == 0) then   ! the record did not end within LINE_LEN characters
        stat = 1; msg = trim(path) // ':' // itoa(n + 1) // ': line longer than ' // itoa(LINE_LEN) // ' characters'
      else if (.not. is_iostat_eor(ios)) then
        stat = 1; msg = trim(path) // ':' // itoa(n + 1) // ': cannot read (not a text file?)'
      else if (n == MAX_LINES) then
        stat = 1; msg = trim(path) // ': more than ' // itoa(MAX_LINES) // ' lines'
      end if
      if (stat /= 0) exit
      n = n + 1
      if (n > size(lines)) lines = [lines, lines]
      lines(n) = buf(1:sz)
      call detab(lines(n))
    end do
    close(u)
    if (stat == 0 .and. n == 0) then
      stat = 1; msg = trim(path) // ': empty Molden file'
    end if
  end subroutine

  subroutine detab(s)
    character(len=*), intent(inout) :: s
    integer :: i
    do i = 1, len(s)
      if (s(i:i) == char(9) .or. s(i:i) == char(13)) s(i:i) = ' '
    end do
  end subroutine

end module vmc_molden
