! vmc_input_scan.f90 -- the syntax of the namelist group &vmc, without knowledge of its keys: the group and its
! end (only comments and blank lines after it), comments dropped, every "key = value" or "key(i) = value" with
! its line, and the items of a value.
! A compiler's namelist read names neither the line nor, for most faults, the key ("End of file" for a
! misspelt group or a missing '/'), so the driver reads the group itself (vmc_input.f90 gives the pairs
! their meaning from the key table). Nothing here stops the process: errors come back as stat and msg.
module vmc_input_scan
  use vmc_util, only: lower, itoa
  implicit none
  private
  public :: pair_t, scan_file, split_items, located

  integer, parameter :: MAX_LINES = 100000, LINE_LEN = 1024, MAX_GROUP = 2**20
  character(len=*), parameter :: NAME_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789_'

  ! One assignment: key, the index text of key(i) ('' without), the value text up to the next key, its line.
  type pair_t
    character(len=:), allocatable :: key, index, value
    integer :: line = 0
  end type

contains

  ! "path:line: text" (line 0: "path: text"), the form of every reader message.
  function located(path, line, text) result(s)
    character(len=*), intent(in) :: path, text
    integer, intent(in) :: line
    character(len=:), allocatable :: s
    if (line > 0) then
      s = path // ':' // itoa(line) // ': ' // text
    else
      s = path // ': ' // text
    end if
  end function

  ! The pairs of path's &vmc group, in file order. stat = 0 on success, else msg says what and where.
  subroutine scan_file(path, pairs, stat, msg)
    character(len=*), intent(in) :: path
    type(pair_t), allocatable, intent(out) :: pairs(:)
    integer, intent(out) :: stat
    character(len=:), allocatable, intent(out) :: msg
    character(len=LINE_LEN), allocatable :: lines(:)
    character(len=:), allocatable :: g   ! the group's text, comments removed, lines joined
    integer, allocatable :: gline(:)     ! line of each character of g
    integer :: n, line
    allocate(pairs(0))
    call read_all(path, lines, n, line, msg)
    if (len(msg) == 0) call group_text(lines, n, g, gline, line, msg)
    if (len(msg) == 0) call split_pairs(g, gline, pairs, line, msg)
    stat = merge(0, 1, len(msg) == 0)
    if (stat /= 0) msg = located(path, line, msg)
  end subroutine

  subroutine read_all(path, lines, n, line, msg)
    character(len=*), intent(in) :: path
    character(len=LINE_LEN), allocatable, intent(out) :: lines(:)
    integer, intent(out) :: n, line
    character(len=:), allocatable, intent(out) :: msg
    integer :: u, ios, sz
    character(len=LINE_LEN) :: buf
    character(len=256) :: iomsg
    n = 0; line = 0; msg = ''
    open(newunit=u, file=path, status='old', action='read', iostat=ios, iomsg=iomsg)
    if (ios /= 0) then
      msg = 'cannot open input (' // trim(iomsg) // ')'; return
    end if
    allocate(lines(64))
    do
      read(u, '(a)', advance='no', iostat=ios, size=sz) buf
      if (is_iostat_end(ios)) exit
      line = n + 1
      if (ios == 0) then   ! the record did not end within LINE_LEN characters
        msg = 'line longer than ' // itoa(LINE_LEN) // ' characters'
      else if (.not. is_iostat_eor(ios)) then
        msg = 'cannot read (not a text file?)'
      else if (n == MAX_LINES) then
        line = 0; msg = 'more than ' // itoa(MAX_LINES) // ' lines (not a namelist file?)'
      end if
      if (len(msg) > 0) exit
      n = n + 1
      if (n > size(lines)) lines = [lines, lines]
      lines(n) = buf(1:sz)
      call detab(lines(n))
    end do
    close(u)
  end subroutine

  elemental subroutine detab(s)
    character(len=*), intent(inout) :: s
    integer :: i
    do i = 1, len(s)
      if (s(i:i) == char(9) .or. s(i:i) == char(13)) s(i:i) = ' '
    end do
  end subroutine

  ! The group: '&vmc' outside strings and comments, its text up to the closing '/' (or '&end'). Lines are
  ! joined by a blank, except inside a string, which a line end continues (as in a namelist read).
  subroutine group_text(lines, n, g, gline, line, msg)
    character(len=*), intent(in) :: lines(:)
    integer, intent(in) :: n
    character(len=:), allocatable, intent(out) :: g, msg
    integer, allocatable, intent(out) :: gline(:)
    integer, intent(out) :: line
    integer :: i, j, k, first, cstart, name_end
    character(len=1) :: q
    character(len=64) :: others
    logical :: ended
    first = 0; cstart = 1; others = ''; line = 0; msg = ''
    g = ''
    allocate(gline(0))
    do i = 1, n
      k = code_index(lines(i), '&')
      if (k == 0) cycle
      name_end = k
      do while (name_end < len_trim(lines(i)))
        if (index(NAME_CHARS, lower(lines(i)(name_end+1:name_end+1))) == 0) exit
        name_end = name_end + 1
      end do
      if (lower(lines(i)(k+1:name_end)) == 'vmc') then
        first = i; cstart = name_end + 1
        exit
      end if
      if (len_trim(others) == 0) others = ' (found ''' // lines(i)(k:name_end) // ''' at line ' // itoa(i) // ')'
    end do
    if (first == 0) then
      msg = 'no &vmc namelist group' // trim(others); return
    end if
    q = ' '; ended = .false.; line = first
    do i = first, n
      j = 1
      if (i == first) j = cstart
      do k = j, len_trim(lines(i))
        if (q /= ' ') then
          if (lines(i)(k:k) == q) q = ' '
        else if (lines(i)(k:k) == '''' .or. lines(i)(k:k) == '"') then
          q = lines(i)(k:k)
        else if (lines(i)(k:k) == '!') then
          exit
        else if (lines(i)(k:k) == '/' .or. lower(lines(i)(k:min(k + 3, len(lines(i))))) == '&end') then
          ended = .true.; exit
        end if
      end do
      g = g // lines(i)(j:k-1)
      gline = [gline, spread(i, 1, k - j)]
      if (q == ' ') then
        g = g // ' '; gline = [gline, i]
      end if
      line = i
      if (ended) exit
      if (len(g) > MAX_GROUP) then
        msg = 'the &vmc group is longer than ' // itoa(MAX_GROUP) // ' characters'; return
      end if
    end do
    if (q /= ' ') then
      msg = 'a string opened in the &vmc group is never closed (missing ' // q // ')'
    else if (.not. ended) then
      line = n
      msg = 'the &vmc group (line ' // itoa(first) // ') has no closing ''/'' (file truncated?)'
    else
      j = k + 1
      if (lines(line)(k:k) == '&') j = k + 4
      call after_group(lines, n, line, j, first, msg)
    end if
  end subroutine

  ! Past the group's end (line, from column j): blanks and comments only. A namelist read stops at the '/'
  ! and never sees what follows, so a key there (or a second &vmc group) would be dropped without a word.
  subroutine after_group(lines, n, line, j, first, msg)
    character(len=*), intent(in) :: lines(:)
    integer, intent(in) :: n, j, first
    integer, intent(inout) :: line
    character(len=:), allocatable, intent(inout) :: msg
    integer :: i, c, k, e
    character(len=:), allocatable :: rest
    do i = line, n
      c = 1
      if (i == line) c = j
      if (c > len_trim(lines(i))) cycle
      rest = trim(adjustl(lines(i)(c:)))
      if (rest(1:1) == '!') cycle
      line = i
      k = code_index(rest, '&')
      if (k > 0) then
        e = k
        do while (e < len(rest))
          if (index(NAME_CHARS, lower(rest(e+1:e+1))) == 0) exit
          e = e + 1
        end do
        if (lower(rest(k+1:e)) == 'vmc') then
          msg = 'a second &vmc group (the first is at line ' // itoa(first) // '): one group per file'; return
        end if
      end if
      if (len(rest) > 60) rest = rest(1:57) // '...'
      msg = '''' // rest // ''' after the end of the &vmc group (line ' // itoa(first) // &
           '): only comments and blank lines may follow its ''/'''
      return
    end do
  end subroutine

  ! Every '=' outside strings starts a pair: key (and index) before it, value up to the next pair's key.
  subroutine split_pairs(g, gline, pairs, line, msg)
    character(len=*), intent(in) :: g
    integer, intent(in) :: gline(:)
    type(pair_t), allocatable, intent(inout) :: pairs(:)
    integer, intent(out) :: line
    character(len=:), allocatable, intent(out) :: msg
    integer :: i, j, k, npair
    integer, allocatable :: kstart(:), kend(:), eqpos(:), istart(:), iend(:)
    character(len=1) :: q
    allocate(kstart(len(g)), kend(len(g)), eqpos(len(g)), istart(len(g)), iend(len(g)))
    npair = 0; q = ' '; line = 0; msg = ''
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
        if (index(NAME_CHARS, lower(g(k:k))) == 0) exit
        k = k - 1
      end do
      if (j <= k) then
        line = gline(i); msg = '"=" without a key name'; return
      end if
      npair = npair + 1
      kstart(npair) = k + 1; kend(npair) = j; eqpos(npair) = i
    end do
    ! Anything before the first key other than blanks and commas is not "key = value".
    k = len(g) + 1
    if (npair > 0) k = kstart(1)
    if (len_trim(g(1:k-1)) > 0 .and. verify(g(1:k-1), ' ,') > 0) then
      i = verify(g(1:k-1), ' ,')
      line = gline(i); msg = '''' // trim(g(i:k-1)) // ''' in &vmc is not "key = value"'; return
    end if
    deallocate(pairs)
    allocate(pairs(npair))
    do i = 1, npair
      j = len(g)
      if (i < npair) j = kstart(i + 1) - 1
      pairs(i)%key = g(kstart(i):kend(i))
      pairs(i)%index = ''
      if (istart(i) > 0) pairs(i)%index = g(istart(i):iend(i))
      pairs(i)%value = g(eqpos(i)+1:j)
      pairs(i)%line = gline(eqpos(i))
    end do
  end subroutine

  ! Items of a value, separated by blanks or commas outside strings: b(1:2, i) their first and last
  ! character. A null item (a comma after a comma, or a leading comma) has b(1, i) = 0: in a namelist read
  ! it leaves its element unchanged. Every item starts at a character of its own, so there are at most len(v)
  ! of them; b is allocated here to that size, whatever the caller expected.
  pure subroutine split_items(v, n, b)
    character(len=*), intent(in) :: v
    integer, intent(out) :: n
    integer, allocatable, intent(out) :: b(:, :)
    integer :: i
    character(len=1) :: q
    logical :: inside, after_comma
    allocate(b(2, max(1, len(v))))
    n = 0; q = ' '; inside = .false.; after_comma = .true.
    do i = 1, len(v)
      if (q /= ' ') then
        if (v(i:i) == q) q = ' '
        b(2, n) = i
        cycle
      end if
      if (v(i:i) == ',') then
        if (after_comma .and. .not. inside) then
          n = n + 1; b(:, n) = 0
        end if
        inside = .false.; after_comma = .true.
        cycle
      end if
      if (v(i:i) == ' ') then
        inside = .false.
        cycle
      end if
      if (.not. inside) then
        n = n + 1; b(1, n) = i; inside = .true.; after_comma = .false.
      end if
      b(2, n) = i
      if (v(i:i) == '''' .or. v(i:i) == '"') q = v(i:i)
    end do
  end subroutine

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

end module vmc_input_scan
