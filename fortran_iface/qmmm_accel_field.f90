! qmmm_accel_field.f90 -- the field family of the qmmm-accel Fortran interface (qmmm_accel_field.h): the embedding
! field of density cells and nuclei, and of MM point charges (the call site of a QM/MM QMC code). Methods, flags,
! screenings, CPU kernel sets and type(qmmm_options) come from the generated module qmmm_accel_field_c, re-exported
! here with its raw bind(C) interfaces c_qmmm_*. `use qmmm_accel` brings it.
!
! Units: bohr, e, hartree. Coordinates are real(8) :: xyz(3,n). Charges of qmmm_field_create_charges are PHYSICAL:
! an electron at r feels -q/|r - R|. Every function returns an integer status (QMMM_SUCCESS = 0);
! qmmm_error_message() says what went wrong, counting points, cells, charges and nuclei from 1.
module qmmm_accel_field
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_loc, c_associated, c_int, c_int32_t, c_int64_t, &
       c_double, c_intptr_t, c_sizeof
  use qmmm_accel_core
  use qmmm_accel_field_c
  implicit none
  ! Public by default: the generated constants, types and interfaces pass through; this file's helpers are private.
  public
  private :: c_ptr, c_null_ptr, c_loc, c_associated, c_int, c_int32_t, c_int64_t, c_double, c_intptr_t, c_sizeof
  private :: create_charges_arrays, create_charges_xyz, create_charges, c_loc_or_null, offset, check_count, site_count
  private :: chosen_screening
  private :: walkers_call

  ! A field handle; type(qmmm_field) :: f is ready for qmmm_field_create.
  type :: qmmm_field
    type(c_ptr) :: ptr = c_null_ptr
  end type qmmm_field

  interface qmmm_field_create_charges
    module procedure create_charges_arrays, create_charges_xyz
  end interface

