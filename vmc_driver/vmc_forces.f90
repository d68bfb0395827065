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
! Polarizable MM (pol_file): a site with dipole mu_k (permanent + induced, fixed for the run's blocks) takes
! F_k = q_k E_k + (mu_k . grad) E_k; the electrons' field gradient is summed beside their field (the accumulator's
! gradient option), the QM nuclei's is exact. The running means are then those of each block's electrons' force
! (and of its dipole term), so the error bars hold the covariance of E and grad E within a block.
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
    ! pol_file: the dipoles' term. Rank 0: running means and squares of the block means of the electrons' force
    ! (q E + (mu . grad) E), of its dipole term and of the field gradient (6, m); after forces_finish their means
    ! and errors, the dipole term with the QM nuclei's part (f_dip) and the sites' sum of the QM nuclei's part.
    logical :: dip = .false.
    real(real64), allocatable :: fel_mean(:,:), fel_m2(:,:), fd_mean(:,:), fd_m2(:,:), g_mean(:,:), g_m2(:,:)
    real(real64), allocatable :: f_dip(:,:), fd_el_err(:,:), g_el_err(:,:)
    real(real64) :: sum_qm_part(3) = 0
  end type

contains

  subroutine forces_init(frc, fld, n_blocks)
    type(forces_t), intent(out) :: frc
    type(env_field_t), intent(in) :: fld
    integer, intent(in) :: n_blocks
    frc%on = fld%forces
    if (.not. frc%on) return
    frc%m = fld%n_sites
    frc%dip = fld%pol_on
    if (par_root) allocate(frc%mean(3, frc%m), frc%m2(3, frc%m), frc%sum_series(3, n_blocks), source=0.0_real64)
    if (par_root .and. frc%dip) allocate(frc%fel_mean(3, frc%m), frc%fel_m2(3, frc%m), frc%fd_mean(3, frc%m), &
         frc%fd_m2(3, frc%m), frc%g_mean(6, frc%m), frc%g_m2(6, frc%m), source=0.0_real64)
  end subroutine

  ! (mu . grad) E for a dipole mu and the symmetric field gradient g (xx xy xz yy yz zz): component a is
  ! sum_b mu_b dE_a/dR_b.
  pure function mu_grad(mu, g) result(f)
    real(real64), intent(in) :: mu(3), g(6)
    real(real64) :: f(3)
    f(1) = mu(1) * g(1) + mu(2) * g(2) + mu(3) * g(3)
    f(2) = mu(1) * g(2) + mu(2) * g(4) + mu(3) * g(5)
    f(3) = mu(1) * g(3) + mu(2) * g(5) + mu(3) * g(6)
  end function

  ! sum_k q(k) e(:, k), each component summed in site order as sum(q * e(c, :)) does, without its three strided
  ! temporaries of n_sites.
  pure function q_dot(q, e) result(acc)
    real(real64), intent(in) :: q(:), e(:,:)
    real(real64) :: acc(3)
    integer(int64) :: k
    acc = 0
    do k = 1, size(q, kind=int64)
      acc = acc + q(k) * e(1:3, k)
    end do
  end function

  ! Block ib's mean of the electrons' field at the sites, esum(3, n_sites) on rank 0 (the accumulator is fed for
  ! key forces or pol_file), and with the accumulator's gradient option (fld%grad) its gradient, gsum(6, n_sites):
  ! every rank's sums to rank 0, added in rank order, divided by the block's configurations (n_meas: the
  ! measurements with the site field in a block). Collective. esum and gsum keep their arrays from block to block.
  ! One rank without the gradient: the sums are read into esum and divided there (the same bits as the general
  ! path, without its four arrays of 3 n_sites a block: 0.27M sites are 6.5 MB each).
  subroutine site_field_block(fld, ib, n_meas, nw_total, esum, gsum)
    type(env_field_t), intent(inout) :: fld
    integer, intent(in) :: ib, n_meas, nw_total
    real(real64), allocatable, intent(inout) :: esum(:,:)
    real(real64), allocatable, intent(inout), optional :: gsum(:,:)
    real(real64), allocatable :: all(:), v(:,:)
    integer(int64) :: n_calls, nv, n3, k
    integer :: r
    real(real64) :: den
    if (.not. fld%accum) return
    nv = merge(9, 3, fld%grad)
    den = real(n_meas, real64) * nw_total
    if (par_size == 1 .and. nv == 3) then
      if (allocated(esum)) then
        if (size(esum, 2, kind=int64) /= fld%n_sites) deallocate(esum)
      end if
      if (.not. allocated(esum)) allocate(esum(3, fld%n_sites))
      call field_forces_take(fld, esum, n_calls)
      call check_calls()
      do k = 1, fld%n_sites
        esum(:, k) = esum(:, k) / den
      end do
      return
    end if
    allocate(v(nv, fld%n_sites))
    call field_forces_take(fld, v, n_calls)
    call check_calls()
    n3 = nv * fld%n_sites
    allocate(all(merge(n3 * par_size, 1_int64, par_root)))
    call par_gatherv_real(reshape(v, [n3]), all)
    if (.not. par_root) return
    v = reshape(all(1:n3), [nv, fld%n_sites])
    do r = 2, par_size
      v = v + reshape(all((r - 1) * n3 + 1:r * n3), [nv, fld%n_sites])
    end do
    v = v / den
    esum = v(1:3, :)
    if (present(gsum) .and. fld%grad) gsum = v(4:9, :)
  contains
    subroutine check_calls()
      if (n_calls /= n_meas) call die('site field: the accumulator holds ' // itoa(n_calls) // ' calls for ' // &
           itoa(n_meas) // ' measurements in block ' // itoa(ib))
    end subroutine
  end subroutine

  ! Block ib's mean field at the sites (rank 0, from site_field_block) into the running means; with dipoles
  ! (frc%dip) also the field gradient gsum and the block's electrons' force on each site, q E + (mu . grad) E.
  subroutine forces_block(frc, fld, ib, esum, gsum)
    type(forces_t), intent(inout) :: frc
    type(env_field_t), intent(in) :: fld
    integer, intent(in) :: ib
    real(real64), intent(in) :: esum(:,:)
    real(real64), intent(in), optional :: gsum(:,:)
    real(real64), allocatable :: d(:,:), fd(:,:), fel(:,:)
    integer(int64) :: k
    integer :: c
    real(real64) :: dk
    if (.not. (frc%on .and. par_root)) return
    frc%nb = frc%nb + 1
    do k = 1, frc%m   ! Welford, element by element (no arrays of 3 m a block)
      do c = 1, 3
        dk = esum(c, k) - frc%mean(c, k)
        frc%mean(c, k) = frc%mean(c, k) + dk / frc%nb
        frc%m2(c, k) = frc%m2(c, k) + dk * (esum(c, k) - frc%mean(c, k))
      end do
    end do
    if (.not. frc%dip) then
      frc%sum_series(:, ib) = q_dot(fld%site_q, esum)
      return
    end if
    if (.not. present(gsum)) call die('forces: no field gradient at the sites in block ' // itoa(ib))
    allocate(fd(3, frc%m), source=0.0_real64)
    do k = 1, size(fld%mu, 2, kind=int64)   ! the dipole sites: the field's MM charges, the first sites
      fd(:, k) = mu_grad(fld%mu(:, k), gsum(:, k))
    end do
    fel = fd
    do c = 1, 3
      fel(c, :) = fel(c, :) + fld%site_q * esum(c, :)
      frc%sum_series(c, ib) = sum(fel(c, :))
    end do
    d = fel - frc%fel_mean
    frc%fel_mean = frc%fel_mean + d / frc%nb
    frc%fel_m2 = frc%fel_m2 + d * (fel - frc%fel_mean)
    d = fd - frc%fd_mean
    frc%fd_mean = frc%fd_mean + d / frc%nb
    frc%fd_m2 = frc%fd_m2 + d * (fd - frc%fd_mean)
    d = gsum - frc%g_mean
    frc%g_mean = frc%g_mean + d / frc%nb
    frc%g_m2 = frc%g_m2 + d * (gsum - frc%g_mean)
  end subroutine

  ! Rank 0: means and error bars; level: the energy's reblocking level (block length 2^level measurements).
  subroutine forces_finish(frc, fld, n_meas, level)
    type(forces_t), intent(inout) :: frc
    type(env_field_t), intent(in) :: fld
    integer, intent(in) :: n_meas, level
    real(real64), allocatable :: dq(:,:)
    real(real64) :: den
    integer(int64) :: k
    integer :: c
    if (.not. (frc%on .and. par_root)) return
    ! The running sums become the results in place (0.27M sites: 6.5 MB an array, whose copies and first touches
    ! were most of this routine's time).
    call move_alloc(frc%mean, frc%e_el)
    den = real(frc%nb, real64) * (frc%nb - 1)
    do k = 1, frc%m
      frc%m2(:, k) = sqrt(frc%m2(:, k) / den)
    end do
    call move_alloc(frc%m2, frc%e_el_err)
    allocate(frc%f(3, frc%m), frc%f_err(3, frc%m))
    do k = 1, frc%m
      frc%f(:, k) = fld%site_q(k) * (frc%e_el(:, k) + fld%e_qm_sites(:, k))
      frc%f_err(:, k) = abs(fld%site_q(k)) * frc%e_el_err(:, k)
    end do
    ! The QM nuclei's part of the sites' forces (exact), summed over the sites.
    frc%sum_qm_part = q_dot(fld%site_q, fld%e_qm_sites)
    if (frc%dip) then
      ! With dipoles: the electrons' part from its own block series, plus the QM nuclei's q E + (mu . grad) E.
      frc%fd_el_err = sqrt(frc%fd_m2 / (real(frc%nb, real64) * (frc%nb - 1)))
      frc%g_el_err = sqrt(frc%g_m2 / (real(frc%nb, real64) * (frc%nb - 1)))
      allocate(dq(3, frc%m), source=0.0_real64)   ! the QM nuclei's (mu . grad) E
      do k = 1, size(fld%mu, 2, kind=int64)
        dq(:, k) = mu_grad(fld%mu(:, k), fld%g_qm_sites(:, k))
      end do
      frc%f_dip = frc%fd_mean + dq
      do k = 1, frc%m
        frc%f(:, k) = frc%fel_mean(:, k) + fld%site_q(k) * fld%e_qm_sites(:, k) + dq(:, k)
      end do
      frc%f_err = sqrt(frc%fel_m2 / (real(frc%nb, real64) * (frc%nb - 1)))
      frc%sum_qm_part = frc%sum_qm_part + sum(dq, dim=2)
    end if
    ! The sum over the sites: its own series of block values (the sites' fields are correlated).
    do c = 1, 3
      call mean_err(frc%sum_series(c, 1:frc%nb), frc%sum_f(c), frc%sum_f_err(c))
      frc%sum_f(c) = frc%sum_f(c) + frc%sum_qm_part(c)
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
    if (frc%dip) write(output_unit, '(a)') '  (sites with dipoles: q E + (mu.grad) E, mu the permanent + induced ' // &
         'dipoles of the run''s blocks)'
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
  ! its error bar, the QM nuclei's field; the QM nuclei's forces; the sums (and the sites' sum of the QM nuclei's
  ! part, exact: minus sum_qm_nuclei_force by Newton's third law). With dipoles (pol_file): the dipoles, their
  ! force term (all of it, and the electrons' part with its error bar) and the field gradients.
  subroutine forces_json(frc, fld, js)
    type(forces_t), intent(in) :: frc
    type(env_field_t), intent(in) :: fld
    type(json_writer), intent(inout) :: js
    integer(int64) :: k
    if (.not. frc%on) return
    call js%begin_object('forces')
    call js%put('units', 'hartree/bohr (forces), hartree/(e bohr) (fields), e (charges), e bohr (dipoles), ' // &
         'hartree/(e bohr^2) (field gradients: xx xy xz yy yz zz per site)')
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
    call js%put('sum_site_force_qm_nuclei', frc%sum_qm_part)
    call js%put('sum_qm_nuclei_force', frc%sum_qm)
    if (frc%dip) then   ! pol_file: the dipoles' term (in site_force already)
      call js%put('site_dipole', [reshape(fld%mu, [size(fld%mu)]), (0.0_real64, k = 1, 3 * (frc%m - size(fld%mu, 2)))])
      call js%put('site_force_dipole', reshape(frc%f_dip, [3 * frc%m]))
      call js%put('site_force_dipole_electrons', reshape(frc%fd_mean, [3 * frc%m]))
      call js%put('site_force_dipole_electrons_error', reshape(frc%fd_el_err, [3 * frc%m]))
      call js%put('field_gradient_electrons', reshape(frc%g_mean, [6 * frc%m]))
      call js%put('field_gradient_electrons_error', reshape(frc%g_el_err, [6 * frc%m]))
      call js%put('field_gradient_qm_nuclei', reshape(fld%g_qm_sites, [6 * frc%m]))
    end if
    call js%end()
  end subroutine

end module vmc_forces
