! vmc_check -- assertions on qmmm_vmc's JSON results against psi4's reference.json (exit 1 on failure).
! KEY may be a path into nested objects: parts.electron_environment. Energies in hartree.
!   vmc_check ref    RESULT REFERENCE REFKEY MAX_ERROR [OFFSET OFFSET_ERR]
!                    |E - (ref + OFFSET)| <= 3 sqrt(sigma^2 + OFFSET_ERR^2), sigma <= MAX_ERROR, and the
!                    reblocking converged with >= 8 blocks (checked first: else the error bar means nothing). OFFSET: a known bias of the trial function
!                    (the cusp correction's, measured in long runs), OFFSET_ERR its error bar.
!   vmc_check part   RESULT PART REFERENCE REFKEY MAX_ERROR
!                    |parts.PART - ref| <= 3 sigma_PART (parts_error.PART) and sigma_PART <= MAX_ERROR
!   vmc_check sum    A B REFERENCE REFKEY MAX_ERROR [OFFSET OFFSET_ERR]
!                    the embedded energy from two runs of the same trial function, A without and B with
!                    the environment: E_A + parts.electron_environment(B) + parts.nucleus_environment(B),
!                    error sqrt(sigma_A^2 + sigma_env(B)^2), checked like ref (both runs' reblocking too)
!   vmc_check exact  RESULT KEY REFERENCE REFKEY TOL     |RESULT[KEY] - REFERENCE[REFKEY]| <= TOL
!   vmc_check lower  A B [NSIG]                          E_A < E_B (by more than NSIG combined error bars,
!                                                        default 0) and variance_A < variance_B
!   vmc_check same   A B                                 energy, error, blocks, final positions, variance,
!                                                        environment energy bitwise equal
!   vmc_check close  A B TOL                             same configurations (final positions, acceptance
!                                                        bitwise) and |E_A - E_B| <= TOL
!   vmc_check differ A B KEY                             A[KEY] /= B[KEY]: a run that must not have taken B's path
!                                                        (CUDA single vs CPU double, split vs direct) differs from it
!   vmc_check is     RESULT KEY TEXT                     RESULT[KEY] is the string TEXT (e.g. backend cuda)
!   vmc_check value  RESULT KEY VALUE TOL                |RESULT[KEY] - VALUE| <= TOL (an array: its first element)
!   vmc_check forces RESULT REFERENCE MAX_Z MAX_OUT3 MAX_REL_ERR
!                    key forces against psi4's field at the MM sites (data/water_mm/reference.json): the QM nuclei's
!                    field at the sites and the environment's force on the QM nuclei to 1e-10 (exact both); the
!                    electrons' mean field, component by component, z = (VMC - psi4) / error: |z| <= MAX_Z for
!                    every component, at most MAX_OUT3 components with |z| > 3 (of 3 x sites: 0.27 % expected
!                    for Gaussian errors), chi^2 per component printed; the summed force on the sites within 3
!                    error bars; every error bar <= MAX_REL_ERR x the largest |field| (the test has power);
!                    blocks independent at the energy's reblocking length
!   vmc_check forces_close A B [TOL]                 key forces of two runs of the same configurations: max |F_A -
!                                                        F_B| over the sites' forces and error bars and the sums <=
!                                                        TOL x max |F_A| (TOL 0 or none: bitwise)
!   vmc_check pol    RESULT REFERENCE MAX_Z MAX_OUT3
!                    key pol_file against the fixed HF density's dipoles (data/water_pol/reference.json): the MM
!                    sites' permanent field to 1e-10 (the library's against the reference's own sums); the dipoles
!                    solved from the fixed run's field (run_mu), component by component, z = (VMC - reference) /
!                    error: |z| <= MAX_Z each, at most MAX_OUT3 with |z| > 3 (the sites' dipoles are strongly
!                    correlated: such counts come in lumps); E_pol of the fixed dipoles (from the last update's
!                    few blocks) and of run_mu within 3 error bars; the fixed dipoles' energy with the QM charges,
!                    -mu . E_QM, against the same mu in psi4's field (its error bar is the run's, given mu); the
!                    loop converged
!   vmc_check pol_close A B [TOL]                    key pol_file in two runs of the same configurations: the
!                                                        fixed dipoles, the run's solved dipoles, the energy and E_pol
!                                                        within TOL relative to max |mu| and |energy| (0 or none:
!                                                        bitwise)
!   vmc_check pol_forces RESULT MAX_Z MIN_Z
!                    key pol_file with forces, a neutral spherical QM atom far from the sites (pol_two_sites): the
!                    exact parts balance (Newton: the sites' QM-nuclei part, dipole term included, plus the force on
!                    the QM nuclei is 0 to 1e-12 of its size); on every dipole site the dipoles' force term
!                    (mu . grad) E of electrons and nuclei together is 0 within MAX_Z error bars (the electrons'
!                    field gradient cancels the nucleus'), and its electrons' part is nonzero by more than MIN_Z
!                    error bars on some site (the term is there to cancel)
!   vmc_check pol_grad RESULT REFERENCE MAX_Z MAX_OUT3
!                    key pol_file with forces against psi4's field gradient at the sites (data/water_pol/
!                    field_gradient.json): the QM nuclei's field gradient to 1e-10 (exact both); the electrons' mean
!                    field gradient against the reference's point estimator (psi4's central differences less the
!                    density's contact term), component by component, z = (VMC - psi4) / error: |z| <= MAX_Z each,
!                    at most MAX_OUT3 of 6 x sites with |z| > 3; the electrons' dipole force term (mu . grad) E
!                    against the run's dipoles (site_dipole) times the reference, the same way (of 3 x sites)
!   vmc_check parts  RESULT TOL                          the energy is the sum of its parts: |energy - (kinetic +
!                                                        e-e + e-n + n-n + electron_environment +
!                                                        nucleus_environment)| <= TOL (a dropped term fails)
program vmc_check
  use, intrinsic :: iso_fortran_env, only: real64
  implicit none
  character(len=512) :: mode, a, b, c, d, e, f, g
  real(real64) :: ea, sa, eb, sb, r, tol, off, soff
  call get_command_argument(1, mode)
  call get_command_argument(2, a)
  call get_command_argument(3, b)
  call get_command_argument(4, c)
  call get_command_argument(5, d)
  call get_command_argument(6, e)
  call get_command_argument(7, f)
  call get_command_argument(8, g)
  select case (trim(mode))
  case ('ref')
    ea = num(a, 'energy'); sa = num(a, 'error'); r = num(b, c)
    read(d, *) tol
    call offset_args(e, f, off, soff)
    call check_reblock(a)
    call check_total(ea, sa, r, off, soff, tol, d)
  case ('part')
    ea = num(a, 'parts.' // trim(b)); sa = num(a, 'parts_error.' // trim(b)); r = num(c, d)
    read(e, *) tol
    call check_reblock(a)
    print '(a,es16.8,a,es10.3,a,es16.8,a,es10.3,a,f8.2,a)', trim(b) // ' ', ea, ' +- ', sa, '  reference ', r, &
         '  diff ', ea - r, '  (', abs(ea - r) / sa, ' sigma)'
    call expect(abs(ea - r) <= 3 * sa, trim(b) // ' within 3 error bars of ' // trim(d))
    call expect(sa <= tol, trim(b) // ' error bar <= ' // trim(e))
  case ('sum')
    ea = num(a, 'energy') + num(b, 'parts.electron_environment') + num(b, 'parts.nucleus_environment')
    sa = sqrt(num(a, 'error')**2 + num(b, 'parts_error.electron_environment')**2)
    print '(a,f16.8,a,f12.8,a,f16.8,a,f12.8)', 'without environment ', num(a, 'energy'), ' +- ', num(a, 'error'), &
         '   electrons-environment ', num(b, 'parts.electron_environment'), ' +- ', &
         num(b, 'parts_error.electron_environment')
    r = num(c, d)
    read(e, *) tol
    call offset_args(f, g, off, soff)
    call check_reblock(a)
    call check_reblock(b)
    call check_total(ea, sa, r, off, soff, tol, e)
  case ('exact')
    ea = num(a, b); r = num(c, d)
    read(e, *) tol
    print '(a,es24.16,a,es24.16,a,es10.3)', trim(b) // ' ', ea, '  reference ', r, '  diff ', ea - r
    call expect(abs(ea - r) <= tol, trim(b) // ' agrees with ' // trim(d))
  case ('lower')
    ea = num(a, 'energy'); sa = num(a, 'error'); eb = num(b, 'energy'); sb = num(b, 'error')
    print '(a,2f16.8,a,2f16.8)', 'A: E, variance ', ea, num(a, 'variance'), '   B: ', eb, num(b, 'variance')
    print '(a,f8.2,a)', 'energy difference B - A = ', (eb - ea) / sqrt(sa**2 + sb**2), ' combined error bars'
    tol = 0
    if (len_trim(c) > 0) read(c, *) tol
    call expect(eb - ea > tol * sqrt(sa**2 + sb**2), 'energy of A lower than B by more than ' // trim(adjustl(c)) // &
         ' combined error bars')
    call expect(num(a, 'variance') < num(b, 'variance'), 'variance of A lower than B')
    call check_reblock(a)
    call check_reblock(b)
  case ('same')
    call expect(text(a, 'energy') == text(b, 'energy'), 'energy bitwise identical')
    call expect(text(a, 'error') == text(b, 'error'), 'error bar bitwise identical')
    call expect(text(a, 'block_energies') == text(b, 'block_energies'), 'block energies bitwise identical')
    call expect(text(a, 'final_position_checksum') == text(b, 'final_position_checksum'), 'final positions identical')
    call expect(text(a, 'variance') == text(b, 'variance'), 'variance bitwise identical')
    call expect(text(a, 'parts.electron_environment') == text(b, 'parts.electron_environment'), &
         'electron-environment energy bitwise identical')
    print '(a)', 'identical: ' // trim(text(a, 'energy'))
  case ('close')
    read(c, *) tol
    ea = num(a, 'energy'); eb = num(b, 'energy')
    print '(a,es24.16,a,es24.16,a,es10.3)', 'E_A ', ea, '  E_B ', eb, '  diff ', ea - eb
    call expect(text(a, 'final_position_checksum') == text(b, 'final_position_checksum'), 'same configurations')
    call expect(text(a, 'acceptance') == text(b, 'acceptance'), 'same acceptance')
    call expect(abs(ea - eb) <= tol, 'energy difference <= ' // trim(c))
  case ('differ')
    ea = num(a, c); eb = num(b, c)
    print '(a,es24.16,a,es24.16,a,es10.3)', trim(c) // ' A ', ea, '  B ', eb, '  diff ', ea - eb
    call expect(ea /= eb, trim(c) // ' differs between the two runs')
  case ('is')
    print '(a)', trim(b) // ' = ' // text(a, b)
    call expect(text(a, b) == '"' // trim(c) // '"', trim(b) // ' is "' // trim(c) // '"')
  case ('value')
    ea = num(a, b); read(c, *) r; read(d, *) tol
    print '(a,es24.16,a,es24.16,a,es10.3)', trim(b) // ' ', ea, '  expected ', r, '  diff ', ea - r
    call expect(abs(ea - r) <= tol, trim(b) // ' = ' // trim(c) // ' within ' // trim(d))
  case ('parts')
    read(b, *) tol
    ea = num(a, 'energy')
    r = num(a, 'parts.kinetic') + num(a, 'parts.electron_electron') + num(a, 'parts.electron_nucleus') + &
        num(a, 'parts.nucleus_nucleus') + num(a, 'parts.electron_environment') + num(a, 'parts.nucleus_environment')
    print '(a,es24.16,a,es24.16,a,es10.3)', 'energy ', ea, '  sum of parts ', r, '  diff ', ea - r
    call expect(abs(ea - r) <= tol, 'energy = sum of its parts within ' // trim(b))
  case ('forces')
    call check_forces(a, b, c, d, e)
  case ('pol')
    call check_pol(a, b, c, d)
  case ('pol_grad')
    call check_pol_grad(a, b, c, d)
  case ('pol_forces')
    call check_pol_forces(a, b, c)
  case ('pol_close')
    tol = 0
    if (len_trim(c) > 0) read(c, *) tol
    call pol_close(a, b, tol, c)
  case ('forces_close')
    tol = 0
    if (len_trim(c) > 0) read(c, *) tol
    call forces_close(a, b, tol, c)
  case default
    print '(a)', 'FAILED: unknown mode "' // trim(mode) // '" (see the header of vmc_check.f90)'
    call exit(1)
  end select

contains

  subroutine check_forces(res, ref, zmax_t, nout_t, relerr_t)
    character(len=*), intent(in) :: res, ref, zmax_t, nout_t, relerr_t
    real(real64), allocatable :: el(:), err(:), nuc(:), fqm(:), r_el(:), r_nuc(:), r_fqm(:), z(:), sf(:), sfe(:), &
         r_sf(:)
    real(real64) :: zmax, relerr
    integer :: m, nout, nz3
    m = nint(num(res, 'forces.n_sites'))
    read(zmax_t, *) zmax; read(nout_t, *) nout; read(relerr_t, *) relerr
    el = nums(res, 'forces.field_electrons', 3 * m); err = nums(res, 'forces.field_electrons_error', 3 * m)
    nuc = nums(res, 'forces.field_qm_nuclei', 3 * m); fqm = nums(res, 'forces.qm_nuclei_force', 9)
    sf = nums(res, 'forces.sum_site_force', 3); sfe = nums(res, 'forces.sum_site_force_error', 3)
    r_el = nums(ref, 'field_at_sites.electrons', 3 * m); r_nuc = nums(ref, 'field_at_sites.nuclei', 3 * m)
    r_fqm = nums(ref, 'forces.qm_nuclei', 9); r_sf = nums(ref, 'forces.sum_mm_total', 3)
    print '(a,i0,a,es10.3,a,es10.3)', 'sites ', m, ';  max |QM nuclei field - psi4| ', maxval(abs(nuc - r_nuc)), &
         ';  max |force on QM nuclei - reference| ', maxval(abs(fqm - r_fqm))
    call expect(text(res, 'forces.blocks_independent') == 'true', 'blocks independent at the reblocking length')
    call expect(maxval(abs(nuc - r_nuc)) <= 1e-10_real64, 'the QM nuclei''s field at the sites to 1e-10')
    call expect(maxval(abs(fqm - r_fqm)) <= 1e-10_real64, 'the environment''s force on the QM nuclei to 1e-10')
    z = (el - r_el) / err
    nz3 = count(abs(z) > 3)
    print '(a,es10.3,a,es10.3,a,es10.3)', 'electrons'' field: max |psi4| ', maxval(abs(r_el)), ', error bars ', &
         minval(err), ' to ', maxval(err)
    print '(a,f8.3,a,i0,a,i0,a,f8.4)', 'z = (VMC - psi4) / error: max |z| ', maxval(abs(z)), ', |z| > 3: ', nz3, &
         ' of ', 3 * m, ', chi^2 per component ', sum(z**2) / (3 * m)
    print '(a,3es12.4,a,3es11.3,a,3es12.4)', 'sum of forces on the sites ', sf, ' +- ', sfe, '  psi4 ', r_sf
    call expect(all(err > 0) .and. maxval(err) <= relerr * maxval(abs(r_el)), 'every error bar in (0, ' // &
         trim(relerr_t) // ' x max |field|]')
    call expect(maxval(abs(z)) <= zmax, 'every component within ' // trim(zmax_t) // ' error bars of psi4')
    call expect(nz3 <= nout, 'at most ' // trim(nout_t) // ' components beyond 3 error bars')
    call expect(all(abs(sf - r_sf) <= 3 * sfe), 'the summed force on the sites within 3 error bars of psi4''s')
  end subroutine

  subroutine check_pol(res, ref, zmax_t, nout_t)
    character(len=*), intent(in) :: res, ref, zmax_t, nout_t
    real(real64), allocatable :: r_mu(:), emm(:), r_emm(:)
    real(real64) :: zmax
    integer :: m, nout
    m = nint(num(res, 'pol.n_sites'))
    read(zmax_t, *) zmax; read(nout_t, *) nout
    r_mu = nums(ref, 'mu', 3 * m)
    emm = nums(res, 'pol.field_mm', 3 * m); r_emm = nums(ref, 'field_mm', 3 * m)
    print '(a,i0,a,es10.3,a,es10.3)', 'sites ', m, ';  max |permanent field - reference| ', maxval(abs(emm - r_emm)), &
         ' of ', maxval(abs(r_emm))
    call expect(text(res, 'pol.converged') == 'true', 'the dipoles converged')
    call expect(maxval(abs(emm - r_emm)) <= 1e-10_real64, 'the permanent field at the sites to 1e-10')
    call pol_dipoles(res, 'pol.run_mu', 'pol.run_mu_error', r_mu, zmax, nout, zmax_t, nout_t)
    call pol_energy(res, 'pol.e_pol', 'pol.e_pol_error', num(ref, 'e_pol'))
    call pol_energy(res, 'pol.run_e_pol', 'pol.run_e_pol_error', num(ref, 'e_pol'))
    call pol_energy(res, 'pol.e_induced_qm', 'pol.e_induced_qm_error', &
         -sum(nums(res, 'pol.mu', 3 * m) * nums(ref, 'field_qm', 3 * m)))
  end subroutine

  subroutine check_pol_grad(res, ref, zmax_t, nout_t)
    character(len=*), intent(in) :: res, ref, zmax_t, nout_t
    real(real64), allocatable :: g(:), ge(:), gn(:), r_g(:), r_gn(:), mu(:), fd(:), fde(:), r_fd(:), z(:)
    real(real64) :: zmax
    integer :: m, nout, k
    m = nint(num(res, 'forces.n_sites'))
    read(zmax_t, *) zmax; read(nout_t, *) nout
    g = nums(res, 'forces.field_gradient_electrons', 6 * m)
    ge = nums(res, 'forces.field_gradient_electrons_error', 6 * m)
    gn = nums(res, 'forces.field_gradient_qm_nuclei', 6 * m)
    r_g = nums(ref, 'electrons_point_estimator', 6 * m); r_gn = nums(ref, 'nuclei', 6 * m)
    mu = nums(res, 'forces.site_dipole', 3 * m); fd = nums(res, 'forces.site_force_dipole_electrons', 3 * m)
    fde = nums(res, 'forces.site_force_dipole_electrons_error', 3 * m)
    allocate(r_fd(3 * m))
    do k = 0, m - 1   ! (mu . grad) E with the reference's gradient: component a = sum_b mu_b G_ab
      r_fd(3 * k + 1) = mu(3 * k + 1) * r_g(6 * k + 1) + mu(3 * k + 2) * r_g(6 * k + 2) + mu(3 * k + 3) * r_g(6 * k + 3)
      r_fd(3 * k + 2) = mu(3 * k + 1) * r_g(6 * k + 2) + mu(3 * k + 2) * r_g(6 * k + 4) + mu(3 * k + 3) * r_g(6 * k + 5)
      r_fd(3 * k + 3) = mu(3 * k + 1) * r_g(6 * k + 3) + mu(3 * k + 2) * r_g(6 * k + 5) + mu(3 * k + 3) * r_g(6 * k + 6)
    end do
    print '(a,i0,a,es10.3)', 'sites ', m, ';  max |QM nuclei field gradient - reference| ', maxval(abs(gn - r_gn))
    call expect(maxval(abs(gn - r_gn)) <= 1e-10_real64, 'the QM nuclei''s field gradient at the sites to 1e-10')
    z = (g - r_g) / ge
    print '(a,es10.3,a,es10.3,a,es10.3)', 'electrons'' field gradient: max |psi4| ', maxval(abs(r_g)), &
         ', error bars ', minval(ge), ' to ', maxval(ge)
    print '(a,f8.3,a,i0,a,i0,a,f8.4)', 'z = (VMC - psi4) / error: max |z| ', maxval(abs(z)), ', |z| > 3: ', &
         count(abs(z) > 3), ' of ', 6 * m, ', chi^2 per component ', sum(z**2) / (6 * m)
    call expect(all(ge > 0), 'every error bar > 0')
    call expect(maxval(abs(z)) <= zmax, 'every gradient component within ' // trim(zmax_t) // ' error bars of psi4')
    call expect(count(abs(z) > 3) <= nout, 'at most ' // trim(nout_t) // ' gradient components beyond 3 error bars')
    z = (fd - r_fd) / fde
    print '(a,es10.3,a,f8.3,a,i0,a,i0,a,f8.4)', 'electrons'' (mu.grad) E: max |reference| ', maxval(abs(r_fd)), &
         ', max |z| ', maxval(abs(z)), ', |z| > 3: ', count(abs(z) > 3), ' of ', 3 * m, ', chi^2 per component ', &
         sum(z**2) / (3 * m)
    call expect(maxval(abs(z)) <= zmax, 'every dipole force component within ' // trim(zmax_t) // ' error bars')
    call expect(count(abs(z) > 3) <= nout, 'at most ' // trim(nout_t) // ' dipole force components beyond 3 error bars')
  end subroutine

  subroutine check_pol_forces(res, zmax_t, zmin_t)
    character(len=*), intent(in) :: res, zmax_t, zmin_t
    real(real64), allocatable :: sq(:), fq(:), mu(:), fd(:), fde(:), fdt(:)
    real(real64) :: zmax, zmin
    integer :: m, k
    logical, allocatable :: dip(:)
    m = nint(num(res, 'forces.n_sites'))
    read(zmax_t, *) zmax; read(zmin_t, *) zmin
    sq = nums(res, 'forces.sum_site_force_qm_nuclei', 3); fq = nums(res, 'forces.sum_qm_nuclei_force', 3)
    mu = nums(res, 'forces.site_dipole', 3 * m); fdt = nums(res, 'forces.site_force_dipole', 3 * m)
    fd = nums(res, 'forces.site_force_dipole_electrons', 3 * m)
    fde = nums(res, 'forces.site_force_dipole_electrons_error', 3 * m)
    print '(a,3es12.4,a,3es12.4)', 'sites'' QM-nuclei part ', sq, ';  force on the QM nuclei ', fq
    call expect(all(abs(sq + fq) <= 1e-12_real64 * maxval(abs(fq))), 'the exact parts balance to 1e-12')
    dip = [(any(mu(3 * k - 2:3 * k) /= 0), k = 1, m)]
    dip = [(dip((k + 2) / 3), k = 1, 3 * m)]
    print '(a,3es12.4,a,3es11.3)', 'dipole term, electrons ', fd(4:6), ' +- ', fde(4:6)
    print '(a,f8.3,a,f10.1)', 'dipole term (all): max |z| ', maxval(abs(fdt) / fde, mask=dip), &
         ';  electrons'' part: max |z| ', maxval(abs(fd) / fde, mask=dip)
    call expect(any(dip), 'some site has a dipole')
    call expect(all(abs(fdt) <= zmax * fde .or. .not. dip), 'the dipoles'' force term within ' // trim(zmax_t) // &
         ' error bars of 0')
    call expect(any(abs(fd) > zmin * fde .and. dip), 'the electrons'' dipole term beyond ' // trim(zmin_t) // &
         ' error bars somewhere')
  end subroutine

  subroutine pol_close(fa, fb, tol, tol_text)
    character(len=*), intent(in) :: fa, fb, tol_text
    real(real64), intent(in) :: tol
    character(len=32), parameter :: keys(5) = [character(len=32) :: 'pol.mu', 'pol.run_mu', 'pol.energy', &
         'pol.e_pol', 'pol.run_e_pol']
    real(real64), allocatable :: x(:), y(:)
    real(real64) :: d, scale
    integer :: m, i, n
    m = nint(num(fa, 'pol.n_sites'))
    call expect(nint(num(fb, 'pol.n_sites')) == m, 'the same sites')
    call expect(text(fa, 'final_position_checksum') == text(fb, 'final_position_checksum'), 'same configurations')
    call expect(text(fa, 'pol.updates') == text(fb, 'pol.updates'), 'the same number of dipole updates')
    do i = 1, size(keys)
      n = merge(3 * m, 1, i <= 2)
      if (n == 1) then
        x = [num(fa, trim(keys(i)))]; y = [num(fb, trim(keys(i)))]
      else
        x = nums(fa, trim(keys(i)), n); y = nums(fb, trim(keys(i)), n)
      end if
      d = maxval(abs(x - y)); scale = maxval(abs(x))
      print '(a,es10.3,a,es10.3)', trim(keys(i)) // ': max |A - B| ', d, ', max |A| ', scale
      if (tol == 0) then
        call expect(all(x == y), trim(keys(i)) // ' bitwise identical')
      else
        call expect(d <= tol * scale, trim(keys(i)) // ' within ' // trim(tol_text) // ' x max |A|')
      end if
    end do
  end subroutine

  subroutine pol_dipoles(res, key, key_err, r_mu, zmax, nout, zmax_t, nout_t)
    character(len=*), intent(in) :: res, key, key_err, zmax_t, nout_t
    real(real64), intent(in) :: r_mu(:), zmax
    integer, intent(in) :: nout
    real(real64), allocatable :: mu(:), err(:), z(:)
    integer :: nz3
    mu = nums(res, key, size(r_mu)); err = nums(res, key_err, size(r_mu))
    z = (mu - r_mu) / err
    nz3 = count(abs(z) > 3)
    print '(a,es10.3,a,es10.3,a,es10.3,a,f8.3,a,i0,a,i0,a,f8.4)', key // ': max |reference| ', maxval(abs(r_mu)), &
         ', error bars ', minval(err), ' to ', maxval(err), '; max |z| ', maxval(abs(z)), ', |z| > 3: ', nz3, &
         ' of ', size(r_mu), ', chi^2 per component ', sum(z**2) / size(r_mu)
    call expect(all(err > 0), key // ': every error bar > 0')
    call expect(maxval(abs(z)) <= zmax, key // ': every component within ' // trim(zmax_t) // ' error bars')
    call expect(nz3 <= nout, key // ': at most ' // trim(nout_t) // ' components beyond 3 error bars')
  end subroutine

  subroutine pol_energy(res, key, key_err, r)
    character(len=*), intent(in) :: res, key, key_err
    real(real64), intent(in) :: r
    real(real64) :: e, se
    e = num(res, key); se = num(res, key_err)
    print '(a,es20.12,a,es10.3,a,es20.12,a,f8.3)', key // ' ', e, ' +- ', se, '  reference ', r, '  z ', (e - r) / se
    call expect(se > 0 .and. abs(e - r) <= 3 * se, key // ' within 3 error bars of the reference')
  end subroutine

  subroutine forces_close(fa, fb, tol, tol_text)
    character(len=*), intent(in) :: fa, fb, tol_text
    real(real64), intent(in) :: tol
    character(len=32), parameter :: keys(4) = [character(len=32) :: 'forces.site_force', 'forces.site_force_error', &
         'forces.sum_site_force', 'forces.sum_site_force_error']
    real(real64), allocatable :: x(:), y(:)
    real(real64) :: scale, d
    integer :: m, i, n
    m = nint(num(fa, 'forces.n_sites'))
    call expect(nint(num(fb, 'forces.n_sites')) == m, 'the same sites')
    call expect(text(fa, 'final_position_checksum') == text(fb, 'final_position_checksum'), 'same configurations')
    scale = maxval(abs(nums(fa, 'forces.site_force', 3 * m)))
    do i = 1, size(keys)
      n = merge(3 * m, 3, i <= 2)
      x = nums(fa, trim(keys(i)), n); y = nums(fb, trim(keys(i)), n)
      d = maxval(abs(x - y))
      print '(a,es10.3,a,es10.3)', trim(keys(i)) // ': max |A - B| ', d, ', max |F_A| ', scale
      if (tol == 0) then
        call expect(all(x == y), trim(keys(i)) // ' bitwise identical')
      else
        call expect(d <= tol * scale, trim(keys(i)) // ' within ' // trim(tol_text) // ' x max |F_A|')
      end if
    end do
  end subroutine

  ! n numbers of the (possibly nested) array at key.
  function nums(path, key, n) result(x)
    character(len=*), intent(in) :: path, key
    integer, intent(in) :: n
    real(real64) :: x(n)
    character(len=:), allocatable :: t
    integer :: i, ios
    t = text(path, key)
    do i = 1, len(t)
      if (t(i:i) == '[' .or. t(i:i) == ']' .or. t(i:i) == ',') t(i:i) = ' '
    end do
    read(t, *, iostat=ios) x
    if (ios /= 0) then
      print '(a,i0,a)', 'FAILED: "' // trim(key) // '" in ' // trim(path) // ' does not hold ', n, ' numbers'
      call exit(1)
    end if
  end function

  subroutine offset_args(x, y, off, soff)
    character(len=*), intent(in) :: x, y
    real(real64), intent(out) :: off, soff
    off = 0; soff = 0
    if (len_trim(x) > 0) read(x, *) off
    if (len_trim(y) > 0) read(y, *) soff
  end subroutine

  subroutine check_total(ea, sa, r, off, soff, tol, tol_text)
    real(real64), intent(in) :: ea, sa, r, off, soff, tol
    character(len=*), intent(in) :: tol_text
    real(real64) :: s
    s = sqrt(sa**2 + soff**2)
    print '(a,f16.8,a,f12.8,a,f16.8,a,f10.6,a,f10.6,a,f8.2,a)', 'VMC ', ea, ' +- ', sa, '  reference ', r, &
         '  expected offset ', off, ' +- ', soff, '  (', abs(ea - r - off) / s, ' combined sigma)'
    call expect(abs(ea - r - off) <= 3 * s, 'VMC energy - reference within 3 combined error bars of the offset')
    call expect(sa <= tol, 'error bar <= ' // trim(tol_text))
  end subroutine

  ! The error bar is only as good as its blocking: the Lee-Needs-Towler criterion met, >= 8 blocks left
  ! (a fall-back to the largest blocks leaves 2 or 3).
  subroutine check_reblock(path)
    character(len=*), intent(in) :: path
    print '(a,a,a,a,a,a)', 'reblocking: level ', text(path, 'reblock_level'), ', blocks ', &
         text(path, 'reblock_blocks'), ', converged ', text(path, 'reblock_converged')
    call expect(text(path, 'reblock_converged') == 'true', 'reblocking criterion met (' // trim(path) // ')')
    call expect(num(path, 'reblock_blocks') >= 8, 'at least 8 blocks at the chosen block length')
  end subroutine

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) then
      print '(a)', 'ok:     ' // what
    else
      print '(a)', 'FAILED: ' // what
      call exit(1)
    end if
  end subroutine

  ! The text after "key": up to the next ',' '}' or end of line (a whole [...] for arrays). A dotted key
  ! (parts.kinetic) finds each component after the previous one.
  function text(path, key) result(t)
    character(len=*), intent(in) :: path, key
    character(len=:), allocatable :: t
    character(len=:), allocatable :: all, k, rest
    integer :: u, ios, i, j, p, dot, sz, depth
    open(newunit=u, file=trim(path), status='old', action='read', access='stream', form='unformatted', iostat=ios)
    if (ios /= 0) then
      print '(a)', 'FAILED: cannot open ' // trim(path)
      call exit(1)
    end if
    inquire(unit=u, size=sz)
    allocate(character(len=sz + 2) :: all)
    all(:) = ' '   ! not 'all = ': that would reallocate it to one character
    read(u, iostat=ios) all(1:sz)
    close(u)
    do i = 1, sz
      if (all(i:i) == new_line('a') .or. all(i:i) == achar(13) .or. all(i:i) == achar(9)) all(i:i) = ' '
    end do
    rest = trim(key); p = 1
    do
      dot = index(rest, '.')
      k = rest
      if (dot > 0) k = rest(1:dot - 1)
      i = index(all(p:), '"' // k // '":')
      if (i == 0) then
        print '(a)', 'FAILED: no key "' // trim(key) // '" in ' // trim(path)
        call exit(1)
      end if
      p = p + i - 1 + len(k) + 3
      if (dot == 0) exit
      rest = rest(dot + 1:)
    end do
    i = p
    if (adjustl(all(i:i+1)) == '[' .or. all(i:i) == '[' .or. all(i+1:i+1) == '[') then
      j = index(all(i:), '[') + i - 1   ! the matching ']' (arrays may nest)
      depth = 0
      do
        if (all(j:j) == '[') depth = depth + 1
        if (all(j:j) == ']') depth = depth - 1
        if (depth == 0 .or. j == len(all)) exit
        j = j + 1
      end do
    else
      j = scan(all(i:), ',}') + i - 2
    end if
    t = trim(adjustl(all(i:j)))
  end function

  real(real64) function num(path, key)
    character(len=*), intent(in) :: path, key
    integer :: ios
    character(len=:), allocatable :: t
    t = adjustl(text(path, key))
    if (t(1:1) == '[') t = t(2:)   ! an array's first element
    read(t, *, iostat=ios) num
    if (ios /= 0) then
      print '(a)', 'FAILED: "' // trim(key) // '" in ' // trim(path) // ' is not a number'
      call exit(1)
    end if
  end function

end program vmc_check
