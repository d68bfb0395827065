! vmc_par.F90 -- the driver's only contact with MPI (and OpenMP's thread count and numbers). Built with -DQMMM_VMC_MPI (MPICH found) it spreads
! walkers over MPI ranks; without it every routine is the one-rank case, so the driver builds and runs
! without MPI and both builds give bitwise identical results for one rank.
!
! Collectives used by the driver: one allreduce of two counters per equilibration sweep (the move
! length is tuned on the global acceptance, so every rank count tunes it identically), one gatherv of
! the per-walker local energies per block, and a few gathers at start and end. Nothing per step. With key
! forces or pol_file a gatherv of the field at the sites per block; pol_file adds a broadcast of the dipoles.
module vmc_par
  use, intrinsic :: iso_fortran_env, only: real64, int64, error_unit
  use vmc_util
#ifdef QMMM_VMC_MPI
  use mpi_f08
#endif
  implicit none
  private
  public :: par_init, par_finalize, par_stop_all, par_sum_int64, par_gatherv_real, par_gather_real, &
       par_gather_int, par_gather_text, par_host, par_select_device, par_node_rank, par_share, par_have_mpi, &
       par_rebalance, par_barrier, par_bcast_real, thread_id, threads_start, par_node_open, par_node_bcast_real, &
       par_node_bcast_int64, par_node_close

  integer, public, protected :: par_rank = 0, par_size = 1
  integer, allocatable :: share_n(:)   ! walkers per rank after par_rebalance (unallocated: even shares)
#ifdef QMMM_VMC_MPI
  type(MPI_Comm) :: node_comm          ! the ranks of this node, between par_node_open and par_node_close
  integer(int64), parameter :: CHUNK = 2_int64**28   ! values per broadcast (MPI counts are default integers)
#endif
  logical, public, protected :: par_root = .true.
  logical, parameter :: par_have_mpi = &
#ifdef QMMM_VMC_MPI
       .true.
#else
       .false.
#endif

