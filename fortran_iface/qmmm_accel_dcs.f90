! qmmm_accel_dcs.f90 -- Fortran interface to the dcs family of qmmm-accel (re-exported by qmmm_accel).
! DCS potential maps: map(i,j,k) = sum_a q(a) / |r_ijk - xyz(:,a)| in hartree/e; positions in bohr.
module qmmm_accel_dcs
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_loc, c_double, c_int64_t
  use qmmm_accel_core
  use qmmm_accel_dcs_c
  implicit none
  ! Public by default: the generated constants, types (qmmm_dcs_lattice, qmmm_dcs_options, qmmm_dcs_stats) and
  ! interfaces pass through.
  public
  private :: c_ptr, c_null_ptr, c_loc, c_double, c_int64_t

contains

  ! map(nx,ny,nz) from atoms xyz(3,n) (bohr) and q(n) (e). Options: opt, or backend/precision/devices alone;
  ! stats: what the computation did (backend, workers, pieces, seconds).
  integer function qmmm_dcs_map(xyz, q, lat, map, opt, backend, precision, devices, stats) result(s)
    real(c_double), intent(in), target, contiguous :: xyz(:,:), q(:)
    type(qmmm_dcs_lattice), intent(in), target :: lat
    real(c_double), intent(out), target, contiguous :: map(:,:,:)
    type(qmmm_dcs_options), intent(in), optional :: opt
    integer, intent(in), optional :: backend, precision, devices(:)
    type(qmmm_dcs_stats), intent(out), optional, target :: stats
    type(qmmm_dcs_options), target :: o
    type(c_ptr) :: px, pq, pst
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
    pst = c_null_ptr
    if (present(stats)) pst = c_loc(stats)
    s = c_qmmm_dcs_map(int(size(q), c_int64_t), px, pq, c_loc(lat), c_loc(map), c_loc(o), pst)
  end function

  ! Places size(ion_xyz,2) ions of charge ion_charge; map is updated with their potential. ion_energy(n_ions):
  ! each ion's energy where it was placed (qmmm_accel_dcs.h).
  integer function qmmm_dcs_place_ions(xyz, q, lat, map, ion_charge, min_dist_atoms, min_dist_ions, ion_xyz, &
       ion_energy) result(s)
    real(c_double), intent(in), target, contiguous :: xyz(:,:), q(:)
    type(qmmm_dcs_lattice), intent(in), target :: lat
    real(c_double), intent(inout), target, contiguous :: map(:,:,:)
    real(c_double), intent(in) :: ion_charge, min_dist_atoms, min_dist_ions
    real(c_double), intent(out), target, contiguous :: ion_xyz(:,:)
    real(c_double), intent(out), target, contiguous, optional :: ion_energy(:)
    type(c_ptr) :: px, pq, pe
    if (size(xyz, 1) /= 3 .or. size(xyz, 2) /= size(q) .or. size(ion_xyz, 1) /= 3 .or. &
         size(map) /= lat%count(1) * lat%count(2) * lat%count(3)) then
      s = QMMM_ERR_INVALID_ARG
      return
    end if
    pe = c_null_ptr
    if (present(ion_energy)) then
      if (size(ion_energy) /= size(ion_xyz, 2)) then
        s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_dcs_place_ions: size(ion_energy) /= size(ion_xyz, 2)')
        return
      end if
      pe = c_loc(ion_energy)
    end if
    px = c_null_ptr; pq = c_null_ptr
    if (size(q) > 0) then
      px = c_loc(xyz); pq = c_loc(q)
    end if
    s = c_qmmm_dcs_place_ions(int(size(q), c_int64_t), px, pq, c_loc(lat), c_loc(map), &
         int(size(ion_xyz, 2), c_int64_t), ion_charge, min_dist_atoms, min_dist_ions, c_loc(ion_xyz), pe)
  end function

  integer function qmmm_dcs_release() result(s)
    s = c_qmmm_dcs_release()
  end function

end module qmmm_accel_dcs
