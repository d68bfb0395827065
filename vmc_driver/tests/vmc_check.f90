! vmc_check -- assertions on qmmm_vmc's JSON results against psi4's reference.json (exit 1 on failure).
!   vmc_check ref    RESULT REFERENCE REFKEY MAX_ERROR   |E - ref| <= 3 sigma and sigma <= MAX_ERROR
!   vmc_check exact  RESULT KEY REFERENCE REFKEY TOL     |RESULT[KEY] - REFERENCE[REFKEY]| <= TOL
!   vmc_check lower  A B [NSIG]                          E_A < E_B (by more than NSIG combined error bars,
!                                                        default 0) and variance_A < variance_B
!   vmc_check same   A B                                 energy, error, blocks, final positions bitwise equal
!   vmc_check close  A B TOL                             same configurations (final positions, acceptance
!                                                        bitwise) and |E_A - E_B| <= TOL
program vmc_check
  use, intrinsic :: iso_fortran_env, only: real64
  implicit none
  character(len=512) :: mode, a, b, c, d, e
  real(real64) :: ea, sa, eb, sb, r, tol
  call get_command_argument(1, mode)
  call get_command_argument(2, a)
  call get_command_argument(3, b)
  call get_command_argument(4, c)
  call get_command_argument(5, d)
  call get_command_argument(6, e)
  select case (trim(mode))
  case ('ref')
    ea = num(a, 'energy'); sa = num(a, 'error'); r = num(b, c)
    read(d, *) tol
    print '(a,f16.8,a,f12.8,a,f16.8,a,f8.2,a)', 'VMC ', ea, ' +- ', sa, '  reference ', r, '  (', abs(ea - r) / sa, ' sigma)'
    call expect(abs(ea - r) <= 3 * sa, 'VMC energy within 3 error bars of the reference')
    call expect(sa <= tol, 'error bar <= ' // trim(d))
  case ('exact')
    ea = num(a, b); r = num(c, d)
    read(e, *) tol
    print '(a,es24.16,a,es24.16,a,es10.3)', trim(b) // ' ', ea, '  reference ', r, '  diff ', ea - r
    call expect(abs(ea - r) <= tol, trim(b) // ' agrees with ' // trim(d))
  case ('lower')
    ea = num(a, 'energy'); sa = num(a, 'error'); eb = num(b, 'energy'); sb = num(b, 'error')
    print '(a,2f16.8,a,2f16.8)', 'A: E, variance ', ea, num(a, 'variance'), '   B: ', eb, num(b, 'variance')
    print '(a,f8.2,a)', 'energy difference B - A = ', (eb - ea) / sqrt(sa**2 + sb**2), ' combined error bars'
    tol = 0
    if (len_trim(c) > 0) read(c, *) tol
    call expect(eb - ea > tol * sqrt(sa**2 + sb**2), 'energy of A lower than B by more than ' // trim(adjustl(c)) // &
         ' combined error bars')
    call expect(num(a, 'variance') < num(b, 'variance'), 'variance of A lower than B')
  case ('same')
    call expect(text(a, 'energy') == text(b, 'energy'), 'energy bitwise identical')
    call expect(text(a, 'error') == text(b, 'error'), 'error bar bitwise identical')
    call expect(text(a, 'block_energies') == text(b, 'block_energies'), 'block energies bitwise identical')
    call expect(text(a, 'final_position_checksum') == text(b, 'final_position_checksum'), 'final positions identical')
    print '(a)', 'identical: ' // trim(text(a, 'energy'))
  case ('close')
    read(c, *) tol
    ea = num(a, 'energy'); eb = num(b, 'energy')
    print '(a,es24.16,a,es24.16,a,es10.3)', 'E_A ', ea, '  E_B ', eb, '  diff ', ea - eb
    call expect(text(a, 'final_position_checksum') == text(b, 'final_position_checksum'), 'same configurations')
    call expect(text(a, 'acceptance') == text(b, 'acceptance'), 'same acceptance')
    call expect(abs(ea - eb) <= tol, 'energy difference <= ' // trim(c))
  case default
    print '(a)', 'FAILED: unknown mode "' // trim(mode) // '" (see the header of vmc_check.f90)'
    call exit(1)
  end select

contains

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) then
      print '(a)', 'ok:     ' // what
    else
      print '(a)', 'FAILED: ' // what
      call exit(1)
    end if
  end subroutine

  ! The text after "key": up to the next ',' '}' or end of line (a whole [...] for arrays).
  function text(path, key) result(t)
    character(len=*), intent(in) :: path, key
    character(len=:), allocatable :: t
    character(len=:), allocatable :: all
    character(len=65536) :: line
    integer :: u, ios, i, j
    open(newunit=u, file=trim(path), status='old', action='read', iostat=ios)
    if (ios /= 0) then
      print '(a)', 'FAILED: cannot open ' // trim(path)
      call exit(1)
    end if
    all = ''
    do
      read(u, '(a)', iostat=ios) line
      if (ios /= 0) exit
      all = all // trim(line) // ' '
    end do
    close(u)
    i = index(all, '"' // trim(key) // '":')
    if (i == 0) then
      print '(a)', 'FAILED: no key "' // trim(key) // '" in ' // trim(path)
      call exit(1)
    end if
    i = i + len_trim(key) + 3
    if (adjustl(all(i:i+1)) == '[' .or. all(i:i) == '[' .or. all(i+1:i+1) == '[') then
      j = index(all(i:), ']') + i - 1
    else
      j = scan(all(i:), ',}') + i - 2
    end if
    t = trim(adjustl(all(i:j)))
  end function

  real(real64) function num(path, key)
    character(len=*), intent(in) :: path, key
    integer :: ios
    character(len=:), allocatable :: t
    t = text(path, key)
    read(t, *, iostat=ios) num
    if (ios /= 0) then
      print '(a)', 'FAILED: "' // trim(key) // '" in ' // trim(path) // ' is not a number'
      call exit(1)
    end if
  end function

end program vmc_check