contains

  ! OpenMP thread number inside a parallel region (0 without OpenMP).
  integer function thread_id() result(t)
    !$ use omp_lib, only: omp_get_thread_num
    t = 0
    !$ t = omp_get_thread_num()
  end function

  ! The threads of this process: n if n > 0; else OMP_NUM_THREADS when set; else the node's cores shared
  ! out among the ranks on the node (local_size), so that ranks x threads fill the node without
  ! oversubscribing it. Sets OpenMP's default accordingly and returns the count (1 without OpenMP).
  ! max_threads (key n_threads' cap) holds for OMP_NUM_THREADS too: libgomp takes any count and, at the first
  ! parallel region, starts 30,000 threads, exits (50,000) or crashes (70,000). Called before any parallel region.
  integer function threads_start(n, local_size, max_threads) result(nt)
    !$ use omp_lib, only: omp_get_max_threads, omp_get_num_procs, omp_set_num_threads
    integer, intent(in) :: n, local_size, max_threads
    integer :: st
    nt = 1
    !$ if (n > 0) then
    !$   nt = n
    !$ else
    !$   call get_environment_variable('OMP_NUM_THREADS', status=st)
    !$   if (st == 0) then
    !$     nt = omp_get_max_threads()
    !$     if (nt > max_threads) call die('OMP_NUM_THREADS asks for ' // itoa(nt) // ' threads, more than the ' // &
    !$          itoa(max_threads) // ' that qmmm_vmc runs (the cap of key ''n_threads'', which overrides it): set ' // &
    !$          'OMP_NUM_THREADS or key ''n_threads'' to at most ' // itoa(max_threads))
    !$   else
    !$     nt = min(max_threads, max(1, omp_get_num_procs() / max(1, local_size)))
    !$   end if
    !$ end if
    !$ call omp_set_num_threads(nt)
    st = 0
  end function

  subroutine par_init()
#ifdef QMMM_VMC_MPI
    integer :: provided
    ! Threads never call MPI (only the main thread, between parallel loops): FUNNELED is enough.
    call MPI_Init_thread(MPI_THREAD_FUNNELED, provided)
    call MPI_Comm_rank(MPI_COMM_WORLD, par_rank)
    call MPI_Comm_size(MPI_COMM_WORLD, par_size)
    par_root = par_rank == 0
    if (par_size > 1) then
      die_prefix = 'rank ' // itoa(par_rank) // ' of ' // itoa(par_size) // ' (' // trim(par_host()) // ')'
      die_hook => abort_all
    end if
#endif
  end subroutine

#ifdef QMMM_VMC_MPI
  ! die() has printed the message; MPI_Abort makes mpiexec stop every rank with a non-zero status.
  subroutine abort_all()
    call MPI_Abort(MPI_COMM_WORLD, 2)
  end subroutine
#endif

  ! Every rank waits for the others: the end of setup, so that every rank's sampling time covers the same
  ! window (rank 0's total minus its setup is then the whole job's sampling time).
  subroutine par_barrier()
#ifdef QMMM_VMC_MPI
    call MPI_Barrier(MPI_COMM_WORLD)
#endif
  end subroutine

  subroutine par_finalize()
#ifdef QMMM_VMC_MPI
    call MPI_Finalize()
#endif
  end subroutine

  ! An error every rank detects alike (e.g. more ranks than walkers): rank 0 reports it once, all stop
  ! cleanly with status 2 (no abort needed since nobody waits for anybody).
  subroutine par_stop_all(msg)
    character(len=*), intent(in) :: msg
    if (par_root) write(error_unit, '(a)') 'qmmm_vmc: error: ' // trim(msg)
    flush(error_unit)
    call par_finalize()
    call exit(2)
  end subroutine

  ! Walkers first .. first+n-1 (0-based, global) of this rank: contiguous shares in rank order, sizes
  ! differing by at most one, so gathering in rank order is gathering in global walker order.
  ! Rank r's walkers: [first, first + n) of the global walker order, contiguous and in rank order. Even
  ! shares (the first mod(n_total, size) ranks one more) unless par_rebalance has set others.
  subroutine par_share(n_total, rank, first, n)
    integer, intent(in) :: n_total, rank
    integer, intent(out) :: first, n
    if (allocated(share_n)) then
      n = share_n(rank + 1)
      first = sum(share_n(1:rank))
      return
    end if
    n = n_total / par_size
    first = rank * n + min(rank, mod(n_total, par_size))
    if (rank < mod(n_total, par_size)) n = n + 1
  end subroutine

  ! Walker shares proportional to each rank's measured speed (walker-sweeps per second; largest remainders,
  ! at least one walker each), so that a slow core does not hold up the others at every collective. The
  ! walkers' positions x(:, :, w) move with them (gathered in walker order, then each rank takes its new
  ! range); the caller rebuilds everything else from the positions. Walkers keep their global index, hence
  ! their random streams: the visited configurations do not depend on the shares.
  subroutine par_rebalance(n_total, speed, x, first, n)
    integer, intent(in) :: n_total
    real(real64), intent(in) :: speed
    real(real64), allocatable, intent(inout) :: x(:, :, :)
    integer, intent(inout) :: first, n
#ifdef QMMM_VMC_MPI
    real(real64) :: sp(par_size), want(par_size)
    real(real64), allocatable :: buf(:)
    integer :: counts(par_size), displs(par_size), r, k, m, d1, d2, per
    d1 = size(x, 1); d2 = size(x, 2); per = d1 * d2
    call MPI_Allgather(speed, 1, MPI_DOUBLE_PRECISION, sp, 1, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD)
    do r = 1, par_size
      call par_share(n_total, r - 1, displs(r), counts(r))
    end do
    allocate(buf(per * n_total))
    call MPI_Allgatherv(x, per * n, MPI_DOUBLE_PRECISION, buf, per * counts, per * displs, MPI_DOUBLE_PRECISION, &
         MPI_COMM_WORLD)
    if (.not. all(sp > 0 .and. sp < huge(sp))) sp = 1   ! no usable timing: even shares
    want = 1 + (n_total - par_size) * sp / sum(sp)
    if (.not. allocated(share_n)) allocate(share_n(par_size))
    share_n = int(want)
    do k = 1, n_total - sum(share_n)   ! largest remainders (ties: lower rank), one walker each
      m = maxloc(want - share_n, 1)
      share_n(m) = share_n(m) + 1
      want(m) = share_n(m)
    end do
    call par_share(n_total, par_rank, first, n)
    deallocate(x)
    allocate(x(d1, d2, n))
    x = reshape(buf(per * first + 1:per * (first + n)), [d1, d2, n])
