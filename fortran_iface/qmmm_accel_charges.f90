! qmmm_accel_charges.f90 -- Fortran 2003 (iso_c_binding) interface to MM point charges as a field and to the
! summing evaluation: the call site of a QM/MM QMC code. Shipped as source; `use qmmm_accel` brings it.
!
! Units: bohr, e, hartree. Charges are PHYSICAL: an electron at r feels -q/|r - R| (see qmmm_accel_field.h).
! Every function returns an integer status (QMMM_SUCCESS = 0); qmmm_error_message() says what went wrong, counting
! points and charges from 1.
module qmmm_accel_charges
  use, intrinsic :: iso_c_binding
  use qmmm_accel_core, only: qmmm_field, qmmm_options, QMMM_SUCCESS, QMMM_ERR_INVALID_ARG, fortran_error, &
       c_qmmm_set_index_base
  implicit none
  private

  integer, parameter, public :: QMMM_SCREEN_NONE = 0, QMMM_SCREEN_EXP = 1, QMMM_SCREEN_GAUSSIAN = 2

  public :: qmmm_field_create_charges, qmmm_field_eval_sum, qmmm_field_eval_sum_async
  public :: qmmm_default_threads, qmmm_set_node_ranks

  interface qmmm_field_create_charges
    module procedure create_charges_arrays, create_charges_xyz
  end interface

  interface
    function c_qmmm_field_create_charges(f, n, x, y, z, stride, q, screening, a, b, n_nuclei, nuc_xyz, nuc_z, opt) &
         bind(c, name='qmmm_field_create_charges') result(s)
      import :: c_ptr, c_int, c_int32_t, c_int64_t
      type(c_ptr) :: f
      integer(c_int64_t), value :: n, stride, n_nuclei
      type(c_ptr), value :: x, y, z, q, a, b, nuc_xyz, nuc_z, opt
      integer(c_int32_t), value :: screening
      integer(c_int) :: s
    end function
    function c_qmmm_field_eval_sum(f, n, xyz, usum) bind(c, name='qmmm_field_eval_sum') result(s)
      import :: c_ptr, c_int, c_int64_t, c_double
      type(c_ptr), value :: f
      integer(c_int64_t), value :: n
      real(c_double), intent(in) :: xyz(*)
      real(c_double), intent(out) :: usum
      integer(c_int) :: s
    end function
    function c_qmmm_field_eval_sum_async(f, n, xyz, usum) bind(c, name='qmmm_field_eval_sum_async') result(s)
      import :: c_ptr, c_int, c_int64_t, c_double
      type(c_ptr), value :: f
      integer(c_int64_t), value :: n
      real(c_double), intent(in) :: xyz(*)
      real(c_double) :: usum
      integer(c_int) :: s
    end function
    function c_qmmm_default_threads(n) bind(c, name='qmmm_default_threads') result(s)
      import :: c_int
      integer(c_int) :: n
      integer(c_int) :: s
    end function
    function c_qmmm_set_node_ranks(n) bind(c, name='qmmm_set_node_ranks') result(s)
      import :: c_int
      integer(c_int), value :: n
      integer(c_int) :: s
    end function
  end interface

