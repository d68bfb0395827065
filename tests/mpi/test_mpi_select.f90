! test_mpi_select -- qmmm_mpi_select_device through the Fortran module, run with 3 ranks on one node:
! the local ranks are 0,1,2 (a permutation gathered over the ranks), the local size is 3, the device
! is what qmmm_pick_device gives for that layout, and a spec naming a missing device is a clear error.
program test_mpi_select
  use mpi_f08
  use qmmm_accel
  use qmmm_accel_mpi_comm
  implicit none
  integer :: rank, nranks, dev, lr, ls, st, n, want, nfail
  integer, allocatable :: all(:)
  character(len=16) :: spec
  nfail = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  st = qmmm_cuda_device_count(n)
  st = qmmm_mpi_select_device(MPI_COMM_WORLD%MPI_VAL, dev, lr, ls, spec='')
  call expect(st == QMMM_SUCCESS, 'select with round robin: ' // qmmm_error_message())
  call expect(ls == nranks, 'all ranks of this test are on one node: local size = size')
  allocate(all(nranks))
  call MPI_Allgather(lr, 1, MPI_INTEGER, all, 1, MPI_INTEGER, MPI_COMM_WORLD)
  call expect(all(rank + 1) == lr .and. all_distinct(all), 'local ranks are a permutation of 0..size-1')
  st = qmmm_pick_device(lr, ls, n, want, '')
  call expect(dev == want, 'device is the rule''s (local rank mod GPU count, -1 without GPU)')
  write(spec, '(i0)') n          ! one past the last device: must be refused
  st = qmmm_mpi_select_device(MPI_COMM_WORLD%MPI_VAL, dev, spec=spec)
  call expect(st == QMMM_ERR_NO_DEVICE .and. dev == -1, 'missing device refused')
  call expect(index(qmmm_error_message(), 'names device') > 0, 'message names the device: ' // qmmm_error_message())
  call MPI_Allreduce(MPI_IN_PLACE, nfail, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0 .and. nfail == 0) print '(a,i0,a,i0,a)', 'test_mpi_select: all passed (', nranks, ' ranks, ', n, ' GPUs)'
  call MPI_Finalize()
  if (nfail > 0) call exit(1)
contains
  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print '(a,i0,a)', 'rank ', rank, ' FAILED: ' // what
      nfail = nfail + 1
    end if
  end subroutine
  logical function all_distinct(a)
    integer, intent(in) :: a(:)
    integer :: i
    all_distinct = .true.
    do i = 0, size(a) - 1
      if (count(a == i) /= 1) all_distinct = .false.
    end do
  end function
end program test_mpi_select
