! test_fortran_mirror -- every bind(c) type of the Fortran module has the size and field offsets of its C struct
! (fortran_mirror_c.c reads them from the headers with sizeof/offsetof); the default values the Fortran types
! carry equal what the C *_options_default functions write. The constants are compared by check_constants.cmake.
program test_fortran_mirror
  use, intrinsic :: iso_c_binding
  use qmmm_accel
  implicit none
  interface
    integer(c_int) function c_sizeof_of(s, size) bind(c, name='qmmm_mirror_sizeof')
      import :: c_char, c_int, c_int64_t
      character(kind=c_char), intent(in) :: s(*)
      integer(c_int64_t), intent(out) :: size
    end function
    integer(c_int) function c_offset_of(s, f, offset) bind(c, name='qmmm_mirror_offsetof')
      import :: c_char, c_int, c_int64_t
      character(kind=c_char), intent(in) :: s(*), f(*)
      integer(c_int64_t), intent(out) :: offset
    end function
    integer(c_int) function c_options_default(o) bind(c, name='qmmm_options_default')
      import :: c_int, qmmm_options
      type(qmmm_options), intent(out) :: o
    end function
    integer(c_int) function c_dcs_options_default(o) bind(c, name='qmmm_dcs_options_default')
      import :: c_int, qmmm_dcs_options
      type(qmmm_dcs_options), intent(out) :: o
    end function
    integer(c_int) function c_rdf_options_default(o) bind(c, name='qmmm_rdf_options_default')
      import :: c_int, qmmm_rdf_options
      type(qmmm_rdf_options), intent(out) :: o
    end function
  end interface
  type(qmmm_options), target :: fo, co
  type(qmmm_dcs_lattice), target :: dl
  type(qmmm_dcs_options), target :: dopt, dco
  type(qmmm_rdf_options), target :: ropt, rco
  integer :: failures = 0

  call size_is('qmmm_options', c_sizeof(fo))
  call at('qmmm_options', 'backend', c_loc(fo), c_loc(fo%backend))
  call at('qmmm_options', 'precision', c_loc(fo), c_loc(fo%precision))
  call at('qmmm_options', 'device', c_loc(fo), c_loc(fo%device))
  call at('qmmm_options', 'n_threads', c_loc(fo), c_loc(fo%n_threads))
  call at('qmmm_options', 'cell_volume', c_loc(fo), c_loc(fo%cell_volume))
  call at('qmmm_options', 'method', c_loc(fo), c_loc(fo%method))
  call at('qmmm_options', 'flags', c_loc(fo), c_loc(fo%flags))
  call at('qmmm_options', 'tolerance', c_loc(fo), c_loc(fo%tolerance))
  call at('qmmm_options', 'region', c_loc(fo), c_loc(fo%region))
  call at('qmmm_options', 'reserved', c_loc(fo), c_loc(fo%reserved))

  call size_is('qmmm_dcs_lattice', c_sizeof(dl))
  call at('qmmm_dcs_lattice', 'origin', c_loc(dl), c_loc(dl%origin))
  call at('qmmm_dcs_lattice', 'spacing', c_loc(dl), c_loc(dl%spacing))
  call at('qmmm_dcs_lattice', 'count', c_loc(dl), c_loc(dl%count))

  call size_is('qmmm_dcs_options', c_sizeof(dopt))
  call at('qmmm_dcs_options', 'backend', c_loc(dopt), c_loc(dopt%backend))
  call at('qmmm_dcs_options', 'precision', c_loc(dopt), c_loc(dopt%precision))
  call at('qmmm_dcs_options', 'n_threads', c_loc(dopt), c_loc(dopt%n_threads))
  call at('qmmm_dcs_options', 'n_devices', c_loc(dopt), c_loc(dopt%n_devices))
  call at('qmmm_dcs_options', 'devices', c_loc(dopt), c_loc(dopt%devices))
  call at('qmmm_dcs_options', 'kernel', c_loc(dopt), c_loc(dopt%kernel))
  call at('qmmm_dcs_options', 'on_atom', c_loc(dopt), c_loc(dopt%on_atom))
  call at('qmmm_dcs_options', 'max_device_bytes', c_loc(dopt), c_loc(dopt%max_device_bytes))
  call at('qmmm_dcs_options', 'progress', c_loc(dopt), c_loc(dopt%progress))
  call at('qmmm_dcs_options', 'progress_user', c_loc(dopt), c_loc(dopt%progress_user))
  call at('qmmm_dcs_options', 'reserved', c_loc(dopt), c_loc(dopt%reserved))

  call size_is('qmmm_rdf_options', c_sizeof(ropt))
  call at('qmmm_rdf_options', 'backend', c_loc(ropt), c_loc(ropt%backend))
  call at('qmmm_rdf_options', 'n_threads', c_loc(ropt), c_loc(ropt%n_threads))
  call at('qmmm_rdf_options', 'method', c_loc(ropt), c_loc(ropt%method))
  call at('qmmm_rdf_options', 'kernel', c_loc(ropt), c_loc(ropt%kernel))
  call at('qmmm_rdf_options', 'n_devices', c_loc(ropt), c_loc(ropt%n_devices))
  call at('qmmm_rdf_options', 'devices', c_loc(ropt), c_loc(ropt%devices))
  call at('qmmm_rdf_options', 'reserved', c_loc(ropt), c_loc(ropt%reserved))

  ! Defaults: a default-initialised Fortran type equals what the C library calls its defaults.
  call expect(c_options_default(co) == QMMM_SUCCESS, 'qmmm_options_default')
  call expect(fo%backend == co%backend .and. fo%precision == co%precision .and. fo%device == co%device .and. &
       fo%n_threads == co%n_threads .and. fo%cell_volume == co%cell_volume .and. fo%method == co%method .and. &
       fo%flags == co%flags .and. fo%tolerance == co%tolerance .and. all(fo%reserved == co%reserved) .and. &
       .not. c_associated(fo%region) .and. .not. c_associated(co%region), &
       'qmmm_options defaults')
  call expect(c_dcs_options_default(dco) == QMMM_SUCCESS, 'qmmm_dcs_options_default')
  call expect(dopt%backend == dco%backend .and. dopt%precision == dco%precision .and. &
       dopt%n_threads == dco%n_threads .and. dopt%n_devices == dco%n_devices .and. all(dopt%devices == dco%devices) &
       .and. dopt%kernel == dco%kernel .and. dopt%max_device_bytes == dco%max_device_bytes .and. &
       .not. c_associated(dco%progress_user) .and. .not. c_associated(dco%progress), 'qmmm_dcs_options defaults')
  call expect(c_rdf_options_default(rco) == QMMM_SUCCESS, 'qmmm_rdf_options_default')
  call expect(ropt%backend == rco%backend .and. ropt%n_threads == rco%n_threads .and. ropt%method == rco%method &
       .and. ropt%kernel == rco%kernel .and. ropt%n_devices == rco%n_devices .and. all(ropt%devices == rco%devices), &
       'qmmm_rdf_options defaults')
  ! The QMMM_DCS_MAX_DEVICES / QMMM_RDF_MAX_DEVICES arrays have that many entries.
  call expect(size(dopt%devices) == QMMM_DCS_MAX_DEVICES .and. size(ropt%devices) == QMMM_RDF_MAX_DEVICES, &
       'device list lengths')

  if (failures > 0) then
    print '(a,i0,a)', 'fortran_mirror: ', failures, ' mismatch(es)'
    error stop 1
  end if
  print '(a)', 'fortran_mirror: all passed'

contains

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print '(a)', 'MISMATCH: ' // what
      failures = failures + 1
    end if
  end subroutine

  subroutine size_is(s, fsize)
    character(len=*), intent(in) :: s
    integer(c_size_t), intent(in) :: fsize
    integer(c_int64_t) :: csize
    call expect(c_sizeof_of(s // c_null_char, csize) == 0, s // ': unknown to the C side')
    if (csize /= fsize) print '(a,i0,a,i0)', s // ': Fortran size ', fsize, ', C size ', csize
    call expect(csize == fsize, 'size of ' // s)
  end subroutine

  subroutine at(s, f, base, field)
    character(len=*), intent(in) :: s, f
    type(c_ptr), intent(in) :: base, field
    integer(c_int64_t) :: coff, foff
    call expect(c_offset_of(s // c_null_char, f // c_null_char, coff) == 0, s // '%' // f // ': unknown to the C side')
    foff = transfer(field, 0_c_intptr_t) - transfer(base, 0_c_intptr_t)
    if (coff /= foff) print '(a,i0,a,i0)', s // '%' // f // ': Fortran offset ', foff, ', C offset ', coff
    call expect(coff == foff, 'offset of ' // s // '%' // f)
  end subroutine

end program test_fortran_mirror
