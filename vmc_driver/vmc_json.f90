! vmc_json.f90 -- a small streaming JSON writer: objects, arrays, and members of type real, integer,
! logical and string, indented, one member per line (arrays of numbers on one line). The writer keeps
! the commas and nesting, so callers say what they write, not how. Reals are written with 17 significant
! digits (they read back bitwise); NaN and Inf, which JSON cannot hold, are written as null.
!
!   type(json_writer) :: js
!   call js%open('result.json', ios, msg)
!   call js%put('energy', -76.0_real64)
!   call js%begin_object('parts');  call js%put('kinetic', t);  call js%end()
!   call js%begin_array('ranks');  call js%begin_object();  ...;  call js%end();  call js%end()
!   call js%close()
module vmc_json
  use, intrinsic :: iso_fortran_env, only: real64, int64
  use vmc_util, only: rtoa, rtoa_edit, rtoa_width, itoa, is_finite
  implicit none
  private
  public :: json_writer

  integer, parameter :: MAX_DEPTH = 16

  type json_writer
    integer :: unit = -1, depth = 0
    logical :: empty(0:MAX_DEPTH) = .true.         ! nothing written yet at this level
    character(len=1) :: closer(0:MAX_DEPTH) = ' '  ! '}' or ']'
  contains
    procedure :: open => jw_open
    procedure :: close => jw_close
    procedure :: begin_object => jw_begin_object
    procedure :: begin_array => jw_begin_array
    procedure :: end => jw_end
    procedure, private :: put_real, put_int, put_int64, put_logical, put_string, put_reals
    generic :: put => put_real, put_int, put_int64, put_logical, put_string, put_reals
  end type

