! vmc_memory.f90 -- the run's memory, estimated from the input and the Molden file before anything large is
! allocated, against what this machine has. Without it a run too large for the machine (n_walkers = 10000000,
! n_blocks = 100000000) allocates and fills gigabytes for seconds to minutes and then fails part way, or
! swaps; with it, it stops at once naming the key and the GB needed (exit status 2, as for every bad input).
! The estimate counts the arrays whose size grows with the size keys (walkers, local energies per block, the
! energy series), as the modules allocate them, all as if held at once; what stays small for any input (basis,
! cusp tables, the field's cells, the runtime) is left out. Water, 300000 walkers, 10 sweeps a block: 0.74 GB
! estimated, 0.62 GB peak RSS measured.
! Available memory, where it can be read (Linux; elsewhere the check is skipped): for the node, MemAvailable
! (/proc/meminfo) and a cgroup v2 limit (memory.max less memory.current); for one process, the address-space
! and data-size limits (ulimit -v, ulimit -d: /proc/self/limits), which make an allocation beyond them fail.
module vmc_memory
  use, intrinsic :: iso_fortran_env, only: real64, int64
  use vmc_util
  use vmc_input, only: input_t, input_where
  use vmc_molden, only: basis_t
  use vmc_sampler, only: NPART
  implicit none
  private
  public :: memory_t, memory_estimate, memory_available, memory_check

  ! Bytes of one process, in three parts by the keys that size them.
  type memory_t
    real(real64) :: walkers = 0   ! per walker: state, gathers, field points (n_walkers)
    real(real64) :: block = 0     ! local energies of one block (n_walkers x steps_per_block / energy_every)
    real(real64) :: series = 0    ! the energy series (n_blocks x steps_per_block / energy_every measurements)
  end type

contains

  ! One process with nw of the run's nw_total walkers on nt threads; root: rank 0, which also gathers every
  ! rank's local energies and final positions and reblocks the series; rebalance: balance_walkers on several
  ! ranks, where every rank gathers all positions once.
  function memory_estimate(inp, bs, nw, nw_total, nt, root, rebalance) result(m)
    type(input_t), intent(in) :: inp
    type(basis_t), intent(in) :: bs
    integer, intent(in) :: nw, nw_total, nt
    logical, intent(in) :: root, rebalance
    type(memory_t) :: m
    real(real64), parameter :: B = 8   ! bytes of a real64 (and of an int64 key)
    real(real64) :: ne, na, nb, n, nbf, nmeas, nser
    ne = bs%nalpha + bs%nbeta
    na = max(bs%nalpha, 1); nb = max(bs%nbeta, 1); n = max(na, nb); nbf = bs%nbf
    nmeas = real(inp%steps_per_block / inp%energy_every, real64)
    nser = real(inp%n_blocks, real64) * nmeas
    ! vmc_walkers: positions (3 ne), inverse Slater matrices (na^2 + nb^2), U_ES (ne), key, proposal (3), its
    ! field value, ratio and move side, the accepted flag and the sweep's acceptance count (4 + 4 bytes);
    ! the positions once more, copied for their gather at the end (vmc_report).
    m%walkers = real(nw, real64) * (B * (3 * ne + na**2 + nb**2 + ne + 1 + 3 + 3) + 8 + B * 3 * ne)
    ! The library's copies for a call at every electron ('measured'): the points and a value each (4 doubles).
    if (inp%n_cubes > 0) m%walkers = m%walkers + real(nw, real64) * ne * 4 * B
    ! All walkers' positions: rank 0's gather (vmc_report), every rank's for a rebalance (vmc_par).
    if (root) m%walkers = m%walkers + real(nw_total, real64) * 3 * ne * B
    if (rebalance) m%walkers = m%walkers + real(nw_total, real64) * 3 * ne * B
    ! One workspace per thread (vmc_wavefunction) and the Jastrow's pair table: small, counted here.
    m%walkers = m%walkers + nt * B * (nbf * (5 + n) + n**2 + 6 * n + bs%natom) + B * ne**2
    ! vmc_accum: this block's parts (NPART per walker and measurement) and their copy sent to the gather;
    ! rank 0 receives every rank's.
    m%block = NPART * B * nmeas * real(nw, real64) * 2
    if (root) m%block = m%block + NPART * B * nmeas * real(nw_total, real64)
    ! vmc_accum: the series of E_L and of the parts, allocated on every rank; rank 0 reblocks them (a copy of
    ! one series at a time, vmc_stats).
    m%series = B * nser * (1 + NPART) + B * inp%n_blocks
    if (root) m%series = m%series + B * nser
  end function

  ! Bytes this node can still give (node, -1: unknown) and one process may allocate (proc, -1: no limit), with
  ! where each figure comes from.
  subroutine memory_available(node, node_src, proc, proc_src)
    real(real64), intent(out) :: node, proc
    character(len=:), allocatable, intent(out) :: node_src, proc_src
    real(real64) :: v, cur
    node = -1; proc = -1; node_src = ''; proc_src = ''
    v = file_field('/proc/meminfo', 'MemAvailable:')
    if (v >= 0) then
      node = v * 1024; node_src = 'MemAvailable in /proc/meminfo'   ! the file's unit is kB (1024 bytes)
    end if
    ! A container's limit (cgroup v2 at its usual mount): MemAvailable shows the host's memory.
    v = file_field('/sys/fs/cgroup/memory.max', '')
    cur = file_field('/sys/fs/cgroup/memory.current', '')
    if (v >= 0 .and. cur >= 0) then
      if (node < 0 .or. v - cur < node) then
        node = max(v - cur, 0.0_real64); node_src = 'the cgroup''s memory.max less memory.current'
      end if
    end if
    v = file_field('/proc/self/limits', 'Max address space')
    if (v >= 0) then
      proc = v; proc_src = 'the address-space limit, ulimit -v'
    end if
    v = file_field('/proc/self/limits', 'Max data size')
    if (v >= 0 .and. (proc < 0 .or. v < proc)) then
      proc = v; proc_src = 'the data-size limit, ulimit -d'
    end if
  end subroutine

  ! Stops the run (exit status 2) when the estimate exceeds what is available: the node's for the local_size
  ! ranks on this node (of n_ranks, each with the largest even share of the walkers; rank 0's gathers on its
  ! own node), one process's for this one. Named: the key of the largest part with its line in the input, the
  ! GB needed and available. balance_walkers can give a fast rank more walkers later: not foreseeable here.
  subroutine memory_check(inp, bs, n_ranks, nt, root, local_size)
    type(input_t), intent(in) :: inp
    type(basis_t), intent(in) :: bs
    integer, intent(in) :: n_ranks, nt, local_size
    logical, intent(in) :: root
    type(memory_t) :: me, other, node_m
    real(real64) :: node, proc
    character(len=:), allocatable :: node_src, proc_src
    integer :: nw
    logical :: rebalance
    nw = (inp%n_walkers + n_ranks - 1) / n_ranks
    rebalance = inp%balance_walkers .and. n_ranks > 1
    me = memory_estimate(inp, bs, nw, inp%n_walkers, nt, root, rebalance)
    other = memory_estimate(inp, bs, nw, inp%n_walkers, nt, .false., rebalance)
    node_m%walkers = me%walkers + (local_size - 1) * other%walkers
    node_m%block = me%block + (local_size - 1) * other%block
    node_m%series = me%series + (local_size - 1) * other%series
    call memory_available(node, node_src, proc, proc_src)
    if (node >= 0 .and. total(node_m) > node) then
      if (local_size > 1) node_src = node_src // ', for the ' // itoa(local_size) // ' ranks on this node'
      call die(refusal(node_m, node, node_src))
    end if
    if (proc >= 0 .and. total(me) > proc) call die(refusal(me, proc, proc_src))
  contains
    pure real(real64) function total(m)
      type(memory_t), intent(in) :: m
      total = m%walkers + m%block + m%series
    end function

    function refusal(m, have, src) result(s)
      type(memory_t), intent(in) :: m
      real(real64), intent(in) :: have
      character(len=*), intent(in) :: src
      character(len=:), allocatable :: s
      integer(int64) :: nmeas
      nmeas = inp%steps_per_block / inp%energy_every
      s = input_where(inp, 'n_walkers') // ': key ''n_walkers'' = ' // itoa(inp%n_walkers)
      if (m%block > m%walkers .and. m%block >= m%series) then
        s = s // ' (x steps_per_block / energy_every = ' // itoa(int(inp%n_walkers, int64) * nmeas) // &
             ' local energies per block)'
      else if (m%series > m%walkers .and. m%series > m%block) then
        s = input_where(inp, 'n_blocks') // ': key ''n_blocks'' = ' // itoa(inp%n_blocks) // &
             ' (x steps_per_block / energy_every = ' // itoa(int(inp%n_blocks, int64) * nmeas) // ' measurements)'
      end if
      s = s // ': the run needs about ' // gb(total(m)) // ' GB of memory (walkers ' // gb(m%walkers) // &
           ' GB, local energies per block ' // gb(m%block) // ' GB, energy series ' // gb(m%series) // &
           ' GB), more than the ' // gb(have) // ' GB available (' // src // ')'
    end function
  end subroutine

  ! Decimal GB with one digit after the point.
  function gb(bytes) result(s)
    real(real64), intent(in) :: bytes
    character(len=:), allocatable :: s
    character(len=32) :: b
    write(b, '(f0.1)') bytes / 1e9_real64
    s = trim(adjustl(b))
    if (s(1:1) == '.') s = '0' // s
  end function

  ! The first word after label on the first line of path that starts with label ('': the file's first line),
  ! as a number; -1 where the file, the line or a number is missing ('unlimited', 'max').
  real(real64) function file_field(path, label) result(v)
    character(len=*), intent(in) :: path, label
    character(len=256) :: line, word
    integer :: u, ios
    v = -1
    open(newunit=u, file=path, status='old', action='read', iostat=ios)
    if (ios /= 0) return
    do
      read(u, '(a)', iostat=ios) line
      if (ios /= 0) exit
      if (len(label) > 0) then
        if (index(line, label) /= 1) cycle
      end if
      word = ''
      read(line(len(label) + 1:), *, iostat=ios) word
      if (ios == 0) read(word, *, iostat=ios) v
      if (ios /= 0) v = -1
      exit
    end do
    close(u)
  end function

end module vmc_memory
