! qmmm_accel_core.f90 -- Fortran 2003 (iso_c_binding) interface to the core of the qmmm-accel C API:
! status codes, options, and the FMO embedding field. Shipped as source so any Fortran compiler can
! build it; use the umbrella module qmmm_accel, which re-exports this one and every family.
!
! Units: atomic units (bohr, hartree). Coordinates are real(8) :: xyz(3,n).
! Every function returns an integer status; QMMM_SUCCESS = 0. qmmm_error_message() says what went wrong.
module qmmm_accel_core
  use, intrinsic :: iso_c_binding
  implicit none
  private

  ! ---- status codes (same values as qmmm_accel.h) ----
  integer, parameter, public :: QMMM_SUCCESS = 0, QMMM_ERR_NULL_ARG = 1, QMMM_ERR_INVALID_ARG = 2, &
       QMMM_ERR_NONFINITE = 3, QMMM_ERR_BAD_HANDLE = 4, QMMM_ERR_NO_CUDA = 5, QMMM_ERR_NO_DEVICE = 6, &
       QMMM_ERR_CUDA = 7, QMMM_ERR_OUT_OF_MEMORY = 8, QMMM_ERR_FILE_OPEN = 9, QMMM_ERR_FILE_FORMAT = 10, &
       QMMM_ERR_SINGULAR = 11, QMMM_ERR_UNSUPPORTED = 12, QMMM_ERR_MPI = 13, QMMM_ERR_BUSY = 14, &
       QMMM_ERR_INTERNAL = 99
  integer, parameter, public :: QMMM_BACKEND_AUTO = 0, QMMM_BACKEND_CPU = 1, QMMM_BACKEND_CUDA = 2
  integer, parameter, public :: QMMM_PRECISION_DOUBLE = 0, QMMM_PRECISION_SINGLE = 1, QMMM_PRECISION_MIXED = 2
  ! ---- units (CODATA 2018, the library's one set; qmmm_accel.h) ----
  real(c_double), parameter, public :: QMMM_BOHR_ANGSTROM = 0.529177210903_c_double   ! bohr in Angstrom
  real(c_double), parameter, public :: QMMM_HARTREE_EV = 27.211386245988_c_double     ! hartree in eV
  real(c_double), parameter, public :: QMMM_BOLTZMANN_EV_K = 8.617333262e-5_c_double  ! k_B in eV/K

  integer, parameter, public :: QMMM_METHOD_DIRECT = 0, QMMM_METHOD_SPLIT = 1
  integer, parameter, public :: QMMM_FLAG_LOW_LATENCY = 1
  integer, parameter, public :: QMMM_CPU_ISA_NONE = -1, QMMM_CPU_ISA_GENERIC = 0, QMMM_CPU_ISA_AVX2 = 1, &
       QMMM_CPU_ISA_AVX512 = 2

  type, bind(c), public :: qmmm_options
    integer(c_int32_t) :: backend = QMMM_BACKEND_AUTO
    integer(c_int32_t) :: precision = QMMM_PRECISION_DOUBLE
    integer(c_int32_t) :: device = -1
    integer(c_int32_t) :: n_threads = 0
    real(c_double) :: cell_volume = 0.0_c_double
    integer(c_int32_t) :: method = QMMM_METHOD_DIRECT
    integer(c_int32_t) :: flags = 0
    real(c_double) :: tolerance = 1e-7_c_double  ! SPLIT's requested error, as qmmm_options_default sets it
    type(c_ptr) :: region = c_null_ptr   ! SPLIT: c_loc of real(c_double), target :: region(6) (lo xyz, hi xyz)
    integer(c_int32_t) :: reserved(2) = 0
  end type qmmm_options

  ! A field handle; type(qmmm_field) :: f is ready for qmmm_field_create.
  type, public :: qmmm_field
    type(c_ptr) :: ptr = c_null_ptr
  end type qmmm_field

  public :: qmmm_error_message, qmmm_status_string, qmmm_version, qmmm_cuda_device_count, qmmm_gpu_mps_active
  public :: qmmm_field_create, qmmm_field_eval, qmmm_field_eval_async, qmmm_field_wait
  public :: qmmm_field_backend, qmmm_field_sizes, qmmm_field_runtime, qmmm_field_destroy
  public :: qmmm_region_around, qmmm_field_split_params, qmmm_field_split_stats
  public :: c_to_fortran_string
  public :: qmmm_set_index_base, qmmm_set_error, fortran_error, c_qmmm_set_index_base

  ! ---- raw C entry points (public for codes that want them as they are) ----
  interface
    function c_qmmm_error_message() bind(c, name='qmmm_error_message') result(p)
      import :: c_ptr
      type(c_ptr) :: p
    end function
    function c_qmmm_status_string(status) bind(c, name='qmmm_status_string') result(p)
      import :: c_ptr, c_int
      integer(c_int), value :: status
      type(c_ptr) :: p
    end function
    function c_qmmm_version(major, minor, patch) bind(c, name='qmmm_version') result(s)
      import :: c_int
      integer(c_int) :: major, minor, patch
      integer(c_int) :: s
    end function
    function c_qmmm_cuda_device_count(count) bind(c, name='qmmm_cuda_device_count') result(s)
      import :: c_int
      integer(c_int) :: count
      integer(c_int) :: s
    end function
    function c_qmmm_gpu_mps_active(active) bind(c, name='qmmm_gpu_mps_active') result(s)
      import :: c_int
      integer(c_int) :: active
      integer(c_int) :: s
    end function
    function c_qmmm_set_index_base(base) bind(c, name='qmmm_set_index_base') result(s)
      import :: c_int
      integer(c_int), value :: base
      integer(c_int) :: s
    end function
    function c_qmmm_set_error(status, message) bind(c, name='qmmm_set_error') result(s)
      import :: c_int, c_char
      integer(c_int), value :: status
      character(kind=c_char), intent(in) :: message(*)
      integer(c_int) :: s
    end function
    function c_qmmm_field_create(f, n_cells, cell_xyz, cell_q, n_nuclei, nuc_xyz, nuc_z, opt) &
         bind(c, name='qmmm_field_create') result(s)
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr) :: f
      integer(c_int64_t), value :: n_cells, n_nuclei
      type(c_ptr), value :: cell_xyz, cell_q, nuc_xyz, nuc_z, opt
      integer(c_int) :: s
    end function
    function c_qmmm_field_eval(f, n, xyz, u) bind(c, name='qmmm_field_eval') result(s)
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: f, xyz, u
      integer(c_int64_t), value :: n
      integer(c_int) :: s
    end function
    function c_qmmm_field_eval_async(f, n, xyz, u) bind(c, name='qmmm_field_eval_async') result(s)
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: f, xyz, u
      integer(c_int64_t), value :: n
      integer(c_int) :: s
    end function
    function c_qmmm_field_wait(f) bind(c, name='qmmm_field_wait') result(s)
      import :: c_ptr, c_int
      type(c_ptr), value :: f
      integer(c_int) :: s
    end function
    function c_qmmm_field_backend(f, backend, precision, device) bind(c, name='qmmm_field_backend') result(s)
      import :: c_ptr, c_int
      type(c_ptr), value :: f
      integer(c_int) :: backend, precision, device
      integer(c_int) :: s
    end function
    function c_qmmm_field_sizes(f, n_cells, n_nuclei) bind(c, name='qmmm_field_sizes') result(s)
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: f
      integer(c_int64_t) :: n_cells, n_nuclei
      integer(c_int) :: s
    end function
    function c_qmmm_field_runtime(f, cpu_isa, ll_running, ll_launches) bind(c, name='qmmm_field_runtime') result(s)
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: f
      integer(c_int) :: cpu_isa, ll_running
      integer(c_int64_t) :: ll_launches
      integer(c_int) :: s
    end function
    function c_qmmm_field_destroy(f) bind(c, name='qmmm_field_destroy') result(s)
      import :: c_ptr, c_int
      type(c_ptr), value :: f
      integer(c_int) :: s
    end function
    function c_qmmm_region_around(n, xyz, margin, region) bind(c, name='qmmm_region_around') result(s)
      import :: c_int, c_int64_t, c_double
      integer(c_int64_t), value :: n
      real(c_double), intent(in) :: xyz(*)
      real(c_double), value :: margin
      real(c_double), intent(out) :: region(6)
      integer(c_int) :: s
    end function
    function c_qmmm_field_split_params(f, alpha, r_cut, spacing, error_estimate) &
         bind(c, name='qmmm_field_split_params') result(s)
      import :: c_ptr, c_int, c_double
      type(c_ptr), value :: f
      real(c_double) :: alpha, r_cut, spacing, error_estimate
      integer(c_int) :: s
    end function
    function c_qmmm_field_split_stats(f, grid_values, bytes, n_points, n_outside) &
         bind(c, name='qmmm_field_split_stats') result(s)
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: f
      integer(c_int64_t) :: grid_values, bytes, n_points, n_outside
      integer(c_int) :: s
    end function
    function c_strlen(p) bind(c, name='strlen') result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: p
      integer(c_size_t) :: n
    end function
  end interface
  public :: c_qmmm_field_create, c_qmmm_field_eval, c_qmmm_field_eval_async, c_qmmm_field_wait, &
       c_qmmm_field_destroy

