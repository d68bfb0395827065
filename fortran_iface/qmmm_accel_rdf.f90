! qmmm_accel_rdf.f90 -- Fortran interface to the rdf family of qmmm-accel (re-exported by qmmm_accel).
! Radial distribution functions g(r) and coordination numbers n(r) between two selections over frames.
! Lengths in the caller's unit (the same for coordinates, box and r). xyz(3,n); box(3,3) holds the cell
! vectors a, b, c as columns. See qmmm_accel_rdf.h for the normalisation.
module qmmm_accel_rdf
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_loc, c_double, c_int32_t, c_int64_t
  use qmmm_accel_core
  use qmmm_accel_rdf_c
  implicit none
  ! Public by default: the generated constants, types (qmmm_rdf_options, qmmm_rdf_stats) and interfaces pass
  ! through.
  public
  private :: c_ptr, c_null_ptr, c_loc, c_double, c_int32_t, c_int64_t

  ! An RDF handle; type(qmmm_rdf) :: rdf is ready for qmmm_rdf_create.
  type :: qmmm_rdf
    type(c_ptr) :: ptr = c_null_ptr
  end type qmmm_rdf

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
    s = c_qmmm_rdf_create(rdf%ptr, r_min, r_max, int(n_bins, c_int32_t), c_loc(o))
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
    s = c_qmmm_rdf_set_selections(rdf%ptr, int(size(id1), c_int64_t), c_loc(id1), m1, int(size(id2), c_int64_t), c_loc(id2), m2)
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
    s = c_qmmm_rdf_set_selection_self(rdf%ptr, int(n, c_int64_t), m)
  end function

  ! Leaves out pairs closer than r_cut (like gmx rdf -cut); N_pairs is unchanged. Before the first frame.
  integer function qmmm_rdf_set_cut(rdf, r_cut) result(s)
    type(qmmm_rdf), intent(in) :: rdf
    real(c_double), intent(in) :: r_cut
    s = c_qmmm_rdf_set_cut(rdf%ptr, r_cut)
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
    s = c_qmmm_rdf_add_frame(rdf%ptr, c_loc(xyz1), p2, c_loc(box))
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
    s = c_qmmm_rdf_add_frames(rdf%ptr, int(size(xyz1, 3), c_int64_t), c_loc(xyz1), p2, c_loc(box))
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
    s = c_qmmm_rdf_results(rdf%ptr, pr, pg, pn, ph, pf, pv)
  end function

  ! What the last qmmm_rdf_add_frame or qmmm_rdf_add_frames did (backend, method, pairs visited, N_pairs, times).
  integer function qmmm_rdf_stats_last(rdf, stats) result(s)
    type(qmmm_rdf), intent(in) :: rdf
    type(qmmm_rdf_stats), intent(out), target :: stats
    s = c_qmmm_rdf_stats_last(rdf%ptr, c_loc(stats))
  end function

  ! Half the smallest perpendicular width of box(3,3): the largest r_max it allows.
  integer function qmmm_rdf_box_limit(box, r_limit) result(s)
    real(c_double), intent(in), target, contiguous :: box(:,:)
    real(c_double), intent(out), target :: r_limit
    if (size(box, 1) /= 3 .or. size(box, 2) /= 3) then
      s = QMMM_ERR_INVALID_ARG
      return
    end if
    s = c_qmmm_rdf_box_limit(c_loc(box), c_loc(r_limit))
  end function

  integer function qmmm_rdf_reset(rdf) result(s)
    type(qmmm_rdf), intent(in) :: rdf
    s = c_qmmm_rdf_reset(rdf%ptr)
  end function

  integer function qmmm_rdf_destroy(rdf) result(s)
    type(qmmm_rdf), intent(inout) :: rdf
    s = c_qmmm_rdf_destroy(rdf%ptr)
    rdf%ptr = c_null_ptr
  end function

  integer function qmmm_rdf_release() result(s)
    s = c_qmmm_rdf_release()
  end function

end module qmmm_accel_rdf
