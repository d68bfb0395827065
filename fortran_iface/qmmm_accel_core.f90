! qmmm_accel_core.f90 -- the core of the qmmm-accel Fortran interface (qmmm_accel_core.h): statuses, backends,
! precisions and units (from the generated module qmmm_accel_core_c, re-exported here with its raw bind(C)
! interfaces c_qmmm_*), the library calls, and the helpers the family modules share. Shipped as source so any
! Fortran compiler can build it; `use qmmm_accel` brings this module and every family.
!
! Every function returns an integer status; QMMM_SUCCESS = 0. qmmm_error_message() says what went wrong.
module qmmm_accel_core
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_associated, c_f_pointer, c_loc, c_char, &
       c_null_char, c_int, c_size_t
  use qmmm_accel_core_c
  implicit none
  ! Public by default: the generated constants and interfaces pass through; what is only this file's is private.
  public
  private :: c_ptr, c_null_ptr, c_associated, c_f_pointer, c_loc, c_char, c_null_char, c_int, c_size_t
  private :: c_strlen

  interface
    function c_strlen(p) bind(c, name='strlen') result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: p
      integer(c_size_t) :: n
    end function
  end interface

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
    integer(c_int), target :: a, b, c
    s = c_qmmm_version(c_loc(a), c_loc(b), c_loc(c))
    major = a; minor = b; patch = c
  end function

  ! "major.minor.patch"
  function qmmm_version_string() result(version)
    character(len=:), allocatable :: version
    version = c_to_fortran_string(c_qmmm_version_string())
  end function

  integer function qmmm_cuda_device_count(count) result(s)
    integer, intent(out) :: count
    integer(c_int), target :: n
    s = c_qmmm_cuda_device_count(c_loc(n))
    count = n
  end function

  ! active = .true. when a CUDA MPS control daemon serves this process's pipe directory ($CUDA_MPS_PIPE_DIRECTORY,
  ! default /tmp/nvidia-mps): a file check, also without CUDA; its limits are in qmmm_accel_core.h.
  integer function qmmm_gpu_mps_active(active) result(s)
    logical, intent(out) :: active
    integer(c_int), target :: a
    s = c_qmmm_gpu_mps_active(c_loc(a))
    active = s == QMMM_SUCCESS .and. a /= 0
  end function

  ! The CPU threads n_threads = 0 stands for (qmmm_accel_core.h).
  integer function qmmm_default_threads(n) result(s)
    integer, intent(out) :: n
    integer(c_int), target :: c
    s = c_qmmm_default_threads(c_loc(c))
    n = c
  end function

  integer function qmmm_set_node_ranks(n) result(s)
    integer, intent(in) :: n
    s = c_qmmm_set_node_ranks(int(n, c_int))
  end function

  ! Records message as this thread's error message and returns status: for a check that fails before the C call.
  integer function fortran_error(status, message) result(s)
    integer, intent(in) :: status
    character(*), intent(in) :: message
    character(kind=c_char, len=:), allocatable, target :: m
    m = message // c_null_char
    s = c_qmmm_set_error(int(status, c_int), c_loc(m))
  end function

  integer function qmmm_set_error(status, message) result(s)
    integer, intent(in) :: status
    character(*), intent(in) :: message
    s = fortran_error(status, message)
  end function

  ! Messages of this thread count from base: 0 (C) or 1 (Fortran; the wrappers set it around their calls).
  integer function qmmm_set_index_base(base) result(s)
    integer, intent(in) :: base
    s = c_qmmm_set_index_base(int(base, c_int))
  end function

  ! This thread's index base (0 or 1).
  integer function qmmm_get_index_base(base) result(s)
    integer, intent(out) :: base
    integer(c_int), target :: b
    b = 0
    s = c_qmmm_get_index_base(c_loc(b))
    base = b
  end function

  ! What the wrappers put around a C call: messages count from 1 for the call (fortran_indices_on returns the
  ! caller's base), then from the caller's base again (fortran_indices_restore), which may be 1 from C.
  integer function fortran_indices_on() result(old)
    integer(c_int), target :: b
    integer(c_int) :: r
    b = 0
    r = c_qmmm_get_index_base(c_loc(b))
    old = b
    r = c_qmmm_set_index_base(1_c_int)
  end function

  subroutine fortran_indices_restore(old)
    integer, intent(in) :: old
    integer(c_int) :: r
    r = c_qmmm_set_index_base(int(old, c_int))
  end subroutine

end module qmmm_accel_core
