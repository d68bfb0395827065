! qmmm_accel_cube.f90 -- Fortran interface to the cube family of qmmm-accel (re-exported by qmmm_accel).
! Environments built from Gaussian cube files (semantics, units and signs: qmmm_accel_cube.h):
! cells with rho >= threshold (e/bohr^3) give populations q = rho*dV (electrons, positive), atoms give +Z,
! lengths in bohr. Paths are ordinary Fortran strings (trailing blanks are ignored).
module qmmm_accel_cube
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_loc, c_char, c_null_char, c_int, c_int64_t, c_double
  use qmmm_accel_core
  use qmmm_accel_field
  use qmmm_accel_cube_c
  implicit none
  ! Public by default: the generated interfaces pass through; this file's helpers are private.
  public
  private :: c_ptr, c_null_ptr, c_loc, c_char, c_null_char, c_int, c_int64_t, c_double, c_path

  ! An environment handle; type(qmmm_env) :: env is ready for qmmm_env_create or qmmm_cube_read.
  type :: qmmm_env
    type(c_ptr) :: ptr = c_null_ptr
  end type qmmm_env

contains

  function c_path(path) result(p)
    character(len=*), intent(in) :: path
    character(kind=c_char, len=:), allocatable :: p
    p = trim(path) // c_null_char
  end function

  integer function qmmm_env_create(env) result(s)
    type(qmmm_env), intent(out) :: env
    s = c_qmmm_env_create(env%ptr)
  end function

  ! Appends the cells (rho >= threshold) and nuclei of one cube file (.cube or .cube.gz).
  integer function qmmm_env_add_cube(env, path, threshold) result(s)
    type(qmmm_env), intent(in) :: env
    character(len=*), intent(in) :: path
    real(c_double), intent(in) :: threshold
    character(kind=c_char, len=:), allocatable, target :: p
    p = c_path(path)
    s = c_qmmm_env_add_cube(env%ptr, c_loc(p), threshold)
  end function

  ! Sizes to allocate cell_xyz(3,n_cells), cell_q(n_cells), nuc_xyz(3,n_nuclei), nuc_z(n_nuclei);
  ! cell_volume is dV (bohr^3), 0 when the cubes added have different dV.
  integer function qmmm_env_sizes(env, n_cells, n_nuclei, cell_volume) result(s)
    type(qmmm_env), intent(in) :: env
    integer(c_int64_t), intent(out), target :: n_cells, n_nuclei
    real(c_double), intent(out), optional :: cell_volume
    real(c_double), target :: v
    s = c_qmmm_env_sizes(env%ptr, c_loc(n_cells), c_loc(n_nuclei), c_loc(v))
    if (present(cell_volume)) cell_volume = v
  end function

  ! Copies the environment into arrays of exactly the sizes qmmm_env_sizes gives.
  integer function qmmm_env_copy(env, cell_xyz, cell_q, nuc_xyz, nuc_z) result(s)
    type(qmmm_env), intent(in) :: env
    real(c_double), intent(out), target, contiguous :: cell_xyz(:,:), cell_q(:), nuc_xyz(:,:), nuc_z(:)
    integer(c_int64_t), target :: nc, nn
    type(c_ptr) :: p1, p2, p3, p4
    s = c_qmmm_env_sizes(env%ptr, c_loc(nc), c_loc(nn), c_null_ptr)
    if (s /= QMMM_SUCCESS) return
    if (size(cell_xyz, 1) /= 3 .or. size(cell_xyz, 2) /= nc .or. size(cell_q) /= nc .or. &
         size(nuc_xyz, 1) /= 3 .or. size(nuc_xyz, 2) /= nn .or. size(nuc_z) /= nn) then
      s = QMMM_ERR_INVALID_ARG   ! arrays not of the environment's sizes; C is not called
      return
    end if
    p1 = c_null_ptr; p2 = c_null_ptr; p3 = c_null_ptr; p4 = c_null_ptr
    if (nc > 0) then
      p1 = c_loc(cell_xyz); p2 = c_loc(cell_q)
    end if
    if (nn > 0) then
      p3 = c_loc(nuc_xyz); p4 = c_loc(nuc_z)
    end if
    s = c_qmmm_env_copy(env%ptr, p1, p2, p3, p4)
  end function

  integer function qmmm_env_destroy(env) result(s)
    type(qmmm_env), intent(inout) :: env
    s = c_qmmm_env_destroy(env%ptr)
    if (s == QMMM_SUCCESS) env%ptr = c_null_ptr
  end function

  ! One file: a new environment holding its cells and nuclei.
  integer function qmmm_cube_read(env, path, threshold) result(s)
    type(qmmm_env), intent(out) :: env
    character(len=*), intent(in) :: path
    real(c_double), intent(in) :: threshold
    character(kind=c_char, len=:), allocatable, target :: p
    p = c_path(path)
    s = c_qmmm_cube_read(env%ptr, c_loc(p), threshold)   ! on error env%ptr is null
  end function

  ! The field of an environment; cell_volume comes from the cubes unless opt sets it.
  integer function qmmm_field_create_from_env(f, env, opt) result(s)
    type(qmmm_field), intent(out) :: f
    type(qmmm_env), intent(in) :: env
    type(qmmm_options), intent(in), optional, target :: opt
    type(qmmm_options), target :: o
    if (present(opt)) o = opt
    s = c_qmmm_field_create_from_env(f%ptr, env%ptr, c_loc(o))
  end function

  ! The field of several cube files read with one threshold, in one call.
  integer function qmmm_field_create_from_cubes(f, paths, threshold, opt) result(s)
    type(qmmm_field), intent(out) :: f
    character(len=*), intent(in) :: paths(:)
    real(c_double), intent(in) :: threshold
    type(qmmm_options), intent(in), optional :: opt
    type(qmmm_env) :: env
    integer :: i
    integer(c_int) :: ignored
    s = qmmm_env_create(env)
    if (s /= QMMM_SUCCESS) return
    do i = 1, size(paths)
      s = qmmm_env_add_cube(env, paths(i), threshold)
      if (s /= QMMM_SUCCESS) exit
    end do
    if (s == QMMM_SUCCESS) s = qmmm_field_create_from_env(f, env, opt)
    ignored = c_qmmm_env_destroy(env%ptr)
  end function

end module qmmm_accel_cube