contains


  integer function qmmm_default_threads(n) result(s)
    integer, intent(out) :: n
    integer(c_int) :: c
    s = c_qmmm_default_threads(c)
    n = c
  end function

  integer function qmmm_set_node_ranks(n) result(s)
    integer, intent(in) :: n
    s = c_qmmm_set_node_ranks(int(n, c_int))
  end function


  ! Charges at (x(m), y(m), z(m)) with charges q(m). Screening, per charge: screen_a and screen_b for
  ! -q (1 - a exp(-b r^2)) / r, or sigma for -q erf(r / sigma) / r (give one form, or none). Nuclei optional.
  ! Options: opt, or backend / precision / device / n_threads alone.
  integer function create_charges_arrays(f, x, y, z, q, screen_a, screen_b, sigma, nuc_xyz, nuc_z, opt, backend, &
       precision, device, n_threads) result(s)
    type(qmmm_field), intent(out) :: f
    real(c_double), intent(in), target, contiguous :: x(:), y(:), z(:), q(:)
    real(c_double), intent(in), target, contiguous, optional :: screen_a(:), screen_b(:), sigma(:), nuc_xyz(:,:), nuc_z(:)
    type(qmmm_options), intent(in), optional :: opt
    integer, intent(in), optional :: backend, precision, device, n_threads
    if (size(y) /= size(x) .or. size(z) /= size(x) .or. size(q) /= size(x)) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_create_charges: x, y, z and q must have one size')
      return
    end if
    s = create(f, size(q), c_loc_or_null(x), c_loc_or_null(y), c_loc_or_null(z), 1, q, screen_a, screen_b, sigma, &
         nuc_xyz, nuc_z, opt, backend, precision, device, n_threads)
  end function

  ! Charges at xyz(:, m), as create_charges_arrays.
  integer function create_charges_xyz(f, xyz, q, screen_a, screen_b, sigma, nuc_xyz, nuc_z, opt, backend, &
       precision, device, n_threads) result(s)
    type(qmmm_field), intent(out) :: f
    real(c_double), intent(in), target, contiguous :: xyz(:,:), q(:)
    real(c_double), intent(in), target, contiguous, optional :: screen_a(:), screen_b(:), sigma(:), nuc_xyz(:,:), nuc_z(:)
    type(qmmm_options), intent(in), optional :: opt
    integer, intent(in), optional :: backend, precision, device, n_threads
    type(c_ptr) :: p
    if (size(xyz, 1) /= 3 .or. size(xyz, 2) /= size(q)) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_create_charges: xyz must be (3, size(q))')
      return
    end if
    p = c_null_ptr
    if (size(q) > 0) p = c_loc(xyz)
    s = create(f, size(q), p, offset(p, 1), offset(p, 2), 3, q, screen_a, screen_b, sigma, nuc_xyz, nuc_z, opt, &
         backend, precision, device, n_threads)
  end function

  type(c_ptr) function c_loc_or_null(a) result(p)
    real(c_double), intent(in), target, contiguous :: a(:)
    p = c_null_ptr
    if (size(a) > 0) p = c_loc(a)
  end function

  ! p + k doubles (the y and z rows of an xyz(3,n) array).
  type(c_ptr) function offset(p, k) result(r)
    type(c_ptr), intent(in) :: p
    integer, intent(in) :: k
    integer(c_intptr_t) :: a
    r = c_null_ptr
    if (.not. c_associated(p)) return
    a = transfer(p, a) + int(k, c_intptr_t) * int(c_sizeof(1.0_c_double), c_intptr_t)
    r = transfer(a, r)
  end function

  integer function create(f, n, px, py, pz, stride, q, screen_a, screen_b, sigma, nuc_xyz, nuc_z, opt, backend, &
       precision, device, n_threads) result(s)
    type(qmmm_field), intent(out) :: f
    integer, intent(in) :: n, stride
    type(c_ptr), intent(in) :: px, py, pz
    real(c_double), intent(in), target, contiguous :: q(:)
    real(c_double), intent(in), target, contiguous, optional :: screen_a(:), screen_b(:), sigma(:), nuc_xyz(:,:), nuc_z(:)
    type(qmmm_options), intent(in), optional :: opt
    integer, intent(in), optional :: backend, precision, device, n_threads
    type(qmmm_options), target :: o
    type(c_ptr) :: pa, pb, pq, pnx, pnz
    integer :: screening, nn
    if (present(opt)) o = opt
    if (present(backend)) o%backend = backend
    if (present(precision)) o%precision = precision
    if (present(device)) o%device = device
    if (present(n_threads)) o%n_threads = n_threads
    screening = QMMM_SCREEN_NONE
    pa = c_null_ptr; pb = c_null_ptr
    if (present(sigma) .and. (present(screen_a) .or. present(screen_b))) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_create_charges: give screen_a and screen_b, or sigma, not both')
      return
    end if
    if (present(screen_a) .neqv. present(screen_b)) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_create_charges: EXP screening needs screen_a and screen_b')
      return
    end if
    if (present(sigma)) then
      if (size(sigma) /= n) then
        s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_create_charges: size(sigma) /= size(q)')
        return
      end if
      screening = QMMM_SCREEN_GAUSSIAN
      if (n > 0) pa = c_loc(sigma)
    else if (present(screen_a)) then
      if (size(screen_a) /= n .or. size(screen_b) /= n) then
        s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_create_charges: size(screen_a) or size(screen_b) /= size(q)')
        return
      end if
      screening = QMMM_SCREEN_EXP
      if (n > 0) then
        pa = c_loc(screen_a); pb = c_loc(screen_b)
      end if
    end if
    pnx = c_null_ptr; pnz = c_null_ptr; nn = 0
    if (present(nuc_z)) then
      if (.not. present(nuc_xyz)) then
        s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_create_charges: nuc_z without nuc_xyz')
        return
      end if
      if (size(nuc_xyz, 1) /= 3 .or. size(nuc_xyz, 2) /= size(nuc_z)) then
        s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_create_charges: nuc_xyz must be (3, size(nuc_z))')
        return
      end if
      nn = size(nuc_z)
      if (nn > 0) then
        pnx = c_loc(nuc_xyz); pnz = c_loc(nuc_z)
      end if
    end if
    pq = c_null_ptr
    if (n > 0) pq = c_loc(q)
    s = c_qmmm_set_index_base(1_c_int)
    s = c_qmmm_field_create_charges(f%ptr, int(n, c_int64_t), px, py, pz, int(stride, c_int64_t), pq, &
         int(screening, c_int32_t), pa, pb, int(nn, c_int64_t), pnx, pnz, c_loc(o))
    nn = c_qmmm_set_index_base(0_c_int)
  end function

  ! usum = sum over i = 1..n of U(coord(:, i)) in hartree: the electrons of one configuration, as a legacy code
  ! keeps them (coord(3,*), an explicit count).
  integer function qmmm_field_eval_sum(f, n, coord, usum) result(s)
    type(qmmm_field), intent(in) :: f
    integer, intent(in) :: n
    real(c_double), intent(in) :: coord(3, *)
    real(c_double), intent(out) :: usum
    integer :: r
    s = c_qmmm_set_index_base(1_c_int)
    s = c_qmmm_field_eval_sum(f%ptr, int(n, c_int64_t), coord, usum)
    r = c_qmmm_set_index_base(0_c_int)
  end function

  ! Starts the sum; coord is copied before the return, usum is written by qmmm_field_wait (keep it in place).
  integer function qmmm_field_eval_sum_async(f, n, coord, usum) result(s)
    type(qmmm_field), intent(in) :: f
    integer, intent(in) :: n
    real(c_double), intent(in) :: coord(3, *)
    real(c_double), intent(inout), target :: usum
    integer :: r
    s = c_qmmm_set_index_base(1_c_int)
    s = c_qmmm_field_eval_sum_async(f%ptr, int(n, c_int64_t), coord, usum)
    r = c_qmmm_set_index_base(0_c_int)
  end function

end module qmmm_accel_charges