contains

  ! Builds the field from cells (centres cell_xyz(3,M) in bohr, electron populations cell_q(M)) and
  ! nuclei (nuc_xyz(3,K), charges nuc_z(K)). Either set may be empty (size 0). Options: pass opt, or any of
  ! backend/precision/device/n_threads/cell_volume/method/flags/tolerance/region alone (flags: QMMM_FLAG_* bits;
  ! region(6): lo xyz, hi xyz in bohr, the QM region of QMMM_METHOD_SPLIT; see qmmm_region_around). n_cells and
  ! n_nuclei: use the first so many of arrays sized to a maximum (default: the arrays' sizes).
  integer function qmmm_field_create(f, cell_xyz, cell_q, nuc_xyz, nuc_z, opt, backend, precision, &
       device, n_threads, cell_volume, method, tolerance, region, flags, n_cells, n_nuclei) result(s)
    type(qmmm_field), intent(out) :: f
    real(c_double), intent(in), target, contiguous :: cell_xyz(:,:), cell_q(:), nuc_xyz(:,:), nuc_z(:)
    type(qmmm_options), intent(in), optional :: opt
    integer, intent(in), optional :: backend, precision, device, n_threads, method, flags
    real(c_double), intent(in), optional :: cell_volume, tolerance
    real(c_double), intent(in), optional :: region(6)
    integer, intent(in), optional :: n_cells, n_nuclei
    type(qmmm_options), target :: o
    real(c_double), target :: reg(6)
    type(c_ptr) :: pcx, pcq, pnx, pnz
    integer :: nc, nn
    integer :: ib  ! the caller's index base, restored after the call
    if (present(opt)) o = opt
    if (present(backend)) o%backend = backend
    if (present(precision)) o%precision = precision
    if (present(device)) o%device = device
    if (present(n_threads)) o%n_threads = n_threads
    if (present(cell_volume)) o%cell_volume = cell_volume
    if (present(method)) o%method = method
    if (present(flags)) o%flags = flags
    if (present(tolerance)) o%tolerance = tolerance
    if (present(region)) then
      reg = region          ! a copy that lives until the C call returns
      o%region = c_loc(reg)
    end if
    if (size(cell_xyz, 1) /= 3 .or. size(nuc_xyz, 1) /= 3 .or. &
         (.not. present(n_cells) .and. size(cell_xyz, 2) /= size(cell_q)) .or. &
         (.not. present(n_nuclei) .and. size(nuc_xyz, 2) /= size(nuc_z))) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_create: cell_xyz must be (3, size(cell_q)) and nuc_xyz (3, size(nuc_z))')
      return
    end if
    nc = size(cell_q); nn = size(nuc_z)
    if (present(n_cells)) then
      s = check_count('qmmm_field_create', 'n_cells', n_cells, [size(cell_q), size(cell_xyz, 2)])
      if (s /= QMMM_SUCCESS) return
      nc = n_cells
    end if
    if (present(n_nuclei)) then
      s = check_count('qmmm_field_create', 'n_nuclei', n_nuclei, [size(nuc_z), size(nuc_xyz, 2)])
      if (s /= QMMM_SUCCESS) return
      nn = n_nuclei
    end if
    pcx = c_null_ptr; pcq = c_null_ptr; pnx = c_null_ptr; pnz = c_null_ptr
    if (nc > 0) then
      pcx = c_loc(cell_xyz); pcq = c_loc(cell_q)
    end if
    if (nn > 0) then
      pnx = c_loc(nuc_xyz); pnz = c_loc(nuc_z)
    end if
    ib = fortran_indices_on()
    s = c_qmmm_field_create(f%ptr, int(nc, c_int64_t), pcx, pcq, int(nn, c_int64_t), pnx, pnz, c_loc(o))
    call fortran_indices_restore(ib)
  end function

  ! u(i) = U_ES(xyz(:,i)) in hartree, for i = 1..n (n: the first n points of arrays sized to a maximum; default
  ! size(u)).
  integer function qmmm_field_eval(f, xyz, u, n) result(s)
    type(qmmm_field), intent(in) :: f
    real(c_double), intent(in), target, contiguous :: xyz(:,:)
    real(c_double), intent(out), target, contiguous :: u(:)
    integer, intent(in), optional :: n
    integer :: m
    integer :: ib  ! the caller's index base, restored after the call
    if (size(xyz, 1) /= 3 .or. (.not. present(n) .and. size(xyz, 2) /= size(u))) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_eval: xyz must be (3, size(u))')
      return
    end if
    m = size(u)
    if (present(n)) then
      s = check_count('qmmm_field_eval', 'n', n, [size(u), size(xyz, 2)])
      if (s /= QMMM_SUCCESS) return
      m = n
    end if
    if (m == 0) then
      s = c_qmmm_field_eval(f%ptr, 0_c_int64_t, c_null_ptr, c_null_ptr)
      return
    end if
    ib = fortran_indices_on()
    s = c_qmmm_field_eval(f%ptr, int(m, c_int64_t), c_loc(xyz), c_loc(u))
    call fortran_indices_restore(ib)
  end function

  ! Starts an evaluation; u must stay allocated and untouched until qmmm_field_wait returns. u is written in
  ! place, so it must be contiguous: a section such as u(1:n:2) would be passed as a temporary copy that is gone
  ! when the GPU (or a screened term) writes at qmmm_field_wait, and is refused.
  ! n: as qmmm_field_eval.
  integer function qmmm_field_eval_async(f, xyz, u, n) result(s)
    type(qmmm_field), intent(in) :: f
    real(c_double), intent(in), target, contiguous :: xyz(:,:)
    real(c_double), intent(inout), target :: u(:)
    integer, intent(in), optional :: n
    integer :: m
    integer :: ib  ! the caller's index base, restored after the call
    if (size(xyz, 1) /= 3 .or. (.not. present(n) .and. size(xyz, 2) /= size(u))) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_eval_async: xyz must be (3, size(u))')
      return
    end if
    if (.not. is_contiguous(u)) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_eval_async: u must be contiguous (it is written at '// &
           'qmmm_field_wait; pass a whole array, not a strided section)')
      return
    end if
    m = size(u)
    if (present(n)) then
      s = check_count('qmmm_field_eval_async', 'n', n, [size(u), size(xyz, 2)])
      if (s /= QMMM_SUCCESS) return
      m = n
    end if
    if (m == 0) then
      s = c_qmmm_field_eval_async(f%ptr, 0_c_int64_t, c_null_ptr, c_null_ptr)
      return
    end if
    ib = fortran_indices_on()
    s = c_qmmm_field_eval_async(f%ptr, int(m, c_int64_t), c_loc(xyz), c_loc(u(1)))
    call fortran_indices_restore(ib)
  end function

  integer function qmmm_field_wait(f) result(s)
    type(qmmm_field), intent(in) :: f
    integer :: ib  ! the caller's index base, restored after the call
    ib = fortran_indices_on()
    s = c_qmmm_field_wait(f%ptr)
    call fortran_indices_restore(ib)
  end function

  integer function qmmm_field_backend(f, backend, precision, device) result(s)
    type(qmmm_field), intent(in) :: f
    integer, intent(out) :: backend
    integer, intent(out), optional :: precision, device
    integer(c_int), target :: b, p, d
    s = c_qmmm_field_backend(f%ptr, c_loc(b), c_loc(p), c_loc(d))
    backend = b
    if (present(precision)) precision = p
    if (present(device)) device = d
  end function

  integer function qmmm_field_sizes(f, n_cells, n_nuclei) result(s)
    type(qmmm_field), intent(in) :: f
    integer(c_int64_t), intent(out), target :: n_cells, n_nuclei
    s = c_qmmm_field_sizes(f%ptr, c_loc(n_cells), c_loc(n_nuclei))
  end function

  ! The CPU kernel set (QMMM_CPU_ISA_*) and the low-latency kernel's state; see the C header.
  integer function qmmm_field_runtime(f, cpu_isa, ll_running, ll_launches) result(s)
    type(qmmm_field), intent(in) :: f
    integer, intent(out), optional :: cpu_isa, ll_running
    integer(c_int64_t), intent(out), optional :: ll_launches
    integer(c_int), target :: isa, running
    integer(c_int64_t), target :: launches
    s = c_qmmm_field_runtime(f%ptr, c_loc(isa), c_loc(running), c_loc(launches))
    if (present(cpu_isa)) cpu_isa = isa
    if (present(ll_running)) ll_running = running
    if (present(ll_launches)) ll_launches = launches
  end function

  ! region = the bounding box of the points xyz(3,n) grown by margin (bohr): lo xyz, hi xyz.
  integer function qmmm_region_around(xyz, margin, region) result(s)
    real(c_double), intent(in), target, contiguous :: xyz(:,:)
    real(c_double), intent(in) :: margin
    real(c_double), intent(out), target :: region(6)
    type(c_ptr) :: p
    if (size(xyz, 1) /= 3) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_region_around: xyz must be (3, n)')
      return
    end if
    p = c_null_ptr
    if (size(xyz) > 0) p = c_loc(xyz)
    s = c_qmmm_region_around(int(size(xyz, 2), c_int64_t), p, margin, c_loc(region))
  end function

  ! QMMM_METHOD_SPLIT: alpha (1/bohr), r_cut and spacing (bohr), error_estimate (normwise); see the C header.
  integer function qmmm_field_split_params(f, alpha, r_cut, spacing, error_estimate) result(s)
    type(qmmm_field), intent(in) :: f
    real(c_double), intent(out), optional :: alpha, r_cut, spacing, error_estimate
    real(c_double), target :: a, r, h, e
    s = c_qmmm_field_split_params(f%ptr, c_loc(a), c_loc(r), c_loc(h), c_loc(e))
    if (present(alpha)) alpha = a
    if (present(r_cut)) r_cut = r
    if (present(spacing)) spacing = h
    if (present(error_estimate)) error_estimate = e
  end function

  ! QMMM_METHOD_SPLIT: grid values, bytes of the method's tables, points evaluated, points outside the region.
  integer function qmmm_field_split_stats(f, grid_values, bytes, n_points, n_outside) result(s)
    type(qmmm_field), intent(in) :: f
    integer(c_int64_t), intent(out), optional :: grid_values, bytes, n_points, n_outside
    integer(c_int64_t), target :: g, b, n, o
    s = c_qmmm_field_split_stats(f%ptr, c_loc(g), c_loc(b), c_loc(n), c_loc(o))
    if (present(grid_values)) grid_values = g
    if (present(bytes)) bytes = b
    if (present(n_points)) n_points = n
    if (present(n_outside)) n_outside = o
  end function

  ! QMMM_METHOD_SPLIT's gradient: r_cut (bohr), error_estimate (per component, normwise), the grid values of its
  ! own grid, is_split (1: the split's gradient, 0: the direct sum); see the C header.
  integer function qmmm_field_split_grad_params(f, r_cut, error_estimate, grid_values, is_split) result(s)
    type(qmmm_field), intent(in) :: f
    real(c_double), intent(out), optional :: r_cut, error_estimate
    integer(c_int64_t), intent(out), optional :: grid_values
    integer, intent(out), optional :: is_split
    real(c_double), target :: r, e
    integer(c_int64_t), target :: g
    integer(c_int), target :: k
    s = c_qmmm_field_split_grad_params(f%ptr, c_loc(r), c_loc(e), c_loc(g), c_loc(k))
    if (present(r_cut)) r_cut = r
    if (present(error_estimate)) error_estimate = e
    if (present(grid_values)) grid_values = g
    if (present(is_split)) is_split = int(k)
  end function

  integer function qmmm_field_destroy(f) result(s)
    type(qmmm_field), intent(inout) :: f
    s = c_qmmm_field_destroy(f%ptr)
    f%ptr = c_null_ptr
  end function

  ! ---- MM point charges ----

  ! Charges at (x(m), y(m), z(m)) with charges q(m). Screening, per charge: screen_a and screen_b for
  ! -q (1 - a exp(-b r^2)) / r, or sigma for -q erf(r / sigma) / r (give one form, or none). Nuclei optional.
  ! Options: opt, or backend / precision / device / n_threads alone. n and n_nuclei: use the first so many charges
  ! and nuclei of arrays sized to a maximum (default: the arrays' sizes).
  integer function create_charges_arrays(f, x, y, z, q, screen_a, screen_b, sigma, nuc_xyz, nuc_z, opt, backend, &
       precision, device, n_threads, n, n_nuclei, screening, method, tolerance, region, flags) result(s)
    type(qmmm_field), intent(out) :: f
    real(c_double), intent(in), target, contiguous :: x(:), y(:), z(:), q(:)
    real(c_double), intent(in), target, contiguous, optional :: screen_a(:), screen_b(:), sigma(:), nuc_xyz(:,:), nuc_z(:)
    type(qmmm_options), intent(in), optional :: opt
    integer, intent(in), optional :: backend, precision, device, n_threads, n, n_nuclei, screening, method, flags
    real(c_double), intent(in), optional :: tolerance, region(6)
    integer :: m
    m = size(q)
    if (present(n)) then
      s = check_count('qmmm_field_create_charges', 'n', n, [size(x), size(y), size(z), size(q)])
      if (s /= QMMM_SUCCESS) return
      m = n
    else if (size(y) /= size(x) .or. size(z) /= size(x) .or. size(q) /= size(x)) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_create_charges: x, y, z and q must have one size')
      return
    end if
    s = create_charges(f, m, present(n), c_loc_or_null(x), c_loc_or_null(y), c_loc_or_null(z), 1, q, screen_a, &
         screen_b, sigma, nuc_xyz, nuc_z, opt, backend, precision, device, n_threads, n_nuclei, screening, method, &
         tolerance, region, flags)
  end function

  ! Charges at xyz(:, m), as create_charges_arrays.
  integer function create_charges_xyz(f, xyz, q, screen_a, screen_b, sigma, nuc_xyz, nuc_z, opt, backend, &
       precision, device, n_threads, n, n_nuclei, screening, method, tolerance, region, flags) result(s)
    type(qmmm_field), intent(out) :: f
    real(c_double), intent(in), target, contiguous :: xyz(:,:), q(:)
    real(c_double), intent(in), target, contiguous, optional :: screen_a(:), screen_b(:), sigma(:), nuc_xyz(:,:), nuc_z(:)
    type(qmmm_options), intent(in), optional :: opt
    integer, intent(in), optional :: backend, precision, device, n_threads, n, n_nuclei, screening, method, flags
    real(c_double), intent(in), optional :: tolerance, region(6)
    type(c_ptr) :: p
    integer :: m
    if (size(xyz, 1) /= 3 .or. (.not. present(n) .and. size(xyz, 2) /= size(q))) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_create_charges: xyz must be (3, size(q))')
      return
    end if
    m = size(q)
    if (present(n)) then
      s = check_count('qmmm_field_create_charges', 'n', n, [size(q), size(xyz, 2)])
      if (s /= QMMM_SUCCESS) return
      m = n
    end if
    p = c_null_ptr
    if (m > 0) p = c_loc(xyz)
    s = create_charges(f, m, present(n), p, offset(p, 1), offset(p, 2), 3, q, screen_a, screen_b, sigma, nuc_xyz, &
         nuc_z, opt, backend, precision, device, n_threads, n_nuclei, screening, method, tolerance, region, flags)
  end function

  ! An explicit count (n=, n_cells=, n_nuclei=) of arrays sized to a maximum: 0 <= count <= every size given.
  integer function check_count(where, name, n, sizes) result(s)
    character(*), intent(in) :: where, name
    integer, intent(in) :: n, sizes(:)
    character(len=24) :: a, b
    s = QMMM_SUCCESS
    write (a, '(i0)') n
    if (n < 0) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, where // ': ' // name // ' = ' // trim(a) // ' is negative')
    else if (any(sizes < n)) then
      write (b, '(i0)') minval(sizes)
      s = fortran_error(QMMM_ERR_INVALID_ARG, where // ': ' // name // ' = ' // trim(a) // &
           ' exceeds the arrays'' size (' // trim(b) // ')')
    end if
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

  ! The screening arrays of an explicit screening kind (create_charges): pa, pb for the C call, or an error.
  integer function chosen_screening(n, counted, kind, screen_a, screen_b, sigma, pa, pb) result(s)
    integer, intent(in) :: n, kind
    logical, intent(in) :: counted
    real(c_double), intent(in), target, contiguous, optional :: screen_a(:), screen_b(:), sigma(:)
    type(c_ptr), intent(out) :: pa, pb
    character(*), parameter :: who = 'qmmm_field_create_charges: '
    pa = c_null_ptr; pb = c_null_ptr
    s = QMMM_SUCCESS
    select case (kind)
    case (QMMM_SCREEN_NONE)
      return
    case (QMMM_SCREEN_EXP)
      if (.not. (present(screen_a) .and. present(screen_b))) then
        s = fortran_error(QMMM_ERR_NULL_ARG, who // 'screening = QMMM_SCREEN_EXP needs screen_a and screen_b')
      else if (min(size(screen_a), size(screen_b)) < n .or. &
               (.not. counted .and. (size(screen_a) /= n .or. size(screen_b) /= n))) then
        s = fortran_error(QMMM_ERR_INVALID_ARG, who // 'size(screen_a) or size(screen_b) /= size(q)')
      else if (n > 0) then
        pa = c_loc(screen_a); pb = c_loc(screen_b)
      end if
    case (QMMM_SCREEN_GAUSSIAN)
      if (present(sigma)) then
        if (size(sigma) < n .or. (.not. counted .and. size(sigma) /= n)) then
          s = fortran_error(QMMM_ERR_INVALID_ARG, who // 'size(sigma) /= size(q)')
        else if (n > 0) then
          pa = c_loc(sigma)
        end if
      else if (present(screen_a)) then
        if (size(screen_a) < n .or. (.not. counted .and. size(screen_a) /= n)) then
          s = fortran_error(QMMM_ERR_INVALID_ARG, who // 'size(screen_a) /= size(q)')
        else if (n > 0) then
          pa = c_loc(screen_a)
        end if
      else
        s = fortran_error(QMMM_ERR_NULL_ARG, who // 'screening = QMMM_SCREEN_GAUSSIAN needs sigma (or screen_a)')
      end if
    case default
      s = fortran_error(QMMM_ERR_INVALID_ARG, who // 'screening is not a QMMM_SCREEN_* value')
    end select
  end function

  ! counted: n was given (arrays may be longer than n); n_nuclei likewise for the nuclei. screening_kind, when given,
  ! chooses the screening whatever arrays come with it (one call for plain and screened charges: NONE ignores
  ! screen_a and screen_b; GAUSSIAN takes sigma from screen_a when sigma is absent); without it the arrays given
  ! choose (screen_a and screen_b: EXP; sigma: GAUSSIAN; none: NONE).
  integer function create_charges(f, n, counted, px, py, pz, stride, q, screen_a, screen_b, sigma, nuc_xyz, nuc_z, &
       opt, backend, precision, device, n_threads, n_nuclei, screening_kind, method, tolerance, region, flags) result(s)
    type(qmmm_field), intent(out) :: f
    integer, intent(in) :: n, stride
    logical, intent(in) :: counted
    type(c_ptr), intent(in) :: px, py, pz
    real(c_double), intent(in), target, contiguous :: q(:)
    real(c_double), intent(in), target, contiguous, optional :: screen_a(:), screen_b(:), sigma(:), nuc_xyz(:,:), nuc_z(:)
    type(qmmm_options), intent(in), optional :: opt
    integer, intent(in), optional :: backend, precision, device, n_threads, n_nuclei, screening_kind, method, flags
    real(c_double), intent(in), optional :: tolerance, region(6)
    type(qmmm_options), target :: o
    real(c_double), target :: reg(6)
    type(c_ptr) :: pa, pb, pq, pnx, pnz
    integer :: screening, nn
    integer :: ib  ! the caller's index base, restored after the call
    if (present(opt)) o = opt
    if (present(backend)) o%backend = backend
    if (present(precision)) o%precision = precision
    if (present(device)) o%device = device
    if (present(n_threads)) o%n_threads = n_threads
    if (present(method)) o%method = method
    if (present(flags)) o%flags = flags
    if (present(tolerance)) o%tolerance = tolerance
    if (present(region)) then
      reg = region          ! a copy that lives until the C call returns
      o%region = c_loc(reg)
    end if
    if (present(screening_kind)) then
      s = chosen_screening(n, counted, screening_kind, screen_a, screen_b, sigma, pa, pb)
      if (s /= QMMM_SUCCESS) return
      screening = screening_kind
    else
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
        if (size(sigma) < n .or. (.not. counted .and. size(sigma) /= n)) then
          s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_create_charges: size(sigma) /= size(q)')
          return
        end if
        screening = QMMM_SCREEN_GAUSSIAN
        if (n > 0) pa = c_loc(sigma)
      else if (present(screen_a)) then
        if (min(size(screen_a), size(screen_b)) < n .or. &
             (.not. counted .and. (size(screen_a) /= n .or. size(screen_b) /= n))) then
          s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_create_charges: size(screen_a) or size(screen_b) /= size(q)')
          return
        end if
        screening = QMMM_SCREEN_EXP
        if (n > 0) then
          pa = c_loc(screen_a); pb = c_loc(screen_b)
        end if
      end if
    end if
    pnx = c_null_ptr; pnz = c_null_ptr; nn = 0
    if (present(nuc_xyz) .and. .not. present(nuc_z)) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_create_charges: nuc_xyz without nuc_z')
      return
    end if
    if (present(n_nuclei) .and. .not. present(nuc_z)) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_create_charges: n_nuclei without nuc_xyz and nuc_z')
      return
    end if
    if (present(nuc_z)) then
      if (.not. present(nuc_xyz)) then
        s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_create_charges: nuc_z without nuc_xyz')
        return
      end if
      if (size(nuc_xyz, 1) /= 3 .or. (.not. present(n_nuclei) .and. size(nuc_xyz, 2) /= size(nuc_z))) then
        s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_create_charges: nuc_xyz must be (3, size(nuc_z))')
        return
      end if
      nn = size(nuc_z)
      if (present(n_nuclei)) then
        s = check_count('qmmm_field_create_charges', 'n_nuclei', n_nuclei, [size(nuc_z), size(nuc_xyz, 2)])
        if (s /= QMMM_SUCCESS) return
        nn = n_nuclei
      end if
      if (nn > 0) then
        pnx = c_loc(nuc_xyz); pnz = c_loc(nuc_z)
      end if
    end if
    pq = c_null_ptr
    if (n > 0) pq = c_loc(q)
    ib = fortran_indices_on()
    s = c_qmmm_field_create_charges(f%ptr, int(n, c_int64_t), px, py, pz, int(stride, c_int64_t), pq, &
         int(screening, c_int32_t), pa, pb, int(nn, c_int64_t), pnx, pnz, c_loc(o))
    call fortran_indices_restore(ib)
  end function

  ! usum = sum over i = 1..n of U(coord(:, i)) in hartree: the electrons of one configuration, as a legacy code
  ! keeps them (coord(3,*), an explicit count).
  integer function qmmm_field_eval_sum(f, n, coord, usum) result(s)
    type(qmmm_field), intent(in) :: f
    integer, intent(in) :: n
    real(c_double), intent(in), target :: coord(3, *)
    real(c_double), intent(out), target :: usum
    type(c_ptr) :: p
    integer :: ib  ! the caller's index base, restored after the call
    p = c_null_ptr
    if (n > 0) p = c_loc(coord(1, 1))
    ib = fortran_indices_on()
    s = c_qmmm_field_eval_sum(f%ptr, int(n, c_int64_t), p, c_loc(usum))
    call fortran_indices_restore(ib)
  end function

  ! Starts the sum; coord is copied before the return, usum is written by qmmm_field_wait (keep it in place).
  integer function qmmm_field_eval_sum_async(f, n, coord, usum) result(s)
    type(qmmm_field), intent(in) :: f
    integer, intent(in) :: n
    real(c_double), intent(in), target :: coord(3, *)
    real(c_double), intent(inout), target :: usum
    type(c_ptr) :: p
    integer :: ib  ! the caller's index base, restored after the call
    p = c_null_ptr
    if (n > 0) p = c_loc(coord(1, 1))
    ib = fortran_indices_on()
    s = c_qmmm_field_eval_sum_async(f%ptr, int(n, c_int64_t), p, c_loc(usum))
    call fortran_indices_restore(ib)
  end function

  ! ---- crowds: many walkers a call; points and values in device memory (docs/integrating.md) ----

  ! sums(w) = the sum of U over walker w's counts(w) electrons, which are the next counts(w) columns of coord(3,*)
  ! (walker 1 first): the bits qmmm_field_eval_sum gives on that walker alone; u(i), if present, U at coord(:, i).
  integer function qmmm_field_eval_walkers(f, counts, coord, sums, u) result(s)
    type(qmmm_field), intent(in) :: f
    integer, intent(in) :: counts(:)
    real(c_double), intent(in), target :: coord(3, *)
    real(c_double), intent(out), target, contiguous :: sums(:)
    real(c_double), intent(out), target, contiguous, optional :: u(:)
    s = walkers_call(f, counts, coord, sums, u, .false.)
  end function

  ! Starts qmmm_field_eval_walkers; coord is copied before the return, sums and u are written by qmmm_field_wait
  ! (keep them in place).
  integer function qmmm_field_eval_walkers_async(f, counts, coord, sums, u) result(s)
    type(qmmm_field), intent(in) :: f
    integer, intent(in) :: counts(:)
    real(c_double), intent(in), target :: coord(3, *)
    real(c_double), intent(inout), target, contiguous :: sums(:)
    real(c_double), intent(inout), target, contiguous, optional :: u(:)
    s = walkers_call(f, counts, coord, sums, u, .true.)
  end function

  integer function walkers_call(f, counts, coord, sums, u, async) result(s)
    type(qmmm_field), intent(in) :: f
    integer, intent(in) :: counts(:)
    real(c_double), intent(in), target :: coord(3, *)
    real(c_double), intent(inout), target, contiguous :: sums(:)
    real(c_double), intent(inout), target, contiguous, optional :: u(:)
    logical, intent(in) :: async
    integer(c_int64_t), target :: offs(size(counts) + 1)
    type(c_ptr) :: pc, pu, ps
    integer :: w
    integer :: ib  ! the caller's index base, restored after the call
    if (size(sums) /= size(counts)) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_eval_walkers: sums must have size(counts) entries')
      return
    end if
    if (any(counts < 0)) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_eval_walkers: counts must be >= 0')
      return
    end if
    offs(1) = 0
    do w = 1, size(counts)
      offs(w + 1) = offs(w) + counts(w)
    end do
    pc = c_null_ptr; pu = c_null_ptr; ps = c_null_ptr
    if (offs(size(offs)) > 0) pc = c_loc(coord(1, 1))
    if (size(sums) > 0) ps = c_loc(sums)
    if (present(u)) then
      if (size(u) < offs(size(offs))) then
        s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_eval_walkers: u must have sum(counts) entries')
        return
      end if
      if (size(u) > 0) pu = c_loc(u)
    end if
    ib = fortran_indices_on()
    if (async) then
      s = c_qmmm_field_eval_walkers_async(f%ptr, int(size(counts), c_int64_t), c_loc(offs), pc, ps, pu)
    else
      s = c_qmmm_field_eval_walkers(f%ptr, int(size(counts), c_int64_t), c_loc(offs), pc, ps, pu)
    end if
    call fortran_indices_restore(ib)
  end function

  ! Device-resident points d_xyz (3*n doubles) and values d_u (n doubles), device addresses (OpenACC: c_loc inside
  ! host_data use_device; OpenMP: use_device_ptr / use_device_addr), enqueued on stream (a cudaStream_t, or the
  ! field's own when absent); CUDA DIRECT fields only.
  integer function qmmm_field_eval_device(f, n, d_xyz, d_u, stream) result(s)
    type(qmmm_field), intent(in) :: f
    integer, intent(in) :: n
    type(c_ptr), intent(in) :: d_xyz, d_u
    type(c_ptr), intent(in), optional :: stream
    type(c_ptr) :: st
    integer :: ib  ! the caller's index base, restored after the call
    st = c_null_ptr
    if (present(stream)) st = stream
    ib = fortran_indices_on()
    s = c_qmmm_field_eval_device(f%ptr, int(n, c_int64_t), d_xyz, d_u, st)
    call fortran_indices_restore(ib)
  end function

  ! The walkers of counts(:) (as qmmm_field_eval_walkers) with points d_xyz, sums d_sums (size(counts) doubles) and,
  ! if present, values d_u in device memory.
  integer function qmmm_field_eval_walkers_device(f, counts, d_xyz, d_sums, d_u, stream) result(s)
    type(qmmm_field), intent(in) :: f
    integer, intent(in) :: counts(:)
    type(c_ptr), intent(in) :: d_xyz, d_sums
    type(c_ptr), intent(in), optional :: d_u, stream
    integer(c_int64_t), target :: offs(size(counts) + 1)
    type(c_ptr) :: st, pu
    integer :: w
    integer :: ib  ! the caller's index base, restored after the call
    if (any(counts < 0)) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_eval_walkers_device: counts must be >= 0')
      return
    end if
    offs(1) = 0
    do w = 1, size(counts)
      offs(w + 1) = offs(w) + counts(w)
    end do
    st = c_null_ptr; pu = c_null_ptr
    if (present(stream)) st = stream
    if (present(d_u)) pu = d_u
    ib = fortran_indices_on()
    s = c_qmmm_field_eval_walkers_device(f%ptr, int(size(counts), c_int64_t), c_loc(offs), d_xyz, d_sums, pu, st)
    call fortran_indices_restore(ib)
  end function

  ! ---- forces: the gradient at points, the field at the sites (forces.md in docs/user-guide) ----

  ! u(i) = U_ES(xyz(:,i)) in hartree and grad(:,i) = dU_ES/dr there in hartree/bohr (U is an electron's energy: the
  ! force on an electron is -grad(:,i), on a QM nucleus of charge Z it is +Z grad(:,i)).
  integer function qmmm_field_eval_grad(f, xyz, u, grad) result(s)
    type(qmmm_field), intent(in) :: f
    real(c_double), intent(in), target, contiguous :: xyz(:,:)
    real(c_double), intent(out), target, contiguous :: u(:), grad(:,:)
    integer :: ib  ! the caller's index base, restored after the call
    if (size(xyz, 1) /= 3 .or. size(xyz, 2) /= size(u) .or. size(grad, 1) /= 3 .or. size(grad, 2) /= size(u)) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_eval_grad: xyz and grad must be (3, size(u))')
      return
    end if
    if (size(u) == 0) then
      s = c_qmmm_field_eval_grad(f%ptr, 0_c_int64_t, c_null_ptr, c_null_ptr, c_null_ptr)
      return
    end if
    ib = fortran_indices_on()
    s = c_qmmm_field_eval_grad(f%ptr, int(size(u), c_int64_t), c_loc(xyz), c_loc(u), c_loc(grad))
    call fortran_indices_restore(ib)
  end function

  ! Starts a gradient evaluation; u and grad must stay allocated and untouched until qmmm_field_wait returns.
  integer function qmmm_field_eval_grad_async(f, xyz, u, grad) result(s)
    type(qmmm_field), intent(in) :: f
    real(c_double), intent(in), target, contiguous :: xyz(:,:)
    real(c_double), intent(inout), target, contiguous :: u(:), grad(:,:)
    integer :: ib  ! the caller's index base, restored after the call
    if (size(xyz, 1) /= 3 .or. size(xyz, 2) /= size(u) .or. size(grad, 1) /= 3 .or. size(grad, 2) /= size(u)) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_eval_grad_async: xyz and grad must be (3, size(u))')
      return
    end if
    if (size(u) == 0) then
      s = c_qmmm_field_eval_grad_async(f%ptr, 0_c_int64_t, c_null_ptr, c_null_ptr, c_null_ptr)
      return
    end if
    ib = fortran_indices_on()
    s = c_qmmm_field_eval_grad_async(f%ptr, int(size(u), c_int64_t), c_loc(xyz), c_loc(u), c_loc(grad))
    call fortran_indices_restore(ib)
  end function

  ! usum = sum over i = 1..n of U(coord(:, i)) and grad(:, i) = dU/dr there, as qmmm_field_eval_sum keeps a
  ! configuration (coord(3,*), an explicit count).
  integer function qmmm_field_eval_grad_sum(f, n, coord, usum, grad) result(s)
    type(qmmm_field), intent(in) :: f
    integer, intent(in) :: n
    real(c_double), intent(in), target :: coord(3, *)
    real(c_double), intent(out), target :: usum
    real(c_double), intent(out), target :: grad(3, *)
    type(c_ptr) :: p, g
    integer :: ib  ! the caller's index base, restored after the call
    p = c_null_ptr; g = c_null_ptr
    if (n > 0) then
      p = c_loc(coord(1, 1)); g = c_loc(grad(1, 1))
    end if
    ib = fortran_indices_on()
    s = c_qmmm_field_eval_grad_sum(f%ptr, int(n, c_int64_t), p, c_loc(usum), g)
    call fortran_indices_restore(ib)
  end function

  ! The sites of f: its cells or charges as given, then its nuclei.
  integer function site_count(f, where, m) result(s)
    type(qmmm_field), intent(in) :: f
    character(*), intent(in) :: where
    integer(c_int64_t), intent(out) :: m
    integer(c_int64_t), target :: nc, nn
    m = 0
    s = c_qmmm_field_sizes(f%ptr, c_loc(nc), c_loc(nn))
    if (s /= QMMM_SUCCESS) return
    m = nc + nn
    if (m == 0) s = fortran_error(QMMM_ERR_INVALID_ARG, where // ': the field has no sites')
  end function

  ! phi(k) and efield(:,k): the potential (hartree/e) and the field (hartree/(e bohr)) that the points xyz(:,i) of
  ! physical charges w(i) (-1 for electrons, +Z for nuclei) put on site k (cells or charges as given, then the
  ! nuclei). The force on a site of physical charge Q is Q efield(:,k).
  integer function qmmm_field_site_field(f, xyz, w, phi, efield) result(s)
    type(qmmm_field), intent(in) :: f
    real(c_double), intent(in), target, contiguous :: xyz(:,:), w(:)
    real(c_double), intent(out), target, contiguous :: phi(:), efield(:,:)
    integer(c_int64_t) :: m
    type(c_ptr) :: px, pw
    integer :: ib  ! the caller's index base, restored after the call
    if (size(xyz, 1) /= 3 .or. size(xyz, 2) /= size(w)) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_site_field: xyz must be (3, size(w))')
      return
    end if
    s = site_count(f, 'qmmm_field_site_field', m)
    if (s /= QMMM_SUCCESS) return
    if (size(phi, kind=c_int64_t) /= m .or. size(efield, 1) /= 3 .or. size(efield, 2, kind=c_int64_t) /= m) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_site_field: phi must be (n_sites) and efield (3, n_sites), '&
           // 'n_sites = n_cells + n_nuclei of qmmm_field_sizes')
      return
    end if
    px = c_null_ptr; pw = c_null_ptr
    if (size(w) > 0) then
      px = c_loc(xyz); pw = c_loc(w)
    end if
    ib = fortran_indices_on()
    s = c_qmmm_field_site_field(f%ptr, int(size(w), c_int64_t), px, pw, c_loc(phi), c_loc(efield))
    call fortran_indices_restore(ib)
  end function

  ! Zeroes the site accumulator of f (its sums, summed weight and count of calls).
  integer function qmmm_field_site_accum_reset(f) result(s)
    type(qmmm_field), intent(in) :: f
    s = c_qmmm_field_site_accum_reset(f%ptr)
  end function

  ! Adds weight (default 1) times the sites' phi and E of these points to the accumulator (kept where f computes).
  integer function qmmm_field_site_accum_add(f, xyz, w, weight) result(s)
    type(qmmm_field), intent(in) :: f
    real(c_double), intent(in), target, contiguous :: xyz(:,:), w(:)
    real(c_double), intent(in), optional :: weight
    real(c_double) :: wt
    type(c_ptr) :: px, pw
    integer :: ib  ! the caller's index base, restored after the call
    if (size(xyz, 1) /= 3 .or. size(xyz, 2) /= size(w)) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_site_accum_add: xyz must be (3, size(w))')
      return
    end if
    wt = 1d0
    if (present(weight)) wt = weight
    px = c_null_ptr; pw = c_null_ptr
    if (size(w) > 0) then
      px = c_loc(xyz); pw = c_loc(w)
    end if
    ib = fortran_indices_on()
    s = c_qmmm_field_site_accum_add(f%ptr, int(size(w), c_int64_t), px, pw, wt)
    call fortran_indices_restore(ib)
  end function

  ! The accumulator's sums: phi(n_sites), efield(3, n_sites); weight_sum and n_calls if asked. Averages: / weight_sum.
  integer function qmmm_field_site_accum_read(f, phi, efield, weight_sum, n_calls) result(s)
    type(qmmm_field), intent(in) :: f
    real(c_double), intent(out), target, contiguous :: phi(:), efield(:,:)
    real(c_double), intent(out), optional :: weight_sum
    integer(c_int64_t), intent(out), optional :: n_calls
    real(c_double), target :: ws
    integer(c_int64_t), target :: nc
    integer(c_int64_t) :: m
    s = site_count(f, 'qmmm_field_site_accum_read', m)
    if (s /= QMMM_SUCCESS) return
    if (size(phi, kind=c_int64_t) /= m .or. size(efield, 1) /= 3 .or. size(efield, 2, kind=c_int64_t) /= m) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_site_accum_read: phi must be (n_sites) and efield '&
           // '(3, n_sites), n_sites = n_cells + n_nuclei of qmmm_field_sizes')
      return
    end if
    s = c_qmmm_field_site_accum_read(f%ptr, c_loc(phi), c_loc(efield), c_loc(ws), c_loc(nc))
    if (present(weight_sum)) weight_sum = ws
    if (present(n_calls)) n_calls = nc
  end function

  ! egrad(:,k): the gradient of the field that the points xyz(:,i) of physical charges w(i) put on site k, the
  ! symmetric dE_a/dR_b as xx, xy, xz, yy, yz, zz (hartree/(e bohr^2)). The force on a dipole mu at site k is
  ! (mu . grad) E: F_a = sum_b mu_b dE_a/dR_b. Fields with screened charges: QMMM_ERR_UNSUPPORTED.
  integer function qmmm_field_site_field_grad(f, xyz, w, egrad) result(s)
    type(qmmm_field), intent(in) :: f
    real(c_double), intent(in), target, contiguous :: xyz(:,:), w(:)
    real(c_double), intent(out), target, contiguous :: egrad(:,:)
    integer(c_int64_t) :: m
    type(c_ptr) :: px, pw
    integer :: ib  ! the caller's index base, restored after the call
    if (size(xyz, 1) /= 3 .or. size(xyz, 2) /= size(w)) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_site_field_grad: xyz must be (3, size(w))')
      return
    end if
    s = site_count(f, 'qmmm_field_site_field_grad', m)
    if (s /= QMMM_SUCCESS) return
    if (size(egrad, 1) /= 6 .or. size(egrad, 2, kind=c_int64_t) /= m) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_site_field_grad: egrad must be (6, n_sites), '&
           // 'n_sites = n_cells + n_nuclei of qmmm_field_sizes')
      return
    end if
    px = c_null_ptr; pw = c_null_ptr
    if (size(w) > 0) then
      px = c_loc(xyz); pw = c_loc(w)
    end if
    ib = fortran_indices_on()
    s = c_qmmm_field_site_field_grad(f%ptr, int(size(w), c_int64_t), px, pw, c_loc(egrad))
    call fortran_indices_restore(ib)
  end function

  ! The accumulator keeps the field gradient's sums too (on = .true.) or not; the accumulator is zeroed.
  integer function qmmm_field_site_accum_set_grad(f, on) result(s)
    type(qmmm_field), intent(in) :: f
    logical, intent(in) :: on
    s = c_qmmm_field_site_accum_set_grad(f%ptr, merge(1_c_int, 0_c_int, on))
  end function

  ! The accumulator's field-gradient sums, egrad(6, n_sites) (xx xy xz yy yz zz); averages: / weight_sum.
  integer function qmmm_field_site_accum_read_grad(f, egrad) result(s)
    type(qmmm_field), intent(in) :: f
    real(c_double), intent(out), target, contiguous :: egrad(:,:)
    integer(c_int64_t) :: m
    s = site_count(f, 'qmmm_field_site_accum_read_grad', m)
    if (s /= QMMM_SUCCESS) return
    if (size(egrad, 1) /= 6 .or. size(egrad, 2, kind=c_int64_t) /= m) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_site_accum_read_grad: egrad must be (6, n_sites), '&
           // 'n_sites = n_cells + n_nuclei of qmmm_field_sizes')
      return
    end if
    s = c_qmmm_field_site_accum_read_grad(f%ptr, c_loc(egrad))
  end function

  ! Attaches point dipoles to f (or replaces them): sites site_xyz(3,n) (bohr), dipoles mu(3,n) (e bohr, physical;
  ! absent: zero until qmmm_field_update_dipoles). The values and gradients of f then include the dipoles' term
  ! U_dip(r) = -sum_k mu_k . (r - R_k) / |r - R_k|^3. A site_xyz of size (3, 0) removes them.
  integer function qmmm_field_set_dipoles(f, site_xyz, mu) result(s)
    type(qmmm_field), intent(in) :: f
    real(c_double), intent(in), target, contiguous :: site_xyz(:,:)
    real(c_double), intent(in), target, contiguous, optional :: mu(:,:)
    type(c_ptr) :: px, pm
    integer :: ib  ! the caller's index base, restored after the call
    if (size(site_xyz, 1) /= 3) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_set_dipoles: site_xyz must be (3, n)')
      return
    end if
    px = c_null_ptr; pm = c_null_ptr
    if (present(mu)) then
      if (size(mu, 1) /= 3 .or. size(mu, 2) /= size(site_xyz, 2)) then
        s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_set_dipoles: mu must be (3, size(site_xyz, 2))')
        return
      end if
      if (size(mu) > 0) pm = c_loc(mu)
    end if
    if (size(site_xyz) > 0) px = c_loc(site_xyz)
    ib = fortran_indices_on()
    s = c_qmmm_field_set_dipoles(f%ptr, int(size(site_xyz, 2), c_int64_t), px, pm)
    call fortran_indices_restore(ib)
  end function

  ! Replaces the dipoles, mu(3, n) with n the sites of qmmm_field_set_dipoles: the cheap update of a
  ! self-consistent loop (nothing rebuilt).
  integer function qmmm_field_update_dipoles(f, mu) result(s)
    type(qmmm_field), intent(in) :: f
    real(c_double), intent(in), target, contiguous :: mu(:,:)
    type(c_ptr) :: pm
    integer :: ib  ! the caller's index base, restored after the call
    if (size(mu, 1) /= 3) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_field_update_dipoles: mu must be (3, n_sites)')
      return
    end if
    pm = c_null_ptr
    if (size(mu) > 0) pm = c_loc(mu)
    ib = fortran_indices_on()
    s = c_qmmm_field_update_dipoles(f%ptr, int(size(mu, 2), c_int64_t), pm)
    call fortran_indices_restore(ib)
  end function

  ! The number of dipole sites attached to f (0 when none).
  integer function qmmm_field_dipole_count(f, n) result(s)
    type(qmmm_field), intent(in) :: f
    integer(c_int64_t), intent(out), target :: n
    s = c_qmmm_field_dipole_count(f%ptr, c_loc(n))
  end function

end module qmmm_accel_field
