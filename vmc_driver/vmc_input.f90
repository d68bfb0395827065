! vmc_input.f90 -- the namelist &vmc (documented in vmc_driver/README.md), checked before any work.
! A compiler's namelist read names neither the line nor, for most faults, the key ("End of file" for a
! non-numeric value, a misspelt group or a missing '/'), so the file is scanned first: the group and its
! end, every "key = value" with its line, each value against its key's type, each key (each element of an
! array key) at most once: the compiler's read would let the last one win silently. Then the namelist is read
! (the compiler's parser stays the authority on the syntax), and every number goes through one range
! check (need) that also refuses NaN and Inf. Nothing here stops the process: input_read returns a
! status and a message naming the file, the line where known, and the key.
module vmc_input
  use, intrinsic :: iso_fortran_env, only: real64, int64, int32
  use vmc_util
  implicit none
  private
  public :: input_t, input_read, input_where, MAX_CUBES, MAX_BLOCK_VALUES

  integer, parameter :: MAX_CUBES = 16
  ! Local energies per block (walkers x measurements): rank 0 gathers a few values of each with 32-bit
  ! MPI counts, and holds them in memory.
  integer(int64), parameter :: MAX_BLOCK_VALUES = 2_int64**28
  integer, parameter :: MAX_LINES = 100000, LINE_LEN = 1024, MAX_GROUP = 2**20

  ! Every key and its type: i integer, I 64-bit integer, r real, l logical, s string, S array of strings.
  character(len=*), parameter :: KEYS(*) = [character(len=24) :: 'molden', 'cubes', 'density_threshold', &
       'jastrow', 'b_ee', 'b_en', 'n_walkers', 'n_equil', 'n_blocks', 'steps_per_block', 'move_length', &
       'tune_moves', 'seed', 'backend', 'precision', 'field_calls', 'n_threads', 'n_electrons', &
       'recompute_every', 'output_json', 'first_walker', 'cusp_correction', 'devices', 'energy_every', &
       'cusp_rc_z', 'cusp_rc_max', 'balance_walkers', 'field_method', 'field_tolerance', 'field_margin', 'charge']
  character(len=*), parameter :: KINDS = 'sSrlrriiiirlIsssiiisIlsirrlsrri'

  type input_t
    character(len=512) :: path = ''       ! the input file itself (for messages)
    character(len=512) :: molden = '', cubes(MAX_CUBES) = '', output_json = ''
    real(real64) :: density_threshold = 1e-3_real64, b_ee = 1, b_en = 1, move_length = 0.5_real64
    logical :: jastrow = .false., tune_moves = .true.
    logical :: cusp_correction = .true.   ! nuclear cusp correction of the MOs (vmc_cusp.f90)
    real(real64) :: cusp_rc_z = 0.5_real64, cusp_rc_max = 0.2_real64   ! its radius: min(rc_z / Z, rc_max) bohr
    integer :: energy_every = 1           ! sweeps between local energies
    logical :: balance_walkers = .false.  ! MPI: walker shares by each rank's equilibration speed
    integer :: n_walkers = 0, n_equil = 0, n_blocks = 0, steps_per_block = 0, n_threads = 0
    integer :: n_electrons = -1, recompute_every = 0, n_cubes = 0
    integer :: charge = 0                 ! the QM fragment's total charge: its electrons are sum Z - charge
    integer(int64) :: seed = 0, first_walker = 0
    character(len=16) :: backend = 'auto', precision = 'double', field_calls = 'measured'
    character(len=64) :: devices = ''   ! CUDA device spec for the ranks of a node ('' = QMMM_DEVICE or round robin)
    ! The field's method: 'direct' (every cell) or 'split' (range-split, QMMM_METHOD_SPLIT) with its requested
    ! normwise error and the region around the QM nuclei (margin, bohr) where it interpolates.
    character(len=16) :: field_method = 'direct'
    real(real64) :: field_tolerance = 1e-7_real64, field_margin = 4.0_real64
    integer :: key_line(size(KEYS)) = 0   ! line of each key's assignment (0: not given), for later messages
  end type

  ! The reader's state: the file, the line of each key's assignment, the first error.
  type reader_t
    character(len=:), allocatable :: path, msg
    integer :: stat = 0
    integer :: key_line(size(KEYS)) = 0
    integer :: elem_line(MAX_CUBES, size(KEYS)) = 0   ! array keys: the line of each element's assignment
  end type

  interface need
    module procedure need_real, need_int
  end interface

contains

  ! Reads and checks path into inp. stat = 0 on success, else msg says what is wrong and where.
  subroutine input_read(path, inp, stat, msg)
    character(len=*), intent(in) :: path
    type(input_t), intent(out) :: inp
    integer, intent(out) :: stat
    character(len=:), allocatable, intent(out) :: msg
    type(reader_t) :: rd
    rd%path = trim(path)
    rd%msg = ''
    call scan_group(rd)
    if (rd%stat == 0) call read_namelist(rd, inp)
    if (rd%stat == 0) call check_values(rd, inp)
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
    k = key_number(key)
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
    if (line > 0) then
      rd%msg = rd%path // ':' // itoa(line) // ': ' // text
    else
      rd%msg = rd%path // ': ' // text
    end if
  end subroutine

  ! ---- the scan: group, end, key = value pairs, value types ----
  subroutine scan_group(rd)
    type(reader_t), intent(inout) :: rd
    character(len=LINE_LEN), allocatable :: lines(:)
    character(len=:), allocatable :: g             ! the group's text, comments removed, lines joined by blanks
    integer, allocatable :: gline(:)               ! line of each character of g
    integer :: n, i, j, k, first, last, cstart, cend, name_end
    character(len=1) :: q
    character(len=64) :: others
    logical :: ended
    call read_all(rd, lines, n)
    if (rd%stat /= 0) return
    ! The group: '&' outside strings and comments, followed by its name.
    first = 0; cstart = 1; others = ''
    do i = 1, n
      k = code_index(lines(i), '&')
      if (k == 0) cycle
      name_end = k
      do while (name_end < len_trim(lines(i)))
        if (index('abcdefghijklmnopqrstuvwxyz0123456789_', lower(lines(i)(name_end+1:name_end+1))) == 0) exit
        name_end = name_end + 1
      end do
      if (lower(lines(i)(k+1:name_end)) == 'vmc') then
        first = i; cstart = name_end + 1
        exit
      end if
      if (len_trim(others) == 0) others = ' (found ''' // lines(i)(k:name_end) // ''' at line ' // itoa(i) // ')'
    end do
    if (first == 0) then
      call fail(rd, 0, 'no &vmc namelist group' // trim(others))
      return
    end if
    ! Its text up to the closing '/', outside strings; comments dropped.
    g = ''
    allocate(gline(0))
    q = ' '; ended = .false.; last = first
    do i = first, n
      j = 1
      if (i == first) j = cstart
      cend = len_trim(lines(i))
      do k = j, cend
        if (q /= ' ') then
          if (lines(i)(k:k) == q) q = ' '
        else if (lines(i)(k:k) == '''' .or. lines(i)(k:k) == '"') then
          q = lines(i)(k:k)
        else if (lines(i)(k:k) == '!') then
          exit
        else if (lines(i)(k:k) == '/' .or. lower(lines(i)(k:min(k + 3, LINE_LEN))) == '&end') then
          ended = .true.; exit
        end if
      end do
      g = g // lines(i)(j:k-1) // ' '
      gline = [gline, spread(i, 1, k - j + 1)]
      last = i
      if (ended) exit
      if (len(g) > MAX_GROUP) then
        call fail(rd, i, 'the &vmc group is longer than ' // itoa(MAX_GROUP) // ' characters'); return
      end if
    end do
    if (q /= ' ') then
      call fail(rd, last, 'a string opened in the &vmc group is never closed (missing ' // q // ')')
    else if (.not. ended) then
      call fail(rd, n, 'the &vmc group (line ' // itoa(first) // ') has no closing ''/'' (file truncated?)')
    end if
    if (rd%stat /= 0) return
    call scan_pairs(rd, g, gline)
  end subroutine

  ! Every '=' outside strings starts a pair: key before it, value up to the next pair's key.
  subroutine scan_pairs(rd, g, gline)
    type(reader_t), intent(inout) :: rd
    character(len=*), intent(in) :: g
    integer, intent(in) :: gline(:)
    integer :: i, j, k, npair, idx, ios
    integer, allocatable :: kstart(:), kend(:), eqpos(:), istart(:), iend(:)
    character(len=1) :: q
    allocate(kstart(len(g)), kend(len(g)), eqpos(len(g)), istart(len(g)), iend(len(g)))
    npair = 0; q = ' '
    do i = 1, len(g)
      if (q /= ' ') then
        if (g(i:i) == q) q = ' '
        cycle
      end if
      if (g(i:i) == '''' .or. g(i:i) == '"') then
        q = g(i:i); cycle
      end if
      if (g(i:i) /= '=') cycle
      j = i - 1
      do while (j > 0)
        if (g(j:j) /= ' ') exit
        j = j - 1
      end do
      istart(npair + 1) = 0; iend(npair + 1) = 0
      if (j > 0) then
        if (g(j:j) == ')') then   ! cubes(2) = ...
          iend(npair + 1) = j - 1
          do while (j > 0)
            if (g(j:j) == '(') exit
            j = j - 1
          end do
          istart(npair + 1) = j + 1
          j = j - 1
        end if
      end if
      k = j
      do while (k > 0)
        if (index('abcdefghijklmnopqrstuvwxyz0123456789_', lower(g(k:k))) == 0) exit
        k = k - 1
      end do
      if (j <= k) then
        call fail(rd, gline(i), '"=" without a key name'); return
      end if
      npair = npair + 1
      kstart(npair) = k + 1; kend(npair) = j; eqpos(npair) = i
    end do
    ! Anything before the first key other than blanks and commas is not "key = value".
    k = len(g) + 1
    if (npair > 0) k = kstart(1)
    if (len_trim(g(1:k-1)) > 0 .and. verify(g(1:k-1), ' ,') > 0) then
      i = verify(g(1:k-1), ' ,')
      call fail(rd, gline(i), '''' // trim(g(i:k-1)) // ''' in &vmc is not "key = value"'); return
    end if
    do i = 1, npair
      k = key_number(g(kstart(i):kend(i)))
      if (k == 0) then
        call fail(rd, gline(eqpos(i)), 'unknown key ''' // g(kstart(i):kend(i)) // ''' in &vmc'); return
      end if
      ! A key given twice: the namelist read would keep the last value without a word (array keys: per
      ! element, in check_value, since cubes(2) = ... after cubes = 'a' is a second element, not a repeat).
      if (KINDS(k:k) /= 'S' .and. rd%key_line(k) > 0) then
        call fail(rd, gline(eqpos(i)), 'key ''' // trim(KEYS(k)) // ''' already given on line ' // &
             itoa(rd%key_line(k))); return
      end if
      rd%key_line(k) = gline(eqpos(i))
      idx = 1
      if (istart(i) > 0) then
        read(g(istart(i):iend(i)), *, iostat=ios) idx
        if (KINDS(k:k) /= 'S') then
          call fail(rd, gline(eqpos(i)), 'key ''' // trim(KEYS(k)) // ''' is not an array'); return
        else if (ios /= 0 .or. idx < 1 .or. idx > MAX_CUBES) then
          call fail(rd, gline(eqpos(i)), 'key ''' // trim(KEYS(k)) // ''': index ''' // g(istart(i):iend(i)) // &
               ''' is not in 1..' // itoa(MAX_CUBES)); return
        end if
      end if
      j = len(g)
      if (i < npair) j = kstart(i + 1) - 1
      call check_value(rd, k, idx, g(eqpos(i)+1:j), gline(eqpos(i)))
      if (rd%stat /= 0) return
    end do
  end subroutine

  ! One key's value text: the right number of items, each of the key's type.
  subroutine check_value(rd, k, idx, v, line)
    type(reader_t), intent(inout) :: rd
    integer, intent(in) :: k, idx, line
    character(len=*), intent(in) :: v
    integer :: n, i, ios
    integer, allocatable :: b(:, :)
    integer(int64) :: iv
    real(real64) :: rv
    logical :: lv
    character(len=:), allocatable :: key, item
    key = 'key ''' // trim(KEYS(k)) // ''''
    allocate(b(2, len(v) / 2 + 1))
    call split_items(v, n, b)
    if (n == 0) then
      call fail(rd, line, key // ' has no value'); return
    end if
    if (KINDS(k:k) /= 'S' .and. n > 1) then
      call fail(rd, line, key // ' takes one value, not ''' // trim(adjustl(v)) // ''''); return
    end if
    if (idx + n - 1 > MAX_CUBES) then
      call fail(rd, line, key // ' lists more than ' // itoa(MAX_CUBES) // ' files'); return
    end if
    if (KINDS(k:k) == 'S') then
      do i = idx, idx + n - 1
        if (rd%elem_line(i, k) > 0) then
          call fail(rd, line, 'key ''' // trim(KEYS(k)) // '(' // itoa(i) // ')'' already given on line ' // &
               itoa(rd%elem_line(i, k))); return
        end if
        rd%elem_line(i, k) = line
      end do
    end if
    do i = 1, n
      item = v(b(1, i):b(2, i))
      select case (KINDS(k:k))
      case ('i', 'I')
        read(item, *, iostat=ios) iv
        if (ios /= 0 .and. verify(item, '+-0123456789') == 0) then
          call fail(rd, line, key // ' = ' // item // ' is beyond the range of a 64-bit integer')
        else if (ios /= 0 .or. scan(item, '*') > 0) then
          call fail(rd, line, key // ' = ' // item // ' is not an integer')
        else if (KINDS(k:k) == 'i' .and. (iv > huge(1_int32) .or. iv < -huge(1_int32))) then
          call fail(rd, line, key // ' = ' // item // ' is beyond the range of a 32-bit integer')
        end if
      case ('r')
        read(item, *, iostat=ios) rv
        if (ios /= 0 .or. scan(item, '*') > 0) call fail(rd, line, key // ' = ' // item // ' is not a number')
      case ('l')
        read(item, *, iostat=ios) lv
        if (ios /= 0 .or. scan(item, '*') > 0) &
             call fail(rd, line, key // ' = ' // item // ' is not a logical (.true. or .false.)')
      case default
        if (len(item) < 2 .or. scan(item(1:1), '''"') == 0 .or. item(len(item):len(item)) /= item(1:1)) &
             call fail(rd, line, key // ' = ' // item // ' is not a quoted string')
      end select
      if (rd%stat /= 0) return
    end do
  end subroutine

  ! Items of a value: separated by blanks or commas outside strings (b(1:2, i): first and last character).
  pure subroutine split_items(v, n, b)
    character(len=*), intent(in) :: v
    integer, intent(out) :: n, b(:, :)
    integer :: i
    character(len=1) :: q
    logical :: inside
    n = 0; q = ' '; inside = .false.
    do i = 1, len(v)
      if (q /= ' ') then
        if (v(i:i) == q) q = ' '
        b(2, n) = i
        cycle
      end if
      if (v(i:i) == ' ' .or. v(i:i) == ',') then
        inside = .false.
        cycle
      end if
      if (.not. inside) then
        n = n + 1; b(1, n) = i; inside = .true.
      end if
      b(2, n) = i
      if (v(i:i) == '''' .or. v(i:i) == '"') q = v(i:i)
    end do
  end subroutine

  integer function key_number(name) result(k)
    character(len=*), intent(in) :: name
    do k = 1, size(KEYS)
      if (trim(KEYS(k)) == lower(name)) return
    end do
    k = 0
  end function

  ! Position of c in s outside strings and before a comment (0: none).
  pure integer function code_index(s, c) result(p)
    character(len=*), intent(in) :: s
    character(len=1), intent(in) :: c
    character(len=1) :: q
    integer :: i
    q = ' '
    do i = 1, len_trim(s)
      if (q /= ' ') then
        if (s(i:i) == q) q = ' '
        cycle
      end if
      if (s(i:i) == '''' .or. s(i:i) == '"') then
        q = s(i:i); cycle
      end if
      if (s(i:i) == '!') exit
      if (s(i:i) == c) then
        p = i; return
      end if
    end do
    p = 0
  end function

  subroutine read_all(rd, lines, n)
    type(reader_t), intent(inout) :: rd
    character(len=LINE_LEN), allocatable, intent(out) :: lines(:)
    integer, intent(out) :: n
    integer :: u, ios, sz
    character(len=LINE_LEN) :: buf
    character(len=256) :: msg
    n = 0
    open(newunit=u, file=rd%path, status='old', action='read', iostat=ios, iomsg=msg)
    if (ios /= 0) then
      call fail(rd, 0, 'cannot open input (' // trim(msg) // ')'); return
    end if
    allocate(lines(64))
    do
      read(u, '(a)', advance='no', iostat=ios, size=sz) buf
      if (is_iostat_end(ios)) exit
      if (ios == 0) then   ! the record did not end within LINE_LEN characters
        call fail(rd, n + 1, 'line longer than ' // itoa(LINE_LEN) // ' characters')
      else if (.not. is_iostat_eor(ios)) then
        call fail(rd, n + 1, 'cannot read (not a text file?)')
      else if (n == MAX_LINES) then
        call fail(rd, 0, 'more than ' // itoa(MAX_LINES) // ' lines (not a namelist file?)')
      end if
      if (rd%stat /= 0) exit
      n = n + 1
      if (n > size(lines)) lines = [lines, lines]
      lines(n) = buf(1:sz)
      call detab(lines(n))
    end do
    close(u)
  end subroutine

  subroutine detab(s)
    character(len=*), intent(inout) :: s
    integer :: i
    do i = 1, len(s)
      if (s(i:i) == char(9) .or. s(i:i) == char(13)) s(i:i) = ' '
    end do
  end subroutine

  ! ---- the namelist read itself ----
  subroutine read_namelist(rd, inp)
    type(reader_t), intent(inout) :: rd
    type(input_t), intent(inout) :: inp
    character(len=512) :: molden, cubes(MAX_CUBES), output_json
    real(real64) :: density_threshold, b_ee, b_en, move_length, cusp_rc_z, cusp_rc_max
    logical :: jastrow, tune_moves, cusp_correction, balance_walkers
    integer :: n_walkers, n_equil, n_blocks, steps_per_block, n_threads, n_electrons, recompute_every, energy_every
    integer :: charge
    integer(int64) :: seed, first_walker
    character(len=16) :: backend, precision, field_calls, field_method
    character(len=64) :: devices
    real(real64) :: field_tolerance, field_margin
    namelist /vmc/ molden, cubes, density_threshold, jastrow, b_ee, b_en, n_walkers, n_equil, n_blocks, &
         steps_per_block, move_length, tune_moves, seed, backend, precision, field_calls, n_threads, &
         n_electrons, recompute_every, output_json, first_walker, cusp_correction, devices, energy_every, &
         cusp_rc_z, cusp_rc_max, balance_walkers, field_method, field_tolerance, field_margin, charge
    integer :: u, ios
    character(len=512) :: msg

    molden = ''; cubes = ''; output_json = 'vmc_result.json'
    density_threshold = 1e-3_real64; b_ee = 1; b_en = 1; move_length = 0.5_real64
    jastrow = .true.; tune_moves = .true.; cusp_correction = .true.
    n_walkers = 64; n_equil = 100; n_blocks = 20; steps_per_block = 20; n_threads = 0
    n_electrons = -1; recompute_every = 50; seed = 1; first_walker = 0; charge = 0
    backend = 'auto'; precision = 'double'; field_calls = 'measured'; devices = ''
    energy_every = 1; cusp_rc_z = 0.5_real64; cusp_rc_max = 0.2_real64; balance_walkers = .false.
    field_method = 'direct'; field_tolerance = 1e-7_real64; field_margin = 4.0_real64

    msg = ''
    open(newunit=u, file=rd%path, status='old', action='read', iostat=ios, iomsg=msg)
    if (ios == 0) then
      read(u, nml=vmc, iostat=ios, iomsg=msg)
      close(u)
    end if
    if (ios /= 0) then
      call fail(rd, 0, 'namelist &vmc: ' // trim(msg)); return
    end if

    inp%molden = molden; inp%cubes = cubes; inp%output_json = output_json
    inp%density_threshold = density_threshold; inp%b_ee = b_ee; inp%b_en = b_en; inp%move_length = move_length
    inp%jastrow = jastrow; inp%tune_moves = tune_moves; inp%cusp_correction = cusp_correction
    inp%n_walkers = n_walkers; inp%n_equil = n_equil; inp%n_blocks = n_blocks
    inp%steps_per_block = steps_per_block; inp%n_threads = n_threads; inp%n_electrons = n_electrons
    inp%recompute_every = recompute_every; inp%seed = seed; inp%first_walker = first_walker
    inp%charge = charge
    inp%backend = lower(adjustl(backend)); inp%precision = lower(adjustl(precision))
    inp%field_calls = lower(adjustl(field_calls))
    inp%devices = adjustl(devices)
    inp%energy_every = energy_every; inp%cusp_rc_z = cusp_rc_z; inp%cusp_rc_max = cusp_rc_max
    inp%balance_walkers = balance_walkers
    inp%field_method = lower(adjustl(field_method))
    inp%field_tolerance = field_tolerance; inp%field_margin = field_margin
  end subroutine

  ! ---- values: every number through need (finite, in range), then the rules between keys ----
  subroutine check_values(rd, inp)
    type(reader_t), intent(inout) :: rd
    type(input_t), intent(inout) :: inp
    integer :: i
    integer(int64) :: n_meas
    call need(rd, 'density_threshold', inp%density_threshold, 0.0_real64, 1e3_real64, '[)', 'e/bohr^3')
    call need(rd, 'b_ee', inp%b_ee, 0.0_real64, 1e6_real64, '()', '1/bohr')
    call need(rd, 'b_en', inp%b_en, 0.0_real64, 1e6_real64, '()', '1/bohr')
    call need(rd, 'move_length', inp%move_length, 0.0_real64, 100.0_real64, '()', 'bohr')
    call need(rd, 'cusp_rc_z', inp%cusp_rc_z, 0.0_real64, 2.0_real64, '(]', 'bohr x Z')
    call need(rd, 'cusp_rc_max', inp%cusp_rc_max, 0.0_real64, 1.0_real64, '(]', 'bohr')
    ! The library's range of the split method's tolerance (normwise, dimensionless).
    call need(rd, 'field_tolerance', inp%field_tolerance, 1e-11_real64, 1e-3_real64, '[]', '(normwise error)')
    call need(rd, 'field_margin', inp%field_margin, 0.0_real64, 100.0_real64, '[]', 'bohr')
    call need(rd, 'n_walkers', int(inp%n_walkers, int64), 1_int64, 10000000_int64, '')
    call need(rd, 'n_equil', int(inp%n_equil, int64), 0_int64, 1000000000_int64, 'sweeps')
    call need(rd, 'n_blocks', int(inp%n_blocks, int64), 2_int64, 100000000_int64, '(an error bar needs two blocks)')
    call need(rd, 'steps_per_block', int(inp%steps_per_block, int64), 1_int64, 1000000000_int64, 'sweeps')
    call need(rd, 'energy_every', int(inp%energy_every, int64), 1_int64, 1000000000_int64, 'sweeps')
    call need(rd, 'n_threads', int(inp%n_threads, int64), 0_int64, 1024_int64, '(0: library default)')
    call need(rd, 'n_electrons', int(inp%n_electrons, int64), -1_int64, 100000_int64, '(-1: not checked)')
    call need(rd, 'charge', int(inp%charge, int64), -100000_int64, 100000_int64, 'e')
    call need(rd, 'recompute_every', int(inp%recompute_every, int64), 1_int64, 1000000000_int64, 'sweeps')
    call need(rd, 'first_walker', inp%first_walker, 0_int64, 2_int64**62, '')
    ! seed: every 64-bit value is a valid seed (the scan has checked that it is one).
    if (rd%stat /= 0) return

    if (len_trim(inp%molden) == 0) call bad('molden', 'is required (path of the Molden file)')
    inp%n_cubes = 0
    do i = 1, MAX_CUBES
      if (len_trim(inp%cubes(i)) == 0) exit
      inp%n_cubes = i
    end do
    if (any(len_trim(inp%cubes(inp%n_cubes + 1:)) > 0)) call bad('cubes', 'has a gap (empty entry before a used one)')
    if (mod(inp%steps_per_block, inp%energy_every) /= 0) call bad('energy_every', 'must divide steps_per_block (' // &
         itoa(inp%steps_per_block) // ')')
    n_meas = inp%steps_per_block / inp%energy_every
    if (int(inp%n_equil, int64) + int(inp%n_blocks, int64) * inp%steps_per_block > huge(1_int32)) &
         call bad('n_blocks', 'x steps_per_block + n_equil = ' // itoa(int(inp%n_equil, int64) + &
         int(inp%n_blocks, int64) * inp%steps_per_block) // ' sweeps: more than 2^31 - 1')
    if (inp%n_walkers * n_meas > MAX_BLOCK_VALUES) call bad('n_walkers', 'x steps_per_block / energy_every = ' // &
         itoa(inp%n_walkers * n_meas) // ' local energies per block: more than 2^28 (rank 0 gathers each block)')
    if (len_trim(inp%output_json) == 0) call bad('output_json', 'must not be empty')
    select case (inp%backend)
    case ('auto', 'cpu', 'cuda')
    case default
      call bad('backend', "must be 'auto', 'cpu' or 'cuda' (got '" // trim(inp%backend) // "')")
    end select
    select case (inp%precision)
    case ('double', 'single', 'mixed')
    case default
      call bad('precision', "must be 'double', 'single' or 'mixed' (got '" // trim(inp%precision) // "')")
    end select
    select case (inp%field_calls)
    case ('measured', 'batched', 'per_walker')
    case default
      call bad('field_calls', "must be 'measured', 'batched' or 'per_walker' (got '" // trim(inp%field_calls) // "')")
    end select
    select case (inp%field_method)
    case ('direct')
      ! Keys of the split method alone: given with 'direct' they would silently do nothing.
      if (rd%key_line(key_number('field_tolerance')) > 0) call bad('field_tolerance', &
           "applies to field_method = 'split' only (field_method is 'direct')")
      if (rd%key_line(key_number('field_margin')) > 0) call bad('field_margin', &
           "applies to field_method = 'split' only (field_method is 'direct')")
    case ('split')
      if (inp%precision == 'single') call bad('field_method', "= 'split' needs precision = 'double' or 'mixed' (got '" // &
           trim(inp%precision) // "'): the range-split field runs in double or mixed precision")
    case default
      call bad('field_method', "must be 'direct' or 'split' (got '" // trim(inp%field_method) // "')")
    end select
  contains
    subroutine bad(key, what)
      character(len=*), intent(in) :: key, what
      call fail(rd, rd%key_line(key_number(key)), 'key ''' // key // ''' ' // what)
    end subroutine
  end subroutine

  ! The range check of every number: finite and lo..hi, ends open '(' ')' or closed '[' ']'.
  subroutine need_real(rd, key, x, lo, hi, ends, unit)
    type(reader_t), intent(inout) :: rd
    character(len=*), intent(in) :: key, ends, unit
    real(real64), intent(in) :: x, lo, hi
    character(len=32) :: t
    logical :: ok
    if (.not. is_finite(x)) then
      t = 'NaN'
      if (x > 0) t = 'Inf'
      if (x < 0) t = '-Inf'
      call range_fail(rd, key, trim(t), 'is not a finite number')
      return
    end if
    ok = (x > lo .or. (ends(1:1) == '[' .and. x == lo)) .and. (x < hi .or. (ends(2:2) == ']' .and. x == hi))
    write(t, '(g0)') x
    if (.not. ok) call range_fail(rd, key, trim(t), 'must be in ' // ends(1:1) // trim(bound_text(lo)) // ', ' // &
         trim(bound_text(hi)) // ends(2:2) // ' ' // unit)
  end subroutine

  subroutine need_int(rd, key, v, lo, hi, unit)
    type(reader_t), intent(inout) :: rd
    character(len=*), intent(in) :: key, unit
    integer(int64), intent(in) :: v, lo, hi
    if (v < lo .or. v > hi) call range_fail(rd, key, itoa(v), 'must be in [' // itoa(lo) // ', ' // itoa(hi) // '] ' // unit)
  end subroutine

  subroutine range_fail(rd, key, value, what)
    type(reader_t), intent(inout) :: rd
    character(len=*), intent(in) :: key, value, what
    call fail(rd, rd%key_line(key_number(key)), 'key ''' // key // ''' = ' // value // ' ' // trim(what))
  end subroutine

  function bound_text(x) result(s)
    real(real64), intent(in) :: x
    character(len=24) :: s
    write(s, '(g0)') x
    if (x == aint(x) .and. abs(x) < 1e7_real64) write(s, '(i0)') int(x)
    if (abs(x) >= 1e7_real64 .or. (x /= 0 .and. abs(x) < 1e-2_real64)) write(s, '(es8.1)') x
    s = adjustl(s)
  end function

end module vmc_input
