! vmc_pol.f90 -- polarizable MM (key pol_file): the induced dipoles of the .pot file's sites from the electrons'
! block-averaged field plus the QM nuclei's, the self-consistent loop, and the QMC/MMpol energy.
! The loop (pol_mode = 'scf'): pol_blocks blocks are sampled with the dipoles held fixed, their mean field at the
! sites (the site accumulator's, vmc_forces' site_field_block) gives new dipoles through qmmm_pol_solve, which go
! into the field (field_set_induced) so the electrons feel them; it stops when the dipoles changed less than their
! statistical error (rms of the change <= pol_converge x the rms of its error bar, from the second update on) or
! after pol_max_updates
! updates, and the run's n_blocks are then sampled with the dipoles fixed. pol_mode = 'first': one update only.
! Error bars: every block's field is solved too (the dipoles are linear in the field, so the mean of the blocks'
! dipoles is the dipoles of the mean field); their spread over the blocks gives the dipoles' and E_pol's errors.
! Those solves start from the field's dipoles, so the solve's start residual is the block's deviation from the
! field they were solved from (its noise; ~1e-2 of the whole field with 3,000 sites), and they stop once that
! deviation is solved to DEV_TOL: at DEV_TOL times its share of the field, at most BLOCK_TOL, at least
! pol_tolerance. That error adds in quadrature to the blocks' spread (~1e-6 of an error bar). Measured with 3,000
! sites: 5 iterations a block instead of 10, the E_pol error bar 1.73946e-4 against 1.73977e-4. The blocks before
! the first update (no dipoles solved yet) and the dipoles the run keeps (every update's, the fixed run's) are
! solved to pol_tolerance.
! MPI: rank 0 holds the block means (summed over ranks in rank order), solves, and broadcasts the dipoles and the
! decision, so every rank puts the same bits into its field.
! Energy (docs/user-guide/polarizable.md): with the dipoles mu fixed while sampling, the local energy holds the
! dipoles' interaction with the QM charges, -mu . E_QM; the total is the polarizable-embedding functional
!     E = <E_L> + 1/2 mu . E_QM,fix - 1/2 mu . E_MM = <E_QM + E_es> + E_pol,  E_pol = -1/2 mu . (E_QM,fix + E_MM)
! with E_QM,fix the field mu was solved from: stationary in mu, so its error bar is <E_L>'s alone.
module vmc_pol
  use, intrinsic :: iso_fortran_env, only: real64, int64, output_unit
  use qmmm_accel
  use vmc_util
  use vmc_par
  use vmc_input, only: input_t
  use vmc_field, only: env_field_t, field_set_induced
  use vmc_json, only: json_writer
  implicit none
  private
  public :: pol_t, pol_init, pol_block, pol_update, pol_finish, pol_report, pol_json, NHIST

  real(real64), parameter :: BLOCK_TOL = 1e-5_real64, DEV_TOL = 1e-3_real64
  integer, parameter :: NHIST = 7   ! per update: blocks, rms |mu|, rms change, change / error, E_pol, iterations, residual

  type pol_t
    logical :: on = .false.
    character(len=16) :: mode = 'scf'
    integer :: max_updates = 0, n_updates = 0
    real(real64) :: converge = 2                      ! key pol_converge
    real(real64) :: tol = 1e-8                        ! key pol_tolerance
    logical :: converged = .false.
    integer(int64) :: m = 0                           ! sites (the field's MM charges)
    real(real64), allocatable :: mu(:,:)              ! every rank: the induced dipoles in the field (3, m)
    real(real64), allocatable :: e_mm(:,:)            ! the permanent field at the sites
    ! rank 0: the dipoles' error bars, the field they were solved from, the solve's statistics
    real(real64), allocatable :: mu_err(:,:), e_fix(:,:)
    type(qmmm_pol_stats) :: st_fix
    real(real64) :: e_pol_fix_err = 0
    ! rank 0, blocks since the last update (or of the fixed run): running means and squared deviations (Welford)
    integer :: nb = 0
    real(real64), allocatable :: e_mean(:,:), mu_mean(:,:), mu_m2(:,:)
    real(real64) :: epol_mean = 0, epol_m2 = 0, eint_mean = 0, eint_m2 = 0
    real(real64), allocatable :: hist(:,:)            ! (NHIST, updates)
    ! rank 0, after pol_finish: the fixed run's field solved again (the self-consistency check), the dipoles'
    ! interaction with the QM charges, the energy and its parts
    real(real64), allocatable :: mu_run(:,:), mu_run_err(:,:)
    type(qmmm_pol_stats) :: st_run
    real(real64) :: e_pol_run_err = 0, e_int = 0, e_int_err = 0, e_total = 0, e_total_err = 0
    real(real64) :: e_es = 0, e_es_err = 0, run_ratio = 0
  end type

contains

  subroutine check(st, what)
    integer, intent(in) :: st
    character(len=*), intent(in) :: what
    if (st /= QMMM_SUCCESS) call die(what // ': ' // qmmm_status_string(st) // ': ' // qmmm_error_message())
  end subroutine

  subroutine set_tolerance(fld, tol)
    type(env_field_t), intent(in) :: fld
    real(real64), intent(in) :: tol
    call check(qmmm_pol_set_tolerance(fld%pol, tol), 'qmmm_pol_set_tolerance')
  end subroutine

  subroutine pol_init(pol, fld, inp)
    type(pol_t), intent(out) :: pol
    type(env_field_t), intent(in) :: fld
    type(input_t), intent(in) :: inp
    integer :: st
    pol%on = fld%pol_on
    if (.not. pol%on) return
    pol%mode = inp%pol_mode
    pol%max_updates = merge(inp%pol_max_updates, 1, inp%pol_mode == 'scf')
    pol%converge = inp%pol_converge
    pol%tol = inp%pol_tolerance
    pol%m = fld%n_charges
    allocate(pol%mu(3, pol%m), pol%e_mm(3, pol%m), source=0.0_real64)
    st = qmmm_pol_static_field(fld%pol, pol%e_mm)
    call check(st, 'qmmm_pol_static_field')
    if (par_root) allocate(pol%hist(NHIST, pol%max_updates), source=0.0_real64)
    call reset(pol)
  end subroutine

  subroutine reset(pol)
    type(pol_t), intent(inout) :: pol
    pol%nb = 0
    if (.not. par_root) return
    if (.not. allocated(pol%e_mean)) allocate(pol%e_mean(3, pol%m), pol%mu_mean(3, pol%m), pol%mu_m2(3, pol%m))
    pol%e_mean = 0; pol%mu_mean = 0; pol%mu_m2 = 0
    pol%epol_mean = 0; pol%epol_m2 = 0; pol%eint_mean = 0; pol%eint_m2 = 0
  end subroutine

  ! Rank 0: one block's mean field of the electrons at the sites, e_el(3, n_sites) (site_field_block), plus the QM
  ! nuclei's: its dipoles (a solve), E_pol and the fixed dipoles' interaction -mu . E_QM into the running means.
  subroutine pol_block(pol, fld, e_el)
    type(pol_t), intent(inout) :: pol
    type(env_field_t), intent(in) :: fld
    real(real64), intent(in) :: e_el(:,:)
    real(real64), allocatable :: e(:,:), mu_b(:,:), d(:,:)
    type(qmmm_pol_stats) :: st_b
    real(real64) :: x, dx, tol, share
    integer :: st
    if (.not. (pol%on .and. par_root)) return
    e = e_el(:, 1:pol%m) + fld%e_qm_sites(:, 1:pol%m)
    mu_b = pol%mu  ! the start (start_from_mu, vmc_field's pol_read)
    tol = pol%tol
    if (allocated(pol%e_fix)) then  ! the deviation's share of the field: the start's relative residual
      share = norm2(e - pol%e_fix) / max(norm2(e + pol%e_mm), tiny(1.0_real64))
      tol = max(pol%tol, min(BLOCK_TOL, DEV_TOL * share))
    end if
    call set_tolerance(fld, tol)
    st = qmmm_pol_solve(fld%pol, mu_b, e_ext=e, stats=st_b)
    call check(st, 'qmmm_pol_solve (a block''s field at the sites)')
    pol%nb = pol%nb + 1
    pol%e_mean = pol%e_mean + (e - pol%e_mean) / pol%nb
    d = mu_b - pol%mu_mean
    pol%mu_mean = pol%mu_mean + d / pol%nb
    pol%mu_m2 = pol%mu_m2 + d * (mu_b - pol%mu_mean)
    dx = st_b%e_pol - pol%epol_mean
    pol%epol_mean = pol%epol_mean + dx / pol%nb
    pol%epol_m2 = pol%epol_m2 + dx * (st_b%e_pol - pol%epol_mean)
    x = -sum(pol%mu * e)
    dx = x - pol%eint_mean
    pol%eint_mean = pol%eint_mean + dx / pol%nb
    pol%eint_m2 = pol%eint_m2 + dx * (x - pol%eint_mean)
  end subroutine

  ! After the blocks of one update (collective): rank 0 solves the blocks' mean field, compares the new dipoles with
  ! the last ones, and broadcasts them and the decision; every rank puts them into its field. done: no more updates.
  subroutine pol_update(pol, fld, done)
    type(pol_t), intent(inout) :: pol
    type(env_field_t), intent(inout) :: fld
    logical, intent(out) :: done
    real(real64), allocatable :: mu_new(:,:), err(:,:), buf(:)
    real(real64) :: change, ratio
    integer :: st, k
    k = pol%n_updates + 1
    allocate(buf(3 * pol%m + 1))
    if (par_root) then
      mu_new = pol%mu
      call set_tolerance(fld, pol%tol)
      st = qmmm_pol_solve(fld%pol, mu_new, e_ext=pol%e_mean, stats=pol%st_fix)
      call check(st, 'qmmm_pol_solve (update ' // itoa(k) // ')')
      err = sqrt(pol%mu_m2 / (real(pol%nb, real64) * (pol%nb - 1)))
      change = sqrt(sum((mu_new - pol%mu)**2) / (3 * pol%m))
      ! The change's error: the new dipoles' and the last ones' (independent blocks); none before the first.
      if (k == 1) then
        ratio = huge(1.0_real64)
      else
        ratio = sqrt(sum((mu_new - pol%mu)**2) / max(sum(err**2 + pol%mu_err**2), tiny(1.0_real64)))
      end if
      pol%hist(:, k) = [real(pol%nb, real64), sqrt(sum(mu_new**2) / (3 * pol%m)), change, &
           merge(-1.0_real64, ratio, k == 1), pol%st_fix%e_pol, real(pol%st_fix%iterations, real64), &
           pol%st_fix%residual]
      write(output_unit, '(a)') '  ' // right(itoa(k), 6) // ' ' // right(itoa(pol%nb), 6) // ' ' // &
           sci(pol%hist(2, k)) // ' ' // sci(change) // ' ' // &
           merge('         -', fixed(ratio, 10, 3), k == 1) // ' ' // fixed(pol%st_fix%e_pol, 16, 9) // &
           ' +- ' // fixed(sqrt(pol%epol_m2 / (real(pol%nb, real64) * (pol%nb - 1))), 12, 9) // ' ' // &
           right(itoa(pol%st_fix%iterations), 6)
      pol%converged = k > 1 .and. ratio <= pol%converge
      buf(1:3 * pol%m) = reshape(mu_new, [3 * pol%m])
      buf(3 * pol%m + 1) = merge(1.0_real64, 0.0_real64, pol%converged)
      pol%mu_err = err
      pol%e_fix = pol%e_mean
      pol%e_pol_fix_err = sqrt(pol%epol_m2 / (real(pol%nb, real64) * (pol%nb - 1)))
    end if
    call par_bcast_real(buf)
    pol%mu = reshape(buf(1:3 * pol%m), [3_int64, pol%m])
    pol%converged = buf(3 * pol%m + 1) /= 0
    pol%n_updates = k
    call field_set_induced(fld, pol%mu)
    done = pol%converged .or. k >= pol%max_updates
    call reset(pol)
  end subroutine

  ! Rank 0, after the fixed run's blocks: its field solved (the dipoles it implies, E_pol), the fixed dipoles'
  ! interaction with the QM charges, the energy and its parts; the induced dipoles' force on the QM nuclei joins
  ! fld%f_qm (key forces). e_mean, e_err: <E_L> and its error; env_mean, env_err: the electrons' environment part;
  ! n_blocks: the fixed run's blocks.
  subroutine pol_finish(pol, fld, e_mean, e_err, env_mean, env_err)
    type(pol_t), intent(inout) :: pol
    type(env_field_t), intent(inout) :: fld
    real(real64), intent(in) :: e_mean, e_err, env_mean, env_err
    real(real64) :: d(3), r
    integer :: st, a
    integer(int64) :: k
    if (.not. (pol%on .and. par_root)) return
    pol%mu_run = pol%mu
    call set_tolerance(fld, pol%tol)
    st = qmmm_pol_solve(fld%pol, pol%mu_run, e_ext=pol%e_mean, stats=pol%st_run)
    call check(st, 'qmmm_pol_solve (the fixed run''s field)')
    pol%mu_run_err = sqrt(pol%mu_m2 / (real(pol%nb, real64) * (pol%nb - 1)))
    pol%e_pol_run_err = sqrt(pol%epol_m2 / (real(pol%nb, real64) * (pol%nb - 1)))
    pol%run_ratio = sqrt(sum((pol%mu_run - pol%mu)**2) / max(sum(pol%mu_run_err**2 + pol%mu_err**2), &
         tiny(1.0_real64)))
    pol%e_int = pol%eint_mean
    pol%e_int_err = sqrt(pol%eint_m2 / (real(pol%nb, real64) * (pol%nb - 1)))
    pol%e_total = e_mean - pol%st_fix%e_pol_ext + pol%st_fix%e_pol_mm
    pol%e_total_err = e_err
    pol%e_es = env_mean + fld%e_nuc_env - pol%e_int
    pol%e_es_err = sqrt(env_err**2 + pol%e_int_err**2)
    if (.not. fld%forces) return
    ! The induced dipoles' field at each QM nucleus, sum_k (3 (mu_k . u) u - mu_k) / d^3, u = (R_A - r_k) / d, in
    ! double in site order (the permanent dipoles' term is in f_qm already, from the field).
    do a = 1, size(fld%qm_z)
      do k = 1, pol%m
        d = fld%qm_xyz(:, a) - fld%site_xyz(:, k)
        r = norm2(d)
        d = d / r
        fld%f_qm(:, a) = fld%f_qm(:, a) + fld%qm_z(a) * (3 * dot_product(pol%mu(:, k), d) * d - pol%mu(:, k)) / r**3
      end do
    end do
  end subroutine

  ! A number in 12 characters, scientific.
  function sci(x) result(s)
    real(real64), intent(in) :: x
    character(len=12) :: s
    write(s, '(es12.4)') x
  end function

  ! Rank 0: the energy with its parts, the convergence and the dipoles' self-consistency check.
  subroutine pol_report(pol, fld)
    type(pol_t), intent(in) :: pol
    type(env_field_t), intent(in) :: fld
    if (.not. pol%on) return
    write(output_unit, '(a)') ''
    write(output_unit, '(a,i0,a,i0,a)') '  polarizable MM: ', pol%m, ' sites (', fld%n_polarizable, &
         ' polarizable) from ' // trim(fld%pol_file) // ', mode ''' // trim(pol%mode) // ''''
    if (pol%mode == 'scf') then
      if (pol%converged) then
        write(output_unit, '(a,i0,a)') '  dipoles converged after ', pol%n_updates, ' updates'
      else
        write(output_unit, '(a,i0,a)') '  WARNING: the dipoles did not converge in ', pol%n_updates, &
             ' updates (key pol_max_updates): the last ones were used'
      end if
    end if
    write(output_unit, '(a)') '  energy (QMC/MMpol) ' // fixed(pol%e_total, 19, 10) // ' +- ' // &
         fixed(pol%e_total_err, 14, 10) // '  = <E_L> + 1/2 mu.E_QM - 1/2 mu.E_MM'
    write(output_unit, '(a)') '    electrostatic (permanent multipoles - QM)  ' // fixed(pol%e_es, 16, 9) // ' +- ' // &
         fixed(pol%e_es_err, 12, 9)
    write(output_unit, '(a)') '    induction E_pol = -1/2 mu.(E_QM + E_MM)    ' // fixed(pol%st_fix%e_pol, 16, 9) // &
         ' +- ' // fixed(pol%e_pol_fix_err, 12, 9)
    write(output_unit, '(a)') '      of which -1/2 mu.E_QM, -1/2 mu.E_MM      ' // fixed(pol%st_fix%e_pol_ext, 16, 9) // &
         fixed(pol%st_fix%e_pol_mm, 16, 9)
    write(output_unit, '(a)') '    induced dipoles - QM in <E_L>, -mu.E_QM    ' // fixed(pol%e_int, 16, 9) // ' +- ' // &
         fixed(pol%e_int_err, 12, 9)
    write(output_unit, '(a)') '  the fixed run''s field solved again: E_pol ' // fixed(pol%st_run%e_pol, 16, 9) // &
         ' +- ' // fixed(pol%e_pol_run_err, 12, 9) // ', dipoles'' rms change / error ' // fixed(pol%run_ratio, 8, 3)
    if (fld%forces) write(output_unit, '(a)') '  (forces below: on the QM nuclei with the induced dipoles'' field; ' // &
         'on the sites q E + (mu.grad) E with the dipoles of the run)'
  end subroutine

  ! The JSON object "pol".
  subroutine pol_json(pol, fld, js)
    type(pol_t), intent(in) :: pol
    type(env_field_t), intent(in) :: fld
    type(json_writer), intent(inout) :: js
    if (.not. pol%on) return
    call js%begin_object('pol')
    call js%put('units', 'hartree, e bohr (dipoles), hartree/(e bohr) (fields)')
    call js%put('pot_file', trim(fld%pol_file))
    call js%put('mode', trim(pol%mode))
    call js%put('n_sites', pol%m)
    call js%put('n_polarizable', fld%n_polarizable)
    call js%put('updates', pol%n_updates)
    call js%put('converged', pol%converged)
    call js%put('history_columns', 'blocks, rms mu, rms change, change / error (-1: first update), e_pol, ' // &
         'solver iterations, residual')
    call js%put('history', reshape(pol%hist(:, 1:pol%n_updates), [NHIST * pol%n_updates]))
    call js%put('energy', pol%e_total)
    call js%put('energy_error', pol%e_total_err)
    call js%put('e_electrostatic', pol%e_es)
    call js%put('e_electrostatic_error', pol%e_es_err)
    call js%put('e_pol', pol%st_fix%e_pol)
    call js%put('e_pol_error', pol%e_pol_fix_err)
    call js%put('e_pol_qm', pol%st_fix%e_pol_ext)
    call js%put('e_pol_mm', pol%st_fix%e_pol_mm)
    call js%put('e_induced_qm', pol%e_int)
    call js%put('e_induced_qm_error', pol%e_int_err)
    call js%put('mu', reshape(pol%mu, [3 * pol%m]))
    call js%put('mu_error', reshape(pol%mu_err, [3 * pol%m]))
    call js%put('field_qm', reshape(pol%e_fix, [3 * pol%m]))
    call js%put('field_mm', reshape(pol%e_mm, [3 * pol%m]))
    call js%put('run_blocks', pol%nb)
    call js%put('run_mu', reshape(pol%mu_run, [3 * pol%m]))
    call js%put('run_mu_error', reshape(pol%mu_run_err, [3 * pol%m]))
    call js%put('run_e_pol', pol%st_run%e_pol)
    call js%put('run_e_pol_error', pol%e_pol_run_err)
    call js%put('run_field_qm', reshape(pol%e_mean, [3 * pol%m]))
    call js%put('run_change_ratio', pol%run_ratio)
    call js%end()
  end subroutine

end module vmc_pol
