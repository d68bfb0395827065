! qmmm_accel_rdf.f90 -- Fortran interface to the rdf family of qmmm-accel (re-exported by qmmm_accel).
! Radial distribution functions g(r) and coordination numbers n(r) between two selections over frames.
! Lengths in the caller's unit (the same for coordinates, box and r). xyz(3,n); box(3,3) holds the cell
! vectors a, b, c as columns. See qmmm_accel_rdf.h for the normalisation.
module qmmm_accel_rdf
  use, intrinsic :: iso_c_binding
  use qmmm_accel_core
  implicit none
  private

  integer, parameter, public :: QMMM_RDF_MAX_DEVICES = 16
  integer, parameter, public :: QMMM_RDF_METHOD_AUTO = 0, QMMM_RDF_METHOD_BRUTE = 1, QMMM_RDF_METHOD_CELLS = 2
  integer, parameter, public :: QMMM_RDF_KERNEL_FAST = 0

  type, bind(c), public :: qmmm_rdf_options
    integer(c_int32_t) :: backend = QMMM_BACKEND_AUTO
    integer(c_int32_t) :: n_threads = 0
    integer(c_int32_t) :: method = QMMM_RDF_METHOD_AUTO
    integer(c_int32_t) :: kernel = QMMM_RDF_KERNEL_FAST
    integer(c_int32_t) :: n_devices = 0
    integer(c_int32_t) :: devices(16) = 0
    integer(c_int32_t) :: reserved(8) = 0
  end type qmmm_rdf_options

  type, public :: qmmm_rdf
    type(c_ptr) :: ptr = c_null_ptr
  end type qmmm_rdf

  public :: qmmm_rdf_create, qmmm_rdf_set_selections, qmmm_rdf_set_selection_self, qmmm_rdf_add_frame, &
       qmmm_rdf_add_frames, qmmm_rdf_results, qmmm_rdf_box_limit, qmmm_rdf_reset, qmmm_rdf_destroy, qmmm_rdf_release

  interface
    function c_create(h, rmin, rmax, nb, opt) bind(c, name='qmmm_rdf_create') result(s)
      import :: c_ptr, c_int, c_double, c_int32_t
      type(c_ptr) :: h
      real(c_double), value :: rmin, rmax
      integer(c_int32_t), value :: nb
      type(c_ptr), value :: opt
      integer(c_int) :: s
    end function
    function c_set_sel(h, n1, id1, mol1, n2, id2, mol2) bind(c, name='qmmm_rdf_set_selections') result(s)
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: h, id1, mol1, id2, mol2
      integer(c_int64_t), value :: n1, n2
      integer(c_int) :: s
    end function
    function c_set_self(h, n, mol) bind(c, name='qmmm_rdf_set_selection_self') result(s)
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: h, mol
      integer(c_int64_t), value :: n
      integer(c_int) :: s
    end function
    function c_add(h, xyz1, xyz2, box) bind(c, name='qmmm_rdf_add_frame') result(s)
      import :: c_ptr, c_int
      type(c_ptr), value :: h, xyz1, xyz2, box
      integer(c_int) :: s
    end function
    function c_add_many(h, nf, xyz1, xyz2, box) bind(c, name='qmmm_rdf_add_frames') result(s)
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: h, xyz1, xyz2, box
      integer(c_int64_t), value :: nf
      integer(c_int) :: s
    end function
    function c_results(h, r, g, n, hist, nf, vol) bind(c, name='qmmm_rdf_results') result(s)
      import :: c_ptr, c_int
      type(c_ptr), value :: h, r, g, n, hist, nf, vol
      integer(c_int) :: s
    end function
    function c_limit(box, r) bind(c, name='qmmm_rdf_box_limit') result(s)
      import :: c_ptr, c_int, c_double
      type(c_ptr), value :: box
      real(c_double) :: r
      integer(c_int) :: s
    end function
    function c_handle(h) bind(c, name='qmmm_rdf_reset') result(s)
      import :: c_ptr, c_int
      type(c_ptr), value :: h
      integer(c_int) :: s
    end function
    function c_destroy(h) bind(c, name='qmmm_rdf_destroy') result(s)
      import :: c_ptr, c_int
      type(c_ptr), value :: h
      integer(c_int) :: s
    end function
    function c_release() bind(c, name='qmmm_rdf_release') result(s)
      import :: c_int
      integer(c_int) :: s
    end function
  end interface

