! vmc_forces.f90 -- forces on the environment (key forces): block means of the electrons' field at every site,
! their error bars, the forces F_k = Q_k (E_electrons + E_QM nuclei) on the sites, the environment's force on
! the QM nuclei, and their sums; printed (largest ten) and written into the JSON.
! Each block every rank reads its accumulator (the library keeps the sums where it computes; one read per block,
! not per step), rank 0 adds the ranks' sums in rank order and divides by the block's configurations
! (measurements x walkers): the block mean of the electrons' field per configuration, folded into a running
! mean and sum of squared deviations per component (Welford: memory 6 doubles a site, whatever n_blocks). Error
! bars are the standard errors of the block means: they are independent when a block (steps_per_block /
! energy_every measurements) is at least the block length the energy's reblocking chose (vmc_stats), which the
! report states (and warns of otherwise).
module vmc_forces
  use, intrinsic :: iso_fortran_env, only: real64, int64, output_unit
  use vmc_util
  use vmc_stats, only: mean_err
  use vmc_par
  use vmc_field, only: env_field_t, field_forces_take
  use vmc_json, only: json_writer
  implicit none
  private
  public :: forces_t, forces_init, forces_block, forces_finish, forces_report, forces_json, site_field_block

  type forces_t
    logical :: on = .false.
    integer(int64) :: m = 0                          ! sites
    integer :: nb = 0                                ! blocks so far
    real(real64), allocatable :: mean(:,:), m2(:,:)  ! rank 0: (3, m) running mean of the block means, squares
    real(real64), allocatable :: sum_series(:,:)     ! rank 0: (3, blocks) sum_k Q_k E_electrons(k) per block
    real(real64), allocatable :: e_el(:,:), e_el_err(:,:)   ! rank 0, after forces_finish: mean, error (3, m)
    real(real64), allocatable :: f(:,:), f_err(:,:)  ! force on each site (hartree/bohr) and its error bar
    real(real64) :: sum_f(3) = 0, sum_f_err(3) = 0, sum_qm(3) = 0
    logical :: independent = .true.                  ! blocks at least the energy's reblocking length
  end type

