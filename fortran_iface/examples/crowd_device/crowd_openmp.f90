! crowd_openmp.f90 -- the same crowd under OpenMP offload: target data maps coord and e_mm to the GPU,
! use_device_addr hands their device addresses to qmmm_field_eval_walkers_device (OpenMP 5.0; with type(c_ptr)
! variables use_device_ptr does the same), and the sums are compared with the host call qmmm_field_eval_walkers.
program crowd_openmp
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
    print '(a, a)', 'qmmm-skip: crowd_openmp: no CUDA field here: ', trim(qmmm_error_message())
    stop
  end if
  !$omp target data map(to: coord) map(from: e_mm)
  !$omp target data use_device_addr(coord, e_mm)
  st = qmmm_field_eval_walkers_device(mm, counts, c_loc(coord), c_loc(e_mm))
  !$omp end target data
  if (st == QMMM_SUCCESS) st = qmmm_field_wait(mm)
  ! the work runs on the field's own stream: qmmm_field_wait returns when it is done, before map(from) reads e_mm
  if (st == QMMM_SUCCESS) st = qmmm_field_eval_walkers(mm, counts, coord, e_host)
  !$omp end target data
  if (st /= QMMM_SUCCESS) then  ! e.g. an OpenMP build without an offload compiler: coord is host memory
    print '(a, a)', 'qmmm-skip: crowd_openmp: ', trim(qmmm_error_message())
    stop
  end if
  do i = 1, nw
    if (e_mm(i) /= e_host(i)) then
      print '(a, i0, 2es25.17)', 'crowd_openmp: walker ', i, e_mm(i), e_host(i)
      error stop 1
    end if
  end do
  print '(a)', 'crowd_openmp: all passed'
  st = qmmm_field_destroy(mm)
end program crowd_openmp