#endif
  end subroutine

  ! Sum over all ranks, result on every rank (integer sums: exact and order-free).
  subroutine par_sum_int64(a)
    integer(int64), intent(inout) :: a(:)
#ifdef QMMM_VMC_MPI
    integer(int64) :: b(size(a))
    b = a
    call MPI_Allreduce(b, a, size(a), MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD)
#endif
  end subroutine

  ! Rank 0's x on every rank (the same bits everywhere).
  subroutine par_bcast_real(x)
    real(real64), intent(inout) :: x(:)
#ifdef QMMM_VMC_MPI
    call MPI_Bcast(x, size(x), MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD)
#endif
  end subroutine

  ! Concatenation of every rank's send in rank order, on rank 0 (recv need only be allocated there).
  subroutine par_gatherv_real(send, recv)
    real(real64), intent(in) :: send(:)
    real(real64), intent(inout) :: recv(:)
#ifdef QMMM_VMC_MPI
    integer :: counts(par_size), displs(par_size), r
    call MPI_Gather(size(send), 1, MPI_INTEGER, counts, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
    if (par_root) then
      displs(1) = 0
      do r = 2, par_size
        displs(r) = displs(r - 1) + counts(r - 1)
      end do
      if (sum(counts) /= size(recv)) call die('par_gatherv_real: receive buffer of ' // itoa(size(recv)) // &
           ' for ' // itoa(sum(counts)) // ' values')
    end if
    call MPI_Gatherv(send, size(send), MPI_DOUBLE_PRECISION, recv, counts, displs, MPI_DOUBLE_PRECISION, 0, &
         MPI_COMM_WORLD)
#else
    recv(1:size(send)) = send
#endif
  end subroutine

  ! Fixed-size records: all(:, r+1) = rank r's x, on rank 0.
  subroutine par_gather_real(x, all)
    real(real64), intent(in) :: x(:)
    real(real64), intent(inout) :: all(:, :)
#ifdef QMMM_VMC_MPI
    call MPI_Gather(x, size(x), MPI_DOUBLE_PRECISION, all, size(x), MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD)
#else
    all(:, 1) = x
#endif
  end subroutine

  subroutine par_gather_int(x, all)
    integer, intent(in) :: x(:)
    integer, intent(inout) :: all(:, :)
#ifdef QMMM_VMC_MPI
    call MPI_Gather(x, size(x), MPI_INTEGER, all, size(x), MPI_INTEGER, 0, MPI_COMM_WORLD)
#else
    all(:, 1) = x
#endif
  end subroutine

  subroutine par_gather_text(s, all)
    character(len=*), intent(in) :: s
    character(len=*), intent(inout) :: all(:)
#ifdef QMMM_VMC_MPI
    character(len=len(all)) :: t
    t = s
    call MPI_Gather(t, len(t), MPI_CHARACTER, all, len(t), MPI_CHARACTER, 0, MPI_COMM_WORLD)
#else
    all(1) = s
#endif
  end subroutine

  function par_host() result(h)
    character(len=64) :: h
#ifdef QMMM_VMC_MPI
    character(len=MPI_MAX_PROCESSOR_NAME) :: name
    integer :: n
    call MPI_Get_processor_name(name, n)
    h = name(1:min(n, 64))
#else
    integer :: st
    st = hostnm(h)   ! GNU extension
    if (st /= 0) h = 'unknown'
#endif
  end function

  ! The CUDA device of this rank (qmmm-accel's rule: node-local rank mod the node's GPU count, or the
  ! spec / QMMM_DEVICE). spec '' = not given (QMMM_DEVICE, else round robin). Collective under MPI.
  ! This rank's place among the ranks of its node (MPI_COMM_TYPE_SHARED), for the start-up report of runs
  ! that choose no device (no environment, or backend 'cpu').
  subroutine par_node_rank(local_rank, local_size)
    integer, intent(out) :: local_rank, local_size
#ifdef QMMM_VMC_MPI
    type(MPI_Comm) :: node
    call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, par_rank, MPI_INFO_NULL, node)
    call MPI_Comm_rank(node, local_rank)
    call MPI_Comm_size(node, local_size)
    call MPI_Comm_free(node)
#else
    local_rank = 0; local_size = 1
#endif
  end subroutine

  ! Data read once per node (the cubes): par_node_open makes the node's communicator (MPI_COMM_TYPE_SHARED);
  ! leader = this rank is the node's rank 0; shared = every rank of the node has the leader's key (what it
  ! would read), so the leader reads and par_node_bcast_* pass it on. Ranks that disagree (an MPMD launch with
  ! different inputs) make shared false on the whole node: then every rank reads its own, as before, and
  ! reports its own errors. Collective over MPI_COMM_WORLD; without MPI: leader, shared.
  subroutine par_node_open(key, leader, shared)
    character(len=*), intent(in) :: key
    logical, intent(out) :: leader, shared
#ifdef QMMM_VMC_MPI
    character(len=:), allocatable :: k
    integer :: r, n
    logical :: same
    call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, par_rank, MPI_INFO_NULL, node_comm)
    call MPI_Comm_rank(node_comm, r)
    leader = r == 0
    n = len(key)
    call MPI_Bcast(n, 1, MPI_INTEGER, 0, node_comm)   ! the leader's length, so every rank joins the next one
    allocate(character(len=n) :: k)
    if (leader) k = key
    call MPI_Bcast(k, n, MPI_CHARACTER, 0, node_comm)
    same = len(key) == n .and. k == key
    call MPI_Allreduce(same, shared, 1, MPI_LOGICAL, MPI_LAND, node_comm)
