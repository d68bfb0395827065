! vmc_fuzz_entry.f90 -- C entry points to the driver's two readers for libFuzzer harnesses (and any C/C++
! caller): each reads one file and returns 0 (accepted) or 1 (rejected with a message), never stops the
! process. The message of the last call is kept for qmmm_vmc_fuzz_message.
!   int qmmm_vmc_fuzz_molden(const char *path);     /* vmc_molden: molden_read   */
!   int qmmm_vmc_fuzz_namelist(const char *path);   /* vmc_input: input_read     */
!   size_t qmmm_vmc_fuzz_message(char *buf, size_t n);   /* copies the message, NUL-terminated; returns its length */
! Not thread-safe (one message). Link: the CMake target qmmm_vmc_readers (static, Fortran runtime needed).
module vmc_fuzz_entry
  use, intrinsic :: iso_c_binding, only: c_char, c_int, c_size_t, c_null_char
  use vmc_molden, only: basis_t, molden_read
  use vmc_input, only: input_t, input_read
  implicit none
  private
  public :: qmmm_vmc_fuzz_molden, qmmm_vmc_fuzz_namelist, qmmm_vmc_fuzz_message

  character(len=:), allocatable :: last_message

contains

  function qmmm_vmc_fuzz_molden(path) result(r) bind(c, name='qmmm_vmc_fuzz_molden')
    character(kind=c_char), intent(in) :: path(*)
    integer(c_int) :: r
    type(basis_t) :: bs
    integer :: st
    call molden_read(from_c(path), bs, st, last_message)
    r = merge(0_c_int, 1_c_int, st == 0)
  end function

  function qmmm_vmc_fuzz_namelist(path) result(r) bind(c, name='qmmm_vmc_fuzz_namelist')
    character(kind=c_char), intent(in) :: path(*)
    integer(c_int) :: r
    type(input_t) :: inp
    integer :: st
    call input_read(from_c(path), inp, st, last_message)
    r = merge(0_c_int, 1_c_int, st == 0)
  end function

  function qmmm_vmc_fuzz_message(buf, n) result(len_msg) bind(c, name='qmmm_vmc_fuzz_message')
    character(kind=c_char), intent(out) :: buf(*)
    integer(c_size_t), value :: n
    integer(c_size_t) :: len_msg
    integer :: i, m
    len_msg = 0
    if (allocated(last_message)) len_msg = len(last_message)
    if (n == 0) return
    m = int(min(len_msg, n - 1))
    do i = 1, m
      buf(i) = last_message(i:i)
    end do
    buf(m + 1) = c_null_char
  end function

  function from_c(p) result(s)
    character(kind=c_char), intent(in) :: p(*)
    character(len=:), allocatable :: s
    integer :: n, i
    n = 0
    do while (p(n + 1) /= c_null_char)
      n = n + 1
    end do
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = p(i)
    end do
  end function

end module vmc_fuzz_entry
