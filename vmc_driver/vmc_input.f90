! vmc_input.f90 -- the namelist &vmc (keys: vmc_input_keys.f90, documented in vmc_driver/README.md), checked
! before any work. Every key starts at its default from the key table; each assignment of the file
! (vmc_input_scan.f90) is checked against its key there: known, given once (an array key: each element once;
! a namelist read would let the last one win silently), the right number of values, each of the key's type
! and in its range (finite for reals) or one of its choices. Then the values go into input_t and the rules
! between keys are checked. Nothing here stops the process: input_read returns a status and a message
! naming the file, the line where known, and the key.
module vmc_input
  use, intrinsic :: iso_fortran_env, only: real64, int64, int32
  use vmc_util
  use vmc_input_keys
  use vmc_input_scan
  implicit none
  private
  public :: input_t, input_read, input_where, MAX_CUBES, MAX_BLOCK_VALUES

  ! Local energies per block (walkers x measurements): rank 0 gathers a few values of each with 32-bit
  ! MPI counts, and holds them in memory.
  integer(int64), parameter :: MAX_BLOCK_VALUES = 2_int64**28

  ! The input as the driver uses it; defaults and meanings are those of the key table (vmc_input_keys.f90).
  type input_t
    character(len=512) :: path = ''       ! the input file itself (for messages)
    character(len=512) :: molden, cubes(MAX_CUBES), output_json, mm_charges, pol_file
    real(real64) :: density_threshold, b_ee, b_en, move_length, cusp_rc_z, cusp_rc_max
    real(real64) :: field_tolerance, field_margin, pol_tolerance, pol_converge
    logical :: jastrow, tune_moves, cusp_correction, balance_walkers, forces
    integer :: n_walkers, n_equil, n_blocks, steps_per_block, n_threads, n_electrons, recompute_every
    integer :: energy_every, charge, forces_every, pol_blocks, pol_max_updates
    integer :: n_cubes = 0                ! cubes given (no gaps: cubes(1:n_cubes))
    integer(int64) :: seed, first_walker
    character(len=16) :: backend, precision, field_calls, field_method, pol_mode
    character(len=64) :: devices
    integer :: key_line(size(KEYS)) = 0   ! line of each key's assignment (0: not given), for later messages
  end type

  ! One element's value (the field of its key's type) and the line of its assignment (0: the default).
  type element_t
    integer(int64) :: i = 0
    real(real64) :: r = 0
    logical :: l = .false.
    character(len=:), allocatable :: s
    integer :: line = 0
  end type

  type values_t
    type(element_t), allocatable :: e(:)
  end type

  ! The reader's state: the file, every key's values, the line of each key's assignment, the first error.
  type reader_t
    character(len=:), allocatable :: path, msg
    integer :: stat = 0
    type(values_t) :: v(size(KEYS))
    integer :: key_line(size(KEYS)) = 0
  end type

  interface put
    module procedure put_int, put_int64, put_real, put_logical, put_string
  end interface