contains

  subroutine forces_init(frc, fld, n_blocks)
    type(forces_t), intent(out) :: frc
    type(env_field_t), intent(in) :: fld
    integer, intent(in) :: n_blocks
    frc%on = fld%forces
    if (.not. frc%on) return
    frc%m = fld%n_sites
    if (par_root) allocate(frc%mean(3, frc%m), frc%m2(3, frc%m), frc%sum_series(3, n_blocks), source=0.0_real64)
  end subroutine

  ! Block ib's mean of the electrons' field at the sites, esum(3, n_sites) on rank 0 (the accumulator is fed for
  ! key forces or pol_file): every rank's sums to rank 0, added in rank order, divided by the block's
  ! configurations (n_meas: the measurements with the site field in a block). Collective.
  subroutine site_field_block(fld, ib, n_meas, nw_total, esum)
    type(env_field_t), intent(inout) :: fld
    integer, intent(in) :: ib, n_meas, nw_total
    real(real64), allocatable, intent(out) :: esum(:,:)
    real(real64), allocatable :: all(:)
    integer(int64) :: n_calls, n3
    integer :: r
    if (.not. fld%accum) return
    allocate(esum(3, fld%n_sites))
    call field_forces_take(fld, esum, n_calls)
    if (n_calls /= n_meas) call die('site field: the accumulator holds ' // itoa(n_calls) // ' calls for ' // &
         itoa(n_meas) // ' measurements in block ' // itoa(ib))
    n3 = 3 * fld%n_sites
    allocate(all(merge(n3 * par_size, 1_int64, par_root)))
    call par_gatherv_real(reshape(esum, [n3]), all)
    if (.not. par_root) return
    esum = reshape(all(1:n3), [3_int64, fld%n_sites])
    do r = 2, par_size
      esum = esum + reshape(all((r - 1) * n3 + 1:r * n3), [3_int64, fld%n_sites])
    end do
    esum = esum / (real(n_meas, real64) * nw_total)
  end subroutine

  ! Block ib's mean field at the sites (rank 0, from site_field_block) into the running means.
  subroutine forces_block(frc, fld, ib, esum)
    type(forces_t), intent(inout) :: frc
    type(env_field_t), intent(in) :: fld
    integer, intent(in) :: ib
    real(real64), intent(in) :: esum(:,:)
    real(real64), allocatable :: d(:,:)
    integer :: c
    if (.not. (frc%on .and. par_root)) return
    frc%nb = frc%nb + 1
    d = esum - frc%mean
    frc%mean = frc%mean + d / frc%nb
    frc%m2 = frc%m2 + d * (esum - frc%mean)
    do c = 1, 3
      frc%sum_series(c, ib) = sum(fld%site_q * esum(c, :))
    end do
  end subroutine

  ! Rank 0: means and error bars; level: the energy's reblocking level (block length 2^level measurements).
  subroutine forces_finish(frc, fld, n_meas, level)
    type(forces_t), intent(inout) :: frc
    type(env_field_t), intent(in) :: fld
    integer, intent(in) :: n_meas, level
    integer(int64) :: k
    integer :: c
    if (.not. (frc%on .and. par_root)) return
    frc%e_el = frc%mean
    frc%e_el_err = sqrt(frc%m2 / (real(frc%nb, real64) * (frc%nb - 1)))
    allocate(frc%f(3, frc%m), frc%f_err(3, frc%m))
    do k = 1, frc%m
      frc%f(:, k) = fld%site_q(k) * (frc%e_el(:, k) + fld%e_qm_sites(:, k))
      frc%f_err(:, k) = abs(fld%site_q(k)) * frc%e_el_err(:, k)
    end do
    ! The sum over the sites: its own series of block values (the sites' fields are correlated).
    do c = 1, 3
      call mean_err(frc%sum_series(c, 1:frc%nb), frc%sum_f(c), frc%sum_f_err(c))
      frc%sum_f(c) = frc%sum_f(c) + sum(fld%site_q * fld%e_qm_sites(c, :))
    end do
    frc%sum_qm = sum(fld%f_qm, dim=2)
    frc%independent = n_meas >= 2**level
  end subroutine

  ! The printed summary: the ten largest forces on sites, the QM nuclei's, the sums.
  subroutine forces_report(frc, fld)
    type(forces_t), intent(in) :: frc
    type(env_field_t), intent(in) :: fld
    integer(int64), allocatable :: order(:)
    real(real64), allocatable :: mag(:)
    integer(int64) :: i, j, k
    integer :: a
    if (.not. frc%on) return
    write(output_unit, '(a)') ''
    write(output_unit, '(a,i0,a)') '  forces (hartree/bohr) on the ', frc%m, ' environment sites (' // &
         trim(merge('MM charges', 'cells     ', fld%n_charges > 0)) // ', then nuclei), the largest ten |F|'
    write(output_unit, '(a)') '  (the electrons'' field: block means with error bars; the QM nuclei''s: exact)'
    write(output_unit, '(a)') '      site      q (e)              Fx              Fy              Fz' // &
         '    error (x, y, z)'
    mag = sqrt(sum(frc%f**2, dim=1))
    allocate(order(min(10_int64, frc%m)))
    do i = 1, size(order, kind=int64)   ! selection of the largest: ties by site index
      j = 0
      do k = 1, frc%m
        if (any(order(1:i - 1) == k)) cycle
        if (j == 0) then
          j = k
        else if (mag(k) > mag(j)) then
          j = k
        end if
      end do
      order(i) = j
      k = j
      write(output_unit, '(a)') '  ' // right(itoa(k), 8) // ' ' // fixed(fld%site_q(k), 10, 4) // ' ' // &
           fixed(frc%f(1, k), 16, 9) // fixed(frc%f(2, k), 16, 9) // fixed(frc%f(3, k), 16, 9) // '  ' // &
           fixed(frc%f_err(1, k), 12, 9) // fixed(frc%f_err(2, k), 12, 9) // fixed(frc%f_err(3, k), 12, 9)
    end do
    write(output_unit, '(a)') '  sum on the sites    ' // fixed(frc%sum_f(1), 16, 9) // fixed(frc%sum_f(2), 16, 9) // &
         fixed(frc%sum_f(3), 16, 9) // '  ' // fixed(frc%sum_f_err(1), 12, 9) // fixed(frc%sum_f_err(2), 12, 9) // &
         fixed(frc%sum_f_err(3), 12, 9)
    write(output_unit, '(a)') '  environment on the QM nuclei (exact):'
    do a = 1, size(fld%f_qm, 2)
      write(output_unit, '(a)') '  ' // right(itoa(a), 8) // repeat(' ', 12) // &
           fixed(fld%f_qm(1, a), 16, 9) // fixed(fld%f_qm(2, a), 16, 9) // fixed(fld%f_qm(3, a), 16, 9)
    end do
    write(output_unit, '(a)') '  sum on the QM nuclei' // fixed(frc%sum_qm(1), 16, 9) // &
         fixed(frc%sum_qm(2), 16, 9) // fixed(frc%sum_qm(3), 16, 9)
    if (.not. frc%independent) write(output_unit, '(a)') '  WARNING: a block (steps_per_block / energy_every ' // &
         'measurements) is shorter than the energy''s reblocking length: the forces'' error bars are too small'
  end subroutine

  ! The JSON object "forces": per site (flat x y z lists) the force, its error bar, the electrons' mean field and
  ! its error bar, the QM nuclei's field; the QM nuclei's forces; the sums.
  subroutine forces_json(frc, fld, js)
    type(forces_t), intent(in) :: frc
    type(env_field_t), intent(in) :: fld
    type(json_writer), intent(inout) :: js
    if (.not. frc%on) return
    call js%begin_object('forces')
    call js%put('units', 'hartree/bohr (forces), hartree/(e bohr) (fields), e (charges)')
    call js%put('n_sites', frc%m)
    call js%put('n_mm_charges', fld%n_charges)
    call js%put('n_cells', fld%n_cells)
    call js%put('n_nuclei', fld%n_nuclei)
    call js%put('blocks_independent', frc%independent)
    call js%put('site_q', fld%site_q)
    call js%put('site_force', reshape(frc%f, [3 * frc%m]))
    call js%put('site_force_error', reshape(frc%f_err, [3 * frc%m]))
    call js%put('field_electrons', reshape(frc%e_el, [3 * frc%m]))
    call js%put('field_electrons_error', reshape(frc%e_el_err, [3 * frc%m]))
    call js%put('field_qm_nuclei', reshape(fld%e_qm_sites, [3 * frc%m]))
    call js%put('qm_nuclei_force', reshape(fld%f_qm, [size(fld%f_qm)]))
    call js%put('sum_site_force', frc%sum_f)
    call js%put('sum_site_force_error', frc%sum_f_err)
    call js%put('sum_qm_nuclei_force', frc%sum_qm)
    call js%end()
  end subroutine

end module vmc_forces