contains

  ! Opens path and the top-level object; ios /= 0 and msg on failure.
  subroutine jw_open(js, path, ios, msg)
    class(json_writer), intent(inout) :: js
    character(len=*), intent(in) :: path
    integer, intent(out) :: ios
    character(len=*), intent(out) :: msg
    msg = ''
    open(newunit=js%unit, file=path, status='replace', action='write', iostat=ios, iomsg=msg)
    if (ios /= 0) return
    js%depth = 0
    write(js%unit, '(a)', advance='no') '{'
    js%empty(0) = .true.; js%closer(0) = '}'
  end subroutine

  subroutine jw_close(js)
    class(json_writer), intent(inout) :: js
    do while (js%depth > 0)
      call js%end()
    end do
    write(js%unit, '(a)') new_line('a') // '}'
    close(js%unit)
    js%unit = -1
  end subroutine

  ! Separator, new line and indentation before a member or array element; "key": when a key is given.
  subroutine lead(js, key, inline)
    class(json_writer), intent(inout) :: js
    character(len=*), intent(in), optional :: key
    logical, intent(in), optional :: inline   ! element of a one-line array: ", " only
    logical :: one_line
    one_line = .false.
    if (present(inline)) one_line = inline
    if (.not. js%empty(js%depth)) write(js%unit, '(a)', advance='no') ','
    if (one_line) then
      if (.not. js%empty(js%depth)) write(js%unit, '(a)', advance='no') ' '
    else
      write(js%unit, '(a)', advance='no') new_line('a') // repeat('  ', js%depth + 1)
    end if
    js%empty(js%depth) = .false.
    if (present(key)) write(js%unit, '(a)', advance='no') '"' // escape(key) // '": '
  end subroutine

  subroutine open_level(js, opener, closer)
    class(json_writer), intent(inout) :: js
    character(len=1), intent(in) :: opener, closer
    write(js%unit, '(a)', advance='no') opener
    if (js%depth == MAX_DEPTH) error stop 'vmc_json: nesting too deep'
    js%depth = js%depth + 1
    js%empty(js%depth) = .true.; js%closer(js%depth) = closer
  end subroutine

  subroutine jw_begin_object(js, key)
    class(json_writer), intent(inout) :: js
    character(len=*), intent(in), optional :: key
    call lead(js, key)
    call open_level(js, '{', '}')
  end subroutine

  subroutine jw_begin_array(js, key)
    class(json_writer), intent(inout) :: js
    character(len=*), intent(in), optional :: key
    call lead(js, key)
    call open_level(js, '[', ']')
  end subroutine

  ! Closes the innermost object or array.
  subroutine jw_end(js)
    class(json_writer), intent(inout) :: js
    if (js%depth == 0) return
    if (.not. js%empty(js%depth)) write(js%unit, '(a)', advance='no') new_line('a') // repeat('  ', js%depth)
    write(js%unit, '(a)', advance='no') js%closer(js%depth)
    js%depth = js%depth - 1
  end subroutine

  subroutine put_real(js, key, x)
    class(json_writer), intent(inout) :: js
    character(len=*), intent(in) :: key
    real(real64), intent(in) :: x
    call lead(js, key)
    write(js%unit, '(a)', advance='no') num(x)
  end subroutine

  subroutine put_int(js, key, i)
    class(json_writer), intent(inout) :: js
    character(len=*), intent(in) :: key
    integer, intent(in) :: i
    call lead(js, key)
    write(js%unit, '(a)', advance='no') itoa(i)
  end subroutine

  subroutine put_int64(js, key, i)
    class(json_writer), intent(inout) :: js
    character(len=*), intent(in) :: key
    integer(int64), intent(in) :: i
    call lead(js, key)
    write(js%unit, '(a)', advance='no') itoa(i)
  end subroutine

  subroutine put_logical(js, key, b)
    class(json_writer), intent(inout) :: js
    character(len=*), intent(in) :: key
    logical, intent(in) :: b
    call lead(js, key)
    write(js%unit, '(a)', advance='no') trim(merge('true ', 'false', b))
  end subroutine

  subroutine put_string(js, key, s)
    class(json_writer), intent(inout) :: js
    character(len=*), intent(in) :: key, s
    call lead(js, key)
    write(js%unit, '(a)', advance='no') '"' // escape(s) // '"'
  end subroutine

  ! An array of reals on one line: the numbers as rtoa writes them, ', ' between them. A run of finite numbers is
  ! formatted by one internal write and written by one statement: a forces run's JSON over 268,938 sites (109 MB)
  ! took 6.0 s with a statement per number and takes 2.1 s so, nearly all of it the decimal conversion. A run with
  ! NaN or Inf goes number by number.
  subroutine put_reals(js, key, x)
    class(json_writer), intent(inout) :: js
    character(len=*), intent(in) :: key
    real(real64), intent(in) :: x(:)
    integer, parameter :: RUN = 64, W = rtoa_width
    character(len=RUN * W) :: fields
    character(len=RUN * (W + 2)) :: line
    integer :: i, j, k, f, c, n
    call lead(js, key)
    write(js%unit, '(a)', advance='no') '['
    do i = 1, size(x), RUN
      j = min(size(x), i + RUN - 1)
      if (i > 1) write(js%unit, '(a)', advance='no') ', '
      if (.not. all(is_finite(x(i:j)))) then
        do k = i, j
          if (k > i) write(js%unit, '(a)', advance='no') ', '
          write(js%unit, '(a)', advance='no') num(x(k))
        end do
        cycle
      end if
      write(fields, '(*(' // rtoa_edit // '))') x(i:j)
      n = 0
      do k = 0, j - i
        if (k > 0) then
          line(n + 1:n + 2) = ', '
          n = n + 2
        end if
        f = k * W
        do c = f + 1, f + W   ! the field without its leading blanks (adjustl)
          if (fields(c:c) /= ' ') exit
        end do
        line(n + 1:n + f + W - c + 1) = fields(c:f + W)
        n = n + f + W - c + 1
      end do
      write(js%unit, '(a)', advance='no') line(1:n)
    end do
    write(js%unit, '(a)', advance='no') ']'
  end subroutine

  function num(x) result(s)
    real(real64), intent(in) :: x
    character(len=:), allocatable :: s
    if (is_finite(x)) then
      s = rtoa(x)
    else
      s = 'null'
    end if
  end function

  ! JSON string escapes: quote, backslash and control characters.
  function escape(s) result(t)
    character(len=*), intent(in) :: s
    character(len=:), allocatable :: t
    character(len=6) :: hex
    integer :: i, c
    t = ''
    do i = 1, len_trim(s)
      c = iachar(s(i:i))
      if (s(i:i) == '"' .or. s(i:i) == '\') then
        t = t // '\' // s(i:i)
      else if (c < 32) then
        write(hex, '(a,z4.4)') '\u', c
        t = t // hex
      else
        t = t // s(i:i)
      end if
    end do
  end function

end module vmc_json