contains

  ! Reads and checks path into inp. stat = 0 on success, else msg says what is wrong and where.
  subroutine input_read(path, inp, stat, msg)
    character(len=*), intent(in) :: path
    type(input_t), intent(out) :: inp
    integer, intent(out) :: stat
    character(len=:), allocatable, intent(out) :: msg
    type(reader_t) :: rd
    type(pair_t), allocatable :: pairs(:)
    integer :: i
    rd%path = trim(path)
    rd%msg = ''
    call set_defaults(rd)
    if (rd%stat == 0) call scan_file(rd%path, pairs, rd%stat, rd%msg)
    if (rd%stat == 0) then
      do i = 1, size(pairs)
        call assign(rd, pairs(i))
        if (rd%stat /= 0) exit
      end do
    end if
    if (rd%stat == 0) call check_required(rd)
    if (rd%stat == 0) call fill(rd, inp)
    if (rd%stat == 0) call check_rules(rd, inp)
    inp%path = path
    inp%key_line = rd%key_line
    stat = rd%stat
    msg = rd%msg
  end subroutine

  ! "path:line" of key's assignment in inp's file, "path" where the key was not given (the driver's messages
  ! about a key that only the Molden file or the machine shows to be wrong).
  function input_where(inp, key) result(s)
    type(input_t), intent(in) :: inp
    character(len=*), intent(in) :: key
    character(len=:), allocatable :: s
    integer :: k
    s = trim(inp%path)
    k = key_index(key)
    if (k > 0) then
      if (inp%key_line(k) > 0) s = s // ':' // itoa(inp%key_line(k))
    end if
  end function

  ! Records the first error only: "path:line: text" (line 0: no line).
  subroutine fail(rd, line, text)
    type(reader_t), intent(inout) :: rd
    integer, intent(in) :: line
    character(len=*), intent(in) :: text
    if (rd%stat /= 0) return
    rd%stat = 1
    rd%msg = located(rd%path, line, text)
  end subroutine

  ! Every key at its default, read through the same checks as a value in the file: a default outside its
  ! own range is a fault of the table, reported as such.
  subroutine set_defaults(rd)
    type(reader_t), intent(inout) :: rd
    integer :: k, e
    character(len=:), allocatable :: err
    do k = 1, size(KEYS)
      allocate(rd%v(k)%e(KEYS(k)%count))
      do e = 1, KEYS(k)%count
        rd%v(k)%e(e)%s = ''
        if (len_trim(KEYS(k)%default) == 0) cycle
        call parse_item(KEYS(k), trim(KEYS(k)%default), rd%v(k)%e(e), err)
        if (len(err) > 0) then
          call fail(rd, 0, 'internal error: the default of key ''' // trim(KEYS(k)%name) // ''' ' // err); return
        end if
      end do
    end do
  end subroutine

  ! One "key = value" or "key(i) = value" of the file.
  subroutine assign(rd, pair)
    type(reader_t), intent(inout) :: rd
    type(pair_t), intent(in) :: pair
    integer :: k, idx, ios, n, i, e
    integer, allocatable :: b(:, :)
    character(len=:), allocatable :: key, err
    type(key_t) :: kt
    k = key_index(pair%key)
    if (k == 0) then
      call fail(rd, pair%line, 'unknown key ''' // pair%key // ''' in &vmc'); return
    end if
    kt = KEYS(k)
    key = 'key ''' // trim(kt%name) // ''''
    ! A key given twice: the namelist read would keep the last value without a word (array keys: per
    ! element, below, since cubes(2) = ... after cubes = 'a' is a second element, not a repeat).
    if (kt%count == 1 .and. rd%key_line(k) > 0) then
      call fail(rd, pair%line, key // ' already given on line ' // itoa(rd%key_line(k))); return
    end if
    rd%key_line(k) = pair%line
    idx = 1
    if (len(pair%index) > 0) then
      read(pair%index, *, iostat=ios) idx
      if (kt%count == 1) then
        call fail(rd, pair%line, key // ' is not an array'); return
      else if (ios /= 0 .or. idx < 1 .or. idx > kt%count) then
        call fail(rd, pair%line, key // ': index ''' // pair%index // ''' is not in 1..' // itoa(kt%count)); return
      end if
    end if
    call split_items(pair%value, n, b)
    do while (n > 0)   ! trailing null values change nothing
      if (b(1, n) > 0) exit
      n = n - 1
    end do
    if (n == 0) then
      call fail(rd, pair%line, key // ' has no value'); return
    end if
    if (kt%count == 1 .and. n > 1) then
      call fail(rd, pair%line, key // ' takes one value, not ''' // trim(adjustl(pair%value)) // ''''); return
    end if
    if (idx + n - 1 > kt%count) then
      call fail(rd, pair%line, key // ' lists more than ' // itoa(kt%count) // ' values'); return
    end if
    do i = 1, n
      if (b(1, i) == 0) cycle   ! a null value: the element keeps its value
      e = idx + i - 1
      if (kt%count > 1 .and. rd%v(k)%e(e)%line > 0) then
        call fail(rd, pair%line, 'key ''' // trim(kt%name) // '(' // itoa(e) // ')'' already given on line ' // &
             itoa(rd%v(k)%e(e)%line)); return
      end if
      call parse_item(kt, pair%value(b(1, i):b(2, i)), rd%v(k)%e(e), err)
      if (len(err) > 0) then
        call fail(rd, pair%line, key // ' ' // err); return
      end if
      rd%v(k)%e(e)%line = pair%line
    end do
  end subroutine

  ! One value item of key into x: its type, then its range or choices. err: '' or what is wrong, after "key 'k' ".
  subroutine parse_item(kt, item, x, err)
    type(key_t), intent(in) :: kt
    character(len=*), intent(in) :: item
    type(element_t), intent(inout) :: x
    character(len=:), allocatable, intent(out) :: err
    integer :: ios
    character(len=32) :: t
    err = ''
    select case (kt%kind)
    case (K_INT, K_INT64)
      read(item, *, iostat=ios) x%i
      if (ios /= 0 .and. verify(item, '+-0123456789') == 0) then
        err = '= ' // item // ' is beyond the range of a 64-bit integer'
      else if (ios /= 0 .or. scan(item, '*') > 0) then
        err = '= ' // item // ' is not an integer'
      else if (kt%kind == K_INT .and. (x%i > huge(1_int32) .or. x%i < -huge(1_int32))) then
        err = '= ' // item // ' is beyond the range of a 32-bit integer'
      else if (x%i < kt%ilo .or. x%i > kt%ihi) then
        err = '= ' // itoa(x%i) // ' must be in ' // range_text(kt) // unit_text(kt)
      end if
    case (K_REAL)
      read(item, *, iostat=ios) x%r
      if (ios /= 0 .or. scan(item, '*') > 0) then
        err = '= ' // item // ' is not a number'
      else if (.not. is_finite(x%r)) then
        t = 'NaN'
        if (x%r > 0) t = 'Inf'
        if (x%r < 0) t = '-Inf'
        err = '= ' // trim(t) // ' is not a finite number'
      else if (.not. in_range(x%r, kt)) then
        write(t, '(g0)') x%r
        err = '= ' // trim(t) // ' must be in ' // range_text(kt) // unit_text(kt)
      end if
    case (K_LOGICAL)
      ! A repeat count is refused before the read: gfortran's list-directed read of a logical "2*" (libgfortran 12)
      ! leaks its 300-byte line buffer.
      ios = 0
      if (scan(item, '*') == 0) read(item, *, iostat=ios) x%l
      if (ios /= 0 .or. scan(item, '*') > 0) err = '= ' // item // ' is not a logical (.true. or .false.)'
    case (K_STRING)
      if (len(item) < 2 .or. scan(item(1:1), '''"') == 0 .or. item(len(item):len(item)) /= item(1:1)) then
        err = '= ' // item // ' is not a quoted string'; return
      end if
      x%s = trim(adjustl(unquote(item)))
      if (len_trim(kt%choices) > 0) then
        x%s = lower(x%s)
        if (index(' ' // trim(kt%choices) // ' ', ' ' // x%s // ' ') == 0 .or. len(x%s) == 0 .or. &
             index(x%s, ' ') > 0) &
             err = 'must be ' // range_text(kt) // ' (got ''' // x%s // ''')'
      else if (kt%nonempty .and. len(x%s) == 0) then
        err = 'must not be empty'
      end if
    end select
  end subroutine

  logical function in_range(x, kt)
    real(real64), intent(in) :: x
    type(key_t), intent(in) :: kt
    in_range = (x > kt%lo .or. (kt%ends(1:1) == '[' .and. x == kt%lo)) .and. &
               (x < kt%hi .or. (kt%ends(2:2) == ']' .and. x == kt%hi))
  end function

  function unit_text(kt) result(s)
    type(key_t), intent(in) :: kt
    character(len=:), allocatable :: s
    s = ''
    if (len_trim(kt%unit) > 0) s = ' ' // trim(kt%unit)
  end function

  ! A quoted string's text: the quotes removed, a doubled quote of the same kind read as one.
  function unquote(item) result(s)
    character(len=*), intent(in) :: item
    character(len=:), allocatable :: s
    character(len=1) :: q
    integer :: i
    q = item(1:1)
    s = ''
    i = 2
    do while (i < len(item))
      s = s // item(i:i)
      if (item(i:i) == q) i = i + 1
      i = i + 1
    end do
  end function

  subroutine check_required(rd)
    type(reader_t), intent(inout) :: rd
    integer :: k
    do k = 1, size(KEYS)
      if (KEYS(k)%required .and. rd%key_line(k) == 0) &
           call fail(rd, 0, 'key ''' // trim(KEYS(k)%name) // ''' is required (it has no default)')
    end do
  end subroutine

  ! ---- the values into input_t, each looked up by its key's name ----
  subroutine fill(rd, inp)
    type(reader_t), intent(inout) :: rd
    type(input_t), intent(inout) :: inp
    integer :: e
    call put(rd, inp%molden, 'molden')
    do e = 1, MAX_CUBES
      call put(rd, inp%cubes(e), 'cubes', e)
    end do
    call put(rd, inp%density_threshold, 'density_threshold')
    call put(rd, inp%mm_charges, 'mm_charges')
    call put(rd, inp%jastrow, 'jastrow')
    call put(rd, inp%b_ee, 'b_ee')
    call put(rd, inp%b_en, 'b_en')
    call put(rd, inp%cusp_correction, 'cusp_correction')
    call put(rd, inp%cusp_rc_z, 'cusp_rc_z')
    call put(rd, inp%cusp_rc_max, 'cusp_rc_max')
    call put(rd, inp%n_walkers, 'n_walkers')
    call put(rd, inp%n_equil, 'n_equil')
    call put(rd, inp%n_blocks, 'n_blocks')
    call put(rd, inp%steps_per_block, 'steps_per_block')
    call put(rd, inp%energy_every, 'energy_every')
    call put(rd, inp%move_length, 'move_length')
    call put(rd, inp%tune_moves, 'tune_moves')
    call put(rd, inp%seed, 'seed')
    call put(rd, inp%first_walker, 'first_walker')
    call put(rd, inp%balance_walkers, 'balance_walkers')
    call put(rd, inp%devices, 'devices')
    call put(rd, inp%backend, 'backend')
    call put(rd, inp%precision, 'precision')
    call put(rd, inp%field_calls, 'field_calls')
    call put(rd, inp%field_method, 'field_method')
    call put(rd, inp%field_tolerance, 'field_tolerance')
    call put(rd, inp%field_margin, 'field_margin')
    call put(rd, inp%n_threads, 'n_threads')
    call put(rd, inp%n_electrons, 'n_electrons')
    call put(rd, inp%charge, 'charge')
    call put(rd, inp%recompute_every, 'recompute_every')
    call put(rd, inp%forces, 'forces')
    call put(rd, inp%forces_every, 'forces_every')
    call put(rd, inp%pol_file, 'pol_file')
    call put(rd, inp%pol_mode, 'pol_mode')
    call put(rd, inp%pol_blocks, 'pol_blocks')
    call put(rd, inp%pol_max_updates, 'pol_max_updates')
    call put(rd, inp%pol_tolerance, 'pol_tolerance')
    call put(rd, inp%pol_converge, 'pol_converge')
    call put(rd, inp%output_json, 'output_json')
  end subroutine

  ! The element (default 1) of key name; a name missing from the table is the program's fault.
  function element(rd, name, elem) result(x)
    type(reader_t), intent(in) :: rd
    character(len=*), intent(in) :: name
    integer, intent(in), optional :: elem
    type(element_t) :: x
    integer :: k
    k = key_index(name)
    if (k == 0) error stop 'vmc_input: no key ''' // name // ''' in the key table'
    x = rd%v(k)%e(1)
    if (present(elem)) x = rd%v(k)%e(elem)
  end function

  subroutine put_int(rd, dest, name)
    type(reader_t), intent(inout) :: rd
    integer, intent(out) :: dest
    character(len=*), intent(in) :: name
    type(element_t) :: x
    x = element(rd, name)
    dest = int(x%i)   ! in range: checked against the key's 32-bit kind
  end subroutine

  subroutine put_int64(rd, dest, name)
    type(reader_t), intent(inout) :: rd
    integer(int64), intent(out) :: dest
    character(len=*), intent(in) :: name
    type(element_t) :: x
    x = element(rd, name)
    dest = x%i
  end subroutine

  subroutine put_real(rd, dest, name)
    type(reader_t), intent(inout) :: rd
    real(real64), intent(out) :: dest
    character(len=*), intent(in) :: name
    type(element_t) :: x
    x = element(rd, name)
    dest = x%r
  end subroutine

  subroutine put_logical(rd, dest, name)
    type(reader_t), intent(inout) :: rd
    logical, intent(out) :: dest
    character(len=*), intent(in) :: name
    type(element_t) :: x
    x = element(rd, name)
    dest = x%l
  end subroutine

  ! A string longer than its field is refused (a namelist read would cut it silently).
  subroutine put_string(rd, dest, name, elem)
    type(reader_t), intent(inout) :: rd
    character(len=*), intent(out) :: dest
    character(len=*), intent(in) :: name
    integer, intent(in), optional :: elem
    type(element_t) :: x
    x = element(rd, name, elem)
    dest = x%s
    if (len(x%s) > len(dest)) call fail(rd, x%line, 'key ''' // name // ''' is longer than ' // itoa(len(dest)) // &
         ' characters')
  end subroutine

  ! ---- the rules between keys ----
  subroutine check_rules(rd, inp)
    type(reader_t), intent(inout) :: rd
    type(input_t), intent(inout) :: inp
    integer :: i
    integer(int64) :: n_meas, pol_sweeps
    character(len=16), parameter :: POL_KEYS(5) = [character(len=16) :: 'pol_mode', 'pol_blocks', 'pol_max_updates', &
         'pol_tolerance', 'pol_converge']
    inp%n_cubes = 0
    do i = 1, MAX_CUBES
      if (len_trim(inp%cubes(i)) == 0) exit
      inp%n_cubes = i
    end do
    if (any(len_trim(inp%cubes(inp%n_cubes + 1:)) > 0)) call bad('cubes', 'has a gap (empty entry before a used one)')
    ! One field holds one kind of source here: cells from cubes or MM point charges.
    if (inp%n_cubes > 0 .and. len_trim(inp%mm_charges) > 0) call bad('mm_charges', &
         'and key ''cubes'' cannot both be given: the environment is either cubes or MM point charges')
    ! A .pot file is the whole environment: its charges are the field's sources and its sites the dipoles'.
    if (len_trim(inp%pol_file) > 0 .and. (inp%n_cubes > 0 .or. len_trim(inp%mm_charges) > 0)) call bad('pol_file', &
         'cannot be given with key ''cubes'' or ''mm_charges'': the .pot file''s charges are the environment')
    if (inp%forces .and. inp%n_cubes == 0 .and. len_trim(inp%mm_charges) == 0 .and. len_trim(inp%pol_file) == 0) &
         call bad('forces', 'needs an environment (key ''cubes'', ''mm_charges'' or ''pol_file''): there is ' // &
         'nothing to put a force on')
    ! Keys of the polarizable loop alone: given without it they would silently do nothing.
    do i = 1, size(POL_KEYS)
      if (rd%key_line(key_index(POL_KEYS(i))) > 0 .and. len_trim(inp%pol_file) == 0) call bad(trim(POL_KEYS(i)), &
           'applies to pol_file only (none is given)')
    end do
    if (rd%key_line(key_index('pol_max_updates')) > 0 .and. inp%pol_mode /= 'scf') call bad('pol_max_updates', &
         "applies to pol_mode = 'scf' only (pol_mode is '" // trim(inp%pol_mode) // "')")
    if (rd%key_line(key_index('pol_converge')) > 0 .and. inp%pol_mode /= 'scf') call bad('pol_converge', &
         "applies to pol_mode = 'scf' only (pol_mode is '" // trim(inp%pol_mode) // "')")
    if (mod(inp%steps_per_block, inp%energy_every) /= 0) call bad('energy_every', 'must divide steps_per_block (' // &
         itoa(inp%steps_per_block) // ')')
    n_meas = inp%steps_per_block / inp%energy_every
    if (mod(n_meas, int(inp%forces_every, int64)) /= 0) call bad('forces_every', 'must divide steps_per_block / ' // &
         'energy_every (' // itoa(n_meas) // ' local energies per block)')
    if (rd%key_line(key_index('forces_every')) > 0 .and. .not. (inp%forces .or. len_trim(inp%pol_file) > 0)) &
         call bad('forces_every', 'applies to forces = .true. or pol_file only')
    ! The sweeps of a run: equilibration, the polarizable loop's blocks (at most), the blocks.
    pol_sweeps = 0
    if (len_trim(inp%pol_file) > 0) pol_sweeps = int(inp%pol_blocks, int64) * inp%steps_per_block * &
         merge(inp%pol_max_updates, 1, inp%pol_mode == 'scf')
    if (int(inp%n_equil, int64) + int(inp%n_blocks, int64) * inp%steps_per_block + pol_sweeps > huge(1_int32)) then
      if (pol_sweeps > 0) then
        call bad('n_blocks', 'x steps_per_block + n_equil + the polarizable loop''s sweeps (pol_blocks x ' // &
             'steps_per_block x pol_max_updates) = ' // itoa(int(inp%n_equil, int64) + int(inp%n_blocks, int64) * &
             inp%steps_per_block + pol_sweeps) // ' sweeps: more than 2^31 - 1')
      else
        call bad('n_blocks', 'x steps_per_block + n_equil = ' // itoa(int(inp%n_equil, int64) + &
             int(inp%n_blocks, int64) * inp%steps_per_block) // ' sweeps: more than 2^31 - 1')
      end if
    end if
    if (inp%n_walkers * n_meas > MAX_BLOCK_VALUES) call bad('n_walkers', 'x steps_per_block / energy_every = ' // &
         itoa(inp%n_walkers * n_meas) // ' local energies per block: more than 2^28 (rank 0 gathers each block)')
    select case (inp%field_method)
    case ('direct')
      ! Keys of the split method alone: given with 'direct' they would silently do nothing.
      if (rd%key_line(key_index('field_tolerance')) > 0) call bad('field_tolerance', &
           "applies to field_method = 'split' only (field_method is 'direct')")
      if (rd%key_line(key_index('field_margin')) > 0) call bad('field_margin', &
           "applies to field_method = 'split' only (field_method is 'direct')")
    case ('split')
      if (inp%precision == 'single') call bad('field_method', "= 'split' needs precision = 'double' or 'mixed' (got '" // &
           trim(inp%precision) // "'): the range-split field runs in double or mixed precision")
    end select
  contains
    subroutine bad(key, what)
      character(len=*), intent(in) :: key, what
      call fail(rd, rd%key_line(key_index(key)), 'key ''' // key // ''' ' // what)
    end subroutine
  end subroutine

end module vmc_input