contains

  ! Histogram of n_bins bins over [r_min, r_max). Options: opt, or backend/method/devices alone.
  integer function qmmm_rdf_create(rdf, r_min, r_max, n_bins, opt, backend, method, devices) result(s)
    type(qmmm_rdf), intent(out) :: rdf
    real(c_double), intent(in) :: r_min, r_max
    integer, intent(in) :: n_bins
    type(qmmm_rdf_options), intent(in), optional :: opt
    integer, intent(in), optional :: backend, method, devices(:)
    type(qmmm_rdf_options), target :: o
    if (present(opt)) o = opt
    if (present(backend)) o%backend = backend
    if (present(method)) o%method = method
    if (present(devices)) then
      if (size(devices) > QMMM_RDF_MAX_DEVICES) then
        s = QMMM_ERR_INVALID_ARG
        return
      end if
      o%n_devices = size(devices)
      o%devices(1:size(devices)) = devices
    end if
    s = c_create(rdf%ptr, r_min, r_max, int(n_bins, c_int32_t), c_loc(o))
  end function

  ! Two selections by atom ids (equal id lists = identical selections); molecule ids optional (exclusions).
  integer function qmmm_rdf_set_selections(rdf, id1, id2, mol1, mol2) result(s)
    type(qmmm_rdf), intent(in) :: rdf
    integer(c_int64_t), intent(in), target, contiguous :: id1(:), id2(:)
    integer(c_int64_t), intent(in), target, contiguous, optional :: mol1(:), mol2(:)
    type(c_ptr) :: m1, m2
    m1 = c_null_ptr; m2 = c_null_ptr
    if (present(mol1) .neqv. present(mol2)) then
      s = QMMM_ERR_NULL_ARG
      return
    end if
    if (present(mol1)) then
      if (size(mol1) /= size(id1) .or. size(mol2) /= size(id2)) then
        s = QMMM_ERR_INVALID_ARG
        return
      end if
      m1 = c_loc(mol1); m2 = c_loc(mol2)
    end if
    s = c_set_sel(rdf%ptr, int(size(id1), c_int64_t), c_loc(id1), m1, int(size(id2), c_int64_t), c_loc(id2), m2)
  end function

  ! One selection of n atoms paired with itself; mol(n) optional (exclusions).
  integer function qmmm_rdf_set_selection_self(rdf, n, mol) result(s)
    type(qmmm_rdf), intent(in) :: rdf
    integer, intent(in) :: n
    integer(c_int64_t), intent(in), target, contiguous, optional :: mol(:)
    type(c_ptr) :: m
    m = c_null_ptr
    if (present(mol)) then
      if (size(mol) /= n) then
        s = QMMM_ERR_INVALID_ARG
        return
      end if
      m = c_loc(mol)
    end if
    s = c_set_self(rdf%ptr, int(n, c_int64_t), m)
  end function

  ! One frame: xyz1(3,n1), box(3,3) (cell vectors as columns), xyz2(3,n2) unless the selections are identical.
  integer function qmmm_rdf_add_frame(rdf, xyz1, box, xyz2) result(s)
    type(qmmm_rdf), intent(in) :: rdf
    real(c_double), intent(in), target, contiguous :: xyz1(:,:), box(:,:)
    real(c_double), intent(in), target, contiguous, optional :: xyz2(:,:)
    type(c_ptr) :: p2
    if (size(xyz1, 1) /= 3 .or. size(box, 1) /= 3 .or. size(box, 2) /= 3) then
      s = QMMM_ERR_INVALID_ARG
      return
    end if
    p2 = c_null_ptr
    if (present(xyz2)) p2 = c_loc(xyz2)
    s = c_add(rdf%ptr, c_loc(xyz1), p2, c_loc(box))
  end function

  ! Several frames at once (whole frames per GPU; the same bits as frame by frame): xyz1(3,n1,n_frames),
  ! box(3,3,n_frames), xyz2(3,n2,n_frames) unless the selections are identical.
  integer function qmmm_rdf_add_frames(rdf, xyz1, box, xyz2) result(s)
    type(qmmm_rdf), intent(in) :: rdf
    real(c_double), intent(in), target, contiguous :: xyz1(:,:,:), box(:,:,:)
    real(c_double), intent(in), target, contiguous, optional :: xyz2(:,:,:)
    type(c_ptr) :: p2
    if (size(xyz1, 1) /= 3 .or. size(box, 1) /= 3 .or. size(box, 2) /= 3 .or. size(box, 3) /= size(xyz1, 3)) then
      s = QMMM_ERR_INVALID_ARG
      return
    end if
    p2 = c_null_ptr
    if (present(xyz2)) then
      if (size(xyz2, 1) /= 3 .or. size(xyz2, 3) /= size(xyz1, 3)) then
        s = QMMM_ERR_INVALID_ARG
        return
      end if
      p2 = c_loc(xyz2)
    end if
    s = c_add_many(rdf%ptr, int(size(xyz1, 3), c_int64_t), c_loc(xyz1), p2, c_loc(box))
  end function

  ! Results (each optional; arrays of n_bins): bin centres, g(r), n(r) at the bins' upper edges, counts.
  integer function qmmm_rdf_results(rdf, r, g, n_cum, hist, n_frames, avg_volume) result(s)
    type(qmmm_rdf), intent(in) :: rdf
    real(c_double), intent(out), target, contiguous, optional :: r(:), g(:), n_cum(:)
    integer(c_int64_t), intent(out), target, contiguous, optional :: hist(:)
    integer(c_int64_t), intent(out), target, optional :: n_frames
    real(c_double), intent(out), target, optional :: avg_volume
    type(c_ptr) :: pr, pg, pn, ph, pf, pv
    pr = c_null_ptr; pg = c_null_ptr; pn = c_null_ptr; ph = c_null_ptr; pf = c_null_ptr; pv = c_null_ptr
    if (present(r)) pr = c_loc(r)
    if (present(g)) pg = c_loc(g)
    if (present(n_cum)) pn = c_loc(n_cum)
    if (present(hist)) ph = c_loc(hist)
    if (present(n_frames)) pf = c_loc(n_frames)
    if (present(avg_volume)) pv = c_loc(avg_volume)
    s = c_results(rdf%ptr, pr, pg, pn, ph, pf, pv)
  end function

  integer function qmmm_rdf_box_limit(box, r_limit) result(s)
    real(c_double), intent(in), target, contiguous :: box(:,:)
    real(c_double), intent(out) :: r_limit
    if (size(box, 1) /= 3 .or. size(box, 2) /= 3) then
      s = QMMM_ERR_INVALID_ARG
      return
    end if
    s = c_limit(c_loc(box), r_limit)
  end function

  integer function qmmm_rdf_reset(rdf) result(s)
    type(qmmm_rdf), intent(in) :: rdf
    s = c_handle(rdf%ptr)
  end function

  integer function qmmm_rdf_destroy(rdf) result(s)
    type(qmmm_rdf), intent(inout) :: rdf
    s = c_destroy(rdf%ptr)
    rdf%ptr = c_null_ptr
  end function

  integer function qmmm_rdf_release() result(s)
    s = c_release()
  end function

end module qmmm_accel_rdf
