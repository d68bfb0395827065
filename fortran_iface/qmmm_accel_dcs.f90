! qmmm_accel_dcs.f90 -- Fortran interface to the dcs family of qmmm-accel (re-exported by qmmm_accel).
! DCS potential maps: map(i,j,k) = sum_a q(a) / |r_ijk - xyz(:,a)| in hartree/e; positions in bohr.
module qmmm_accel_dcs
  use, intrinsic :: iso_c_binding
  use qmmm_accel_core
  implicit none
  private

  integer, parameter, public :: QMMM_DCS_MAX_DEVICES = 16
  integer, parameter, public :: QMMM_DCS_KERNEL_FAST = 0
  integer, parameter, public :: QMMM_DCS_ON_ATOM_ERROR = 0, QMMM_DCS_ON_ATOM_OTHERS = 1

  type, bind(c), public :: qmmm_dcs_lattice
    real(c_double) :: origin(3) = 0.0_c_double
    real(c_double) :: spacing(3) = 1.0_c_double
    integer(c_int64_t) :: count(3) = 1
  end type qmmm_dcs_lattice

  type, bind(c), public :: qmmm_dcs_options
    integer(c_int32_t) :: backend = QMMM_BACKEND_AUTO
    integer(c_int32_t) :: precision = QMMM_PRECISION_SINGLE
    integer(c_int32_t) :: n_threads = 0
    integer(c_int32_t) :: n_devices = 0
    integer(c_int32_t) :: devices(16) = 0
    integer(c_int32_t) :: kernel = 0
    integer(c_int32_t) :: on_atom = 0  ! QMMM_DCS_ON_ATOM_ERROR (0) or _OTHERS (1)
    real(c_double) :: max_device_bytes = 0.0_c_double
    type(c_funptr) :: progress = c_null_funptr
    type(c_ptr) :: progress_user = c_null_ptr
    integer(c_int32_t) :: reserved(8) = 0
  end type qmmm_dcs_options

  public :: qmmm_dcs_map, qmmm_dcs_place_ions, qmmm_dcs_release

  interface
    function c_qmmm_dcs_map(n, xyz, q, lat, map, opt, stats) bind(c, name='qmmm_dcs_map') result(s)
      import :: c_ptr, c_int, c_int64_t
      integer(c_int64_t), value :: n
      type(c_ptr), value :: xyz, q, lat, map, opt, stats
      integer(c_int) :: s
    end function
    function c_qmmm_dcs_place_ions(n, xyz, q, lat, map, n_ions, qi, da, di, ion_xyz, ion_e) &
         bind(c, name='qmmm_dcs_place_ions') result(s)
      import :: c_ptr, c_int, c_int64_t, c_double
      integer(c_int64_t), value :: n, n_ions
      type(c_ptr), value :: xyz, q, lat, map, ion_xyz, ion_e
      real(c_double), value :: qi, da, di
      integer(c_int) :: s
    end function
    function c_qmmm_dcs_release() bind(c, name='qmmm_dcs_release') result(s)
      import :: c_int
      integer(c_int) :: s
    end function
  end interface

contains

  ! map(nx,ny,nz) from atoms xyz(3,n) (bohr) and q(n) (e). Options: opt, or backend/precision/devices alone.
  integer function qmmm_dcs_map(xyz, q, lat, map, opt, backend, precision, devices) result(s)
    real(c_double), intent(in), target, contiguous :: xyz(:,:), q(:)
    type(qmmm_dcs_lattice), intent(in), target :: lat
    real(c_double), intent(out), target, contiguous :: map(:,:,:)
    type(qmmm_dcs_options), intent(in), optional :: opt
    integer, intent(in), optional :: backend, precision, devices(:)
    type(qmmm_dcs_options), target :: o
    type(c_ptr) :: px, pq
    if (present(opt)) o = opt
    if (present(backend)) o%backend = backend
    if (present(precision)) o%precision = precision
    if (present(devices)) then
      if (size(devices) > QMMM_DCS_MAX_DEVICES) then
        s = QMMM_ERR_INVALID_ARG
        return
      end if
      o%n_devices = size(devices)
      o%devices(1:size(devices)) = devices
    end if
    if (size(xyz, 1) /= 3 .or. size(xyz, 2) /= size(q) .or. size(map, 1) /= lat%count(1) .or. &
         size(map, 2) /= lat%count(2) .or. size(map, 3) /= lat%count(3)) then
      s = QMMM_ERR_INVALID_ARG   ! shapes disagree with the lattice; C is not called
      return
    end if
    px = c_null_ptr; pq = c_null_ptr
    if (size(q) > 0) then
      px = c_loc(xyz); pq = c_loc(q)
    end if
    s = c_qmmm_dcs_map(int(size(q), c_int64_t), px, pq, c_loc(lat), c_loc(map), c_loc(o), c_null_ptr)
  end function

  ! Places size(ion_xyz,2) ions of charge ion_charge; map is updated with their potential.
  integer function qmmm_dcs_place_ions(xyz, q, lat, map, ion_charge, min_dist_atoms, min_dist_ions, ion_xyz) result(s)
    real(c_double), intent(in), target, contiguous :: xyz(:,:), q(:)
    type(qmmm_dcs_lattice), intent(in), target :: lat
    real(c_double), intent(inout), target, contiguous :: map(:,:,:)
    real(c_double), intent(in) :: ion_charge, min_dist_atoms, min_dist_ions
    real(c_double), intent(out), target, contiguous :: ion_xyz(:,:)
    type(c_ptr) :: px, pq
    if (size(xyz, 1) /= 3 .or. size(xyz, 2) /= size(q) .or. size(ion_xyz, 1) /= 3 .or. &
         size(map) /= lat%count(1) * lat%count(2) * lat%count(3)) then
      s = QMMM_ERR_INVALID_ARG
      return
    end if
    px = c_null_ptr; pq = c_null_ptr
    if (size(q) > 0) then
      px = c_loc(xyz); pq = c_loc(q)
    end if
    s = c_qmmm_dcs_place_ions(int(size(q), c_int64_t), px, pq, c_loc(lat), c_loc(map), &
         int(size(ion_xyz, 2), c_int64_t), ion_charge, min_dist_atoms, min_dist_ions, c_loc(ion_xyz), c_null_ptr)
  end function

  integer function qmmm_dcs_release() result(s)
    s = c_qmmm_dcs_release()
  end function

end module qmmm_accel_dcs