contains

  ! Copies a NUL-terminated C string into a Fortran string of exactly its length.
  function c_to_fortran_string(p) result(str)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: str
    character(kind=c_char), pointer :: chars(:)
    integer :: n, i
    if (.not. c_associated(p)) then
      str = ''
      return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: str)
    do i = 1, n
      str(i:i) = chars(i)
    end do
  end function

  ! The last error of the calling thread, in words.
  function qmmm_error_message() result(msg)
    character(len=:), allocatable :: msg
    msg = c_to_fortran_string(c_qmmm_error_message())
  end function

  function qmmm_status_string(status) result(name)
    integer, intent(in) :: status
    character(len=:), allocatable :: name
    name = c_to_fortran_string(c_qmmm_status_string(int(status, c_int)))
  end function

  integer function qmmm_version(major, minor, patch) result(s)
    integer, intent(out) :: major, minor, patch
    integer(c_int) :: a, b, c
    s = c_qmmm_version(a, b, c)
    major = a; minor = b; patch = c
  end function

  integer function qmmm_cuda_device_count(count) result(s)
    integer, intent(out) :: count
    integer(c_int) :: n
    s = c_qmmm_cuda_device_count(n)
    count = n
  end function

  ! active = .true. when a CUDA MPS control daemon serves this process's pipe directory ($CUDA_MPS_PIPE_DIRECTORY,
  ! default /tmp/nvidia-mps): a file check, also without CUDA; its limits are in qmmm_accel.h.
  integer function qmmm_gpu_mps_active(active) result(s)
    logical, intent(out) :: active
    integer(c_int) :: a
    s = c_qmmm_gpu_mps_active(a)
    active = s == QMMM_SUCCESS .and. a /= 0
  end function

  ! Builds the field from cells (centres cell_xyz(3,M) in bohr, electron populations cell_q(M)) and
  ! nuclei (nuc_xyz(3,K), charges nuc_z(K)). Either set may be empty (size 0). Options: pass opt, or
  ! any of backend/precision/device/n_threads/cell_volume/method/tolerance/region alone (region(6): lo xyz,
  ! hi xyz in bohr, the QM region of QMMM_METHOD_SPLIT; see qmmm_region_around).
  integer function qmmm_field_create(f, cell_xyz, cell_q, nuc_xyz, nuc_z, opt, backend, precision, &
       device, n_threads, cell_volume, method, tolerance, region) result(s)
    type(qmmm_field), intent(out) :: f
    real(c_double), intent(in), target, contiguous :: cell_xyz(:,:), cell_q(:), nuc_xyz(:,:), nuc_z(:)
    type(qmmm_options), intent(in), optional :: opt
    integer, intent(in), optional :: backend, precision, device, n_threads, method
    real(c_double), intent(in), optional :: cell_volume, tolerance
    real(c_double), intent(in), optional :: region(6)
    type(qmmm_options), target :: o
    real(c_double), target :: reg(6)
    type(c_ptr) :: pcx, pcq, pnx, pnz
    if (present(opt)) o = opt
    if (present(backend)) o%backend = backend
    if (present(precision)) o%precision = precision
    if (present(device)) o%device = device
    if (present(n_threads)) o%n_threads = n_threads
    if (present(cell_volume)) o%cell_volume = cell_volume
    if (present(method)) o%method = method
    if (present(tolerance)) o%tolerance = tolerance
    if (present(region)) then
      reg = region          ! a copy that lives until the C call returns
      o%region = c_loc(reg)
    end if
    if (size(cell_xyz, 1) /= 3 .or. size(cell_xyz, 2) /= size(cell_q) .or. &
         size(nuc_xyz, 1) /= 3 .or. size(nuc_xyz, 2) /= size(nuc_z)) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_create: cell_xyz must be (3, size(cell_q)) and nuc_xyz (3, size(nuc_z))')
      return
    end if
    pcx = c_null_ptr; pcq = c_null_ptr; pnx = c_null_ptr; pnz = c_null_ptr
    if (size(cell_q) > 0) then
      pcx = c_loc(cell_xyz); pcq = c_loc(cell_q)
    end if
    if (size(nuc_z) > 0) then
      pnx = c_loc(nuc_xyz); pnz = c_loc(nuc_z)
    end if
    s = c_qmmm_set_index_base(1_c_int)
    s = c_qmmm_field_create(f%ptr, int(size(cell_q), c_int64_t), pcx, pcq, int(size(nuc_z), c_int64_t), &
         pnx, pnz, c_loc(o))
    call fortran_indices_off()
  end function

  ! u(i) = U_ES(xyz(:,i)) in hartree.
  integer function qmmm_field_eval(f, xyz, u) result(s)
    type(qmmm_field), intent(in) :: f
    real(c_double), intent(in), target, contiguous :: xyz(:,:)
    real(c_double), intent(out), target, contiguous :: u(:)
    if (size(xyz, 1) /= 3 .or. size(xyz, 2) /= size(u)) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_eval: xyz must be (3, size(u))')
      return
    end if
    if (size(u) == 0) then
      s = c_qmmm_field_eval(f%ptr, 0_c_int64_t, c_null_ptr, c_null_ptr)
      return
    end if
    s = c_qmmm_set_index_base(1_c_int)
    s = c_qmmm_field_eval(f%ptr, int(size(u), c_int64_t), c_loc(xyz), c_loc(u))
    call fortran_indices_off()
  end function

  ! Starts an evaluation; u must stay allocated and untouched until qmmm_field_wait returns.
  integer function qmmm_field_eval_async(f, xyz, u) result(s)
    type(qmmm_field), intent(in) :: f
    real(c_double), intent(in), target, contiguous :: xyz(:,:)
    real(c_double), intent(inout), target, contiguous :: u(:)
    if (size(xyz, 1) /= 3 .or. size(xyz, 2) /= size(u)) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_eval_async: xyz must be (3, size(u))')
      return
    end if
    if (size(u) == 0) then
      s = c_qmmm_field_eval_async(f%ptr, 0_c_int64_t, c_null_ptr, c_null_ptr)
      return
    end if
    s = c_qmmm_set_index_base(1_c_int)
    s = c_qmmm_field_eval_async(f%ptr, int(size(u), c_int64_t), c_loc(xyz), c_loc(u))
    call fortran_indices_off()
  end function

  integer function qmmm_field_wait(f) result(s)
    type(qmmm_field), intent(in) :: f
    s = c_qmmm_set_index_base(1_c_int)
    s = c_qmmm_field_wait(f%ptr)
    call fortran_indices_off()
  end function

  integer function qmmm_field_backend(f, backend, precision, device) result(s)
    type(qmmm_field), intent(in) :: f
    integer, intent(out) :: backend
    integer, intent(out), optional :: precision, device
    integer(c_int) :: b, p, d
    s = c_qmmm_field_backend(f%ptr, b, p, d)
    backend = b
    if (present(precision)) precision = p
    if (present(device)) device = d
  end function

  integer function qmmm_field_sizes(f, n_cells, n_nuclei) result(s)
    type(qmmm_field), intent(in) :: f
    integer(c_int64_t), intent(out) :: n_cells, n_nuclei
    s = c_qmmm_field_sizes(f%ptr, n_cells, n_nuclei)
  end function

  ! The CPU kernel set (QMMM_CPU_ISA_*) and the low-latency kernel's state; see the C header.
  integer function qmmm_field_runtime(f, cpu_isa, ll_running, ll_launches) result(s)
    type(qmmm_field), intent(in) :: f
    integer, intent(out), optional :: cpu_isa, ll_running
    integer(c_int64_t), intent(out), optional :: ll_launches
    integer(c_int) :: isa, running
    integer(c_int64_t) :: launches
    s = c_qmmm_field_runtime(f%ptr, isa, running, launches)
    if (present(cpu_isa)) cpu_isa = isa
    if (present(ll_running)) ll_running = running
    if (present(ll_launches)) ll_launches = launches
  end function

  ! region = the bounding box of the points xyz(3,n) grown by margin (bohr): lo xyz, hi xyz.
  integer function qmmm_region_around(xyz, margin, region) result(s)
    real(c_double), intent(in), contiguous :: xyz(:,:)
    real(c_double), intent(in) :: margin
    real(c_double), intent(out) :: region(6)
    if (size(xyz, 1) /= 3) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_region_around: xyz must be (3, n)')
      return
    end if
    s = c_qmmm_region_around(int(size(xyz, 2), c_int64_t), xyz, margin, region)
  end function

  ! QMMM_METHOD_SPLIT: alpha (1/bohr), r_cut and spacing (bohr), error_estimate (normwise); see the C header.
  integer function qmmm_field_split_params(f, alpha, r_cut, spacing, error_estimate) result(s)
    type(qmmm_field), intent(in) :: f
    real(c_double), intent(out), optional :: alpha, r_cut, spacing, error_estimate
    real(c_double) :: a, r, h, e
    s = c_qmmm_field_split_params(f%ptr, a, r, h, e)
    if (present(alpha)) alpha = a
    if (present(r_cut)) r_cut = r
    if (present(spacing)) spacing = h
    if (present(error_estimate)) error_estimate = e
  end function

  ! QMMM_METHOD_SPLIT: grid values, bytes of the method's tables, points evaluated, points outside the region.
  integer function qmmm_field_split_stats(f, grid_values, bytes, n_points, n_outside) result(s)
    type(qmmm_field), intent(in) :: f
    integer(c_int64_t), intent(out), optional :: grid_values, bytes, n_points, n_outside
    integer(c_int64_t) :: g, b, n, o
    s = c_qmmm_field_split_stats(f%ptr, g, b, n, o)
    if (present(grid_values)) grid_values = g
    if (present(bytes)) bytes = b
    if (present(n_points)) n_points = n
    if (present(n_outside)) n_outside = o
  end function

  integer function qmmm_field_destroy(f) result(s)
    type(qmmm_field), intent(inout) :: f
    s = c_qmmm_field_destroy(f%ptr)
    f%ptr = c_null_ptr
  end function

  ! Records message as this thread's error message and returns status: for a check that fails before the C call.
  integer function fortran_error(status, message) result(s)
    integer, intent(in) :: status
    character(*), intent(in) :: message
    s = c_qmmm_set_error(int(status, c_int), message // c_null_char)
  end function

  integer function qmmm_set_error(status, message) result(s)
    integer, intent(in) :: status
    character(*), intent(in) :: message
    s = fortran_error(status, message)
  end function

  ! Messages of this thread count from base: 0 (C) or 1 (Fortran; the wrappers here set it around their calls).
  integer function qmmm_set_index_base(base) result(s)
    integer, intent(in) :: base
    s = c_qmmm_set_index_base(int(base, c_int))
  end function

  subroutine fortran_indices_off()
    integer(c_int) :: r
    r = c_qmmm_set_index_base(0_c_int)
  end subroutine

end module qmmm_accel_core
