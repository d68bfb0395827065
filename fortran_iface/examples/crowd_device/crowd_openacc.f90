! crowd_openacc.f90 -- a crowd of walkers whose electrons live in GPU memory under OpenACC: one
! qmmm_field_eval_walkers_device call per step gives one MM energy per walker, with no copy to the host and back.
! host_data use_device hands the device addresses of coord and e_mm to the library; the sums are then compared with
! the host call qmmm_field_eval_walkers (the same bits). Without a GPU (or an OpenACC offload compiler) it says so.
program crowd_openacc
  use, intrinsic :: iso_c_binding, only: c_double, c_loc
  use qmmm_accel
  implicit none
  integer, parameter :: nw = 64, ne = 22, nq = 2000
  real(c_double), target :: coord(3, nw * ne), e_mm(nw)  ! gfortran 12 takes no allocatable in use_device
  real(c_double) :: x(nq), y(nq), z(nq), q(nq), e_host(nw)
  integer :: counts(nw), st, i
  type(qmmm_field) :: mm
  counts = ne
  call random_number(x); call random_number(y); call random_number(z); call random_number(q)
  x = 20 * x - 10; y = 20 * y - 10; z = 20 * z - 10; q = q - 0.5d0
  call random_number(coord)
  coord = 16 * coord - 8
  st = qmmm_field_create_charges(mm, x, y, z, q, backend=QMMM_BACKEND_CUDA)
  if (st /= QMMM_SUCCESS) then
    print '(a, a)', 'qmmm-skip: crowd_openacc: no CUDA field here: ', trim(qmmm_error_message())
    stop
  end if
  !$acc data copyin(coord) copyout(e_mm)
  !$acc host_data use_device(coord, e_mm)
  st = qmmm_field_eval_walkers_device(mm, counts, c_loc(coord), c_loc(e_mm))
  !$acc end host_data
  ! the work runs on the field's own stream: qmmm_field_wait returns when it is done, before copyout reads e_mm
  if (st == QMMM_SUCCESS) st = qmmm_field_wait(mm)
  !$acc end data
  if (st /= QMMM_SUCCESS) then  ! e.g. an OpenACC build without an offload compiler: coord is host memory
    print '(a, a)', 'qmmm-skip: crowd_openacc: ', trim(qmmm_error_message())
    stop
  end if
  st = qmmm_field_eval_walkers(mm, counts, coord, e_host)
  do i = 1, nw
    if (e_mm(i) /= e_host(i)) then
      print '(a, i0, 2es25.17)', 'crowd_openacc: walker ', i, e_mm(i), e_host(i)
      error stop 1
    end if
  end do
  print '(a)', 'crowd_openacc: all passed'
  st = qmmm_field_destroy(mm)
end program crowd_openacc