#else
    leader = .true.; shared = .true.
#endif
  end subroutine

  ! x(1:n) of the node's rank 0, on every rank of the node (after par_node_open gave shared).
  subroutine par_node_bcast_real(x, n)
    real(real64), intent(inout) :: x(*)
    integer(int64), intent(in) :: n
#ifdef QMMM_VMC_MPI
    integer(int64) :: i, c
    do i = 1, n, CHUNK
      c = min(CHUNK, n - i + 1)
      call MPI_Bcast(x(i), int(c), MPI_DOUBLE_PRECISION, 0, node_comm)
    end do
#endif
  end subroutine

  subroutine par_node_bcast_int64(x, n)
    integer(int64), intent(inout) :: x(*)
    integer, intent(in) :: n
#ifdef QMMM_VMC_MPI
    call MPI_Bcast(x, n, MPI_INTEGER8, 0, node_comm)
#endif
  end subroutine

  subroutine par_node_close()
#ifdef QMMM_VMC_MPI
    call MPI_Comm_free(node_comm)
#endif
  end subroutine

  subroutine par_select_device(spec, device, local_rank, local_size, st)
#ifdef QMMM_VMC_MPI
    use qmmm_accel_mpi_comm, only: qmmm_mpi_select_device
#else
    use qmmm_accel, only: qmmm_pick_device, qmmm_cuda_device_count
#endif
    character(len=*), intent(in) :: spec
    integer, intent(out) :: device, local_rank, local_size, st
#ifdef QMMM_VMC_MPI
    if (len_trim(spec) > 0) then
      st = qmmm_mpi_select_device(MPI_COMM_WORLD%MPI_VAL, device, local_rank, local_size, spec)
    else
      st = qmmm_mpi_select_device(MPI_COMM_WORLD%MPI_VAL, device, local_rank, local_size)
    end if
#else
    integer :: n
    local_rank = 0; local_size = 1; device = -1
    st = qmmm_cuda_device_count(n)
    if (st /= 0) return
    if (len_trim(spec) > 0) then
      st = qmmm_pick_device(0, 1, n, device, spec)
    else
      st = qmmm_pick_device(0, 1, n, device)
    end if
#endif
  end subroutine

end module vmc_par
