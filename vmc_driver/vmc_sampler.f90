! vmc_sampler.f90 -- Metropolis sampling of |Psi|^2: proposals, acceptance, equilibration (with the move
! length tuned on the global acceptance) and the sweeps of one accumulation block with its local energies.
!
! One step moves one electron (the same index in every walker; sweeps cycle through the electrons).
! Acceptance uses |Psi|^2 only, never the field, so runs with different backends, precisions or field
! modes visit exactly the same configurations. The field is needed only in the local energy: by default
! ('measured') all electrons of all walkers go to the library in one call per measurement, overlapped with
! the wavefunction's part on CUDA; the per-step modes ('batched', 'per_walker') evaluate the moved
! electron at every step and keep each electron's value. Either way a walker's environment energy is
! sum(u(:, w)) over the same values in the same order: the modes agree bitwise on the CPU field.
! Threads (OpenMP): the walkers of this process are shared out over the threads at every step and every
! measurement, each thread with its own wavefunction workspace; a walker's arithmetic does not depend on
! its thread, every sum over walkers is made afterwards in walker order, and field calls stay on one
! thread (between the parallel loops): any thread count gives bitwise the same results.
module vmc_sampler
  use, intrinsic :: iso_fortran_env, only: real64, int64
  use vmc_util
  use vmc_rng
  use vmc_input, only: input_t
  use vmc_molden, only: basis_t
  use vmc_wavefunction
  use vmc_walkers
  use vmc_field
  use vmc_par, only: par_sum_int64, thread_id
  implicit none
  private
  public :: sampler_t, sampler_init, sampler_equilibrate, sampler_prepare, sampler_block, NPART

  integer, parameter :: NPART = 5   ! per walker and measurement: E_L, kinetic, e-e, e-n, environment

  type sampler_t
    real(real64) :: delta = 0.5_real64               ! move cube side far from nuclei (bohr)
    real(real64) :: vnn = 0                          ! nucleus-nucleus repulsion of the QM fragment
    integer(int64) :: step = 0                       ! steps so far: the random streams' position
    integer :: nsweep = 0                            ! accumulation sweeps so far
    integer(int64) :: n_acc = 0, n_try = 0           ! accumulation (this process)
    integer(int64) :: n_acc_eq = 0, n_try_eq = 0     ! equilibration (all processes)
    integer(int64) :: ticks_wf = 0                   ! time in the wavefunction
  end type

contains

  subroutine sampler_init(smp, inp, bs)
    type(sampler_t), intent(out) :: smp
    type(input_t), intent(in) :: inp
    type(basis_t), intent(in) :: bs
    integer :: i, j
    smp%delta = inp%move_length
    smp%vnn = 0
    do i = 1, bs%natom
      do j = i + 1, bs%natom
        smp%vnn = smp%vnn + bs%z(i) * bs%z(j) / norm2(bs%xyz(:, i) - bs%xyz(:, j))
      end do
    end do
  end subroutine

  ! Moves shrink near nuclei (cube side delta * min(1, d + 0.05), d the distance to the nearest
  ! nucleus in bohr) so that core electrons are sampled as well as valence ones.
  pure real(real64) function move_scale(bs, r) result(f)
    type(basis_t), intent(in) :: bs
    real(real64), intent(in) :: r(3)
    integer :: a
    real(real64) :: d2
    d2 = huge(1.0_real64)
    do a = 1, bs%natom
      d2 = min(d2, sum((r - bs%xyz(:, a))**2))
    end do
    f = min(1.0_real64, sqrt(d2) + 0.05_real64)
  end function

  ! Walker w's proposal for electron e at step: a uniform move in a cube of side dcur around its position.
  subroutine propose(delta, step, wk, bs, e, w)
    real(real64), intent(in) :: delta
    integer(int64), intent(in) :: step
    type(walkers_t), intent(inout) :: wk
    type(basis_t), intent(in) :: bs
    integer, intent(in) :: e, w
    integer :: c
    wk%dcur(w) = delta * move_scale(bs, wk%pos(:, e, w))
    do c = 1, 3
      wk%prop(c, w) = wk%pos(c, e, w) + wk%dcur(w) * (rng_uniform(wk%key(w), step, c - 1) - 0.5_real64)
    end do
  end subroutine

  ! Accepts or rejects walker w's proposal with |Psi(new)/Psi(old)|^2 and the proposal densities.
  subroutine metropolis(delta, step, wk, wf, ws, e, w)
    real(real64), intent(in) :: delta
    integer(int64), intent(in) :: step
    type(walkers_t), intent(inout) :: wk
    type(wf_t), intent(in) :: wf
    type(wf_ws_t), intent(inout) :: ws
    integer, intent(in) :: e, w
    real(real64) :: pw, dnew
    ! The reverse move must be possible from the proposed point's (smaller or larger) cube;
    ! the proposal densities 1/dcur^3 and 1/dnew^3 enter the acceptance (detailed balance).
    dnew = delta * move_scale(wf%bs, wk%prop(:, w))
    wk%acc(w) = .false.
    if (maxval(abs(wk%prop(:, w) - wk%pos(:, e, w))) > 0.5_real64 * dnew) return
    pw = wf_ratio(wf, ws, wk%pos(:, :, w), wk%ainva(:, :, w), wk%ainvb(:, :, w), e, wk%prop(:, w), wk%ratio(w))
    pw = pw * (wk%dcur(w) / dnew)**3
    wk%acc(w) = rng_uniform(wk%key(w), step, 3) < pw
    if (wk%acc(w)) call wf_accept(wf, ws, wk%pos(:, :, w), wk%ainva(:, :, w), wk%ainvb(:, :, w), e, &
         wk%prop(:, w), wk%ratio(w))
  end subroutine

  ! Walker w alone through sweeps sweep0 + 1 .. sweep0 + nsweep (global sweep numbers, equilibration
  ! included) from step step0 on: every electron moved once per sweep, the inverses recomputed after every
  ! recompute_every-th sweep. Returns its accepted moves. The same operations in the same order as moving
  ! every walker step by step: a walker's path depends on nothing but itself.
  integer function sweeps_walker(smp, wk, wf, ws, w, step0, sweep0, nsweep, recompute_every) result(nacc)
    type(sampler_t), intent(in) :: smp
    type(walkers_t), intent(inout) :: wk
    type(wf_t), intent(in) :: wf
    type(wf_ws_t), intent(inout) :: ws
    integer, intent(in) :: w, sweep0, nsweep, recompute_every
    integer(int64), intent(in) :: step0
    integer(int64) :: step
    integer :: k, e
    logical :: ok
    nacc = 0
    step = step0
    do k = 1, nsweep
      do e = 1, wf%ne
        step = step + 1
        call propose(smp%delta, step, wk, wf%bs, e, w)
        call metropolis(smp%delta, step, wk, wf, ws, e, w)
        if (wk%acc(w)) nacc = nacc + 1
      end do
      if (mod(sweep0 + k, recompute_every) == 0) then
        call wf_invert(wf, ws, wk%pos(:, :, w), wk%ainva(:, :, w), wk%ainvb(:, :, w), ok)
        if (.not. ok) call die('singular Slater matrix at a periodic recomputation (walker ' // &
             itoa(wk%first + w - 1) // ')')
      end if
    end do
  end function

  ! nsweep sweeps of every walker, the walkers shared out over the threads (one parallel loop: no
  ! synchronisation between walkers). Updates the step and sweep counters; returns the accepted moves.
  integer(int64) function sweeps_all(smp, wk, wf, ws, nsweep, sweep0, recompute_every) result(nacc)
    type(sampler_t), intent(inout) :: smp
    type(walkers_t), intent(inout) :: wk
    type(wf_t), intent(in) :: wf
    type(wf_ws_t), intent(inout) :: ws(0:)
    integer, intent(in) :: nsweep, sweep0, recompute_every
    integer :: w, acc_w(wk%nw)
    integer(int64) :: t0
    t0 = clock_ticks()
    !$omp parallel do schedule(static)
    do w = 1, wk%nw
      acc_w(w) = sweeps_walker(smp, wk, wf, ws(thread_id()), w, smp%step, sweep0, nsweep, recompute_every)
    end do
    !$omp end parallel do
    smp%ticks_wf = smp%ticks_wf + (clock_ticks() - t0)
    smp%step = smp%step + int(nsweep, int64) * wf%ne
    nacc = sum(int(acc_w, int64))
  end function

  ! One sweep with a per-step field ('batched', 'per_walker'): at every step the proposals of all walkers
  ! go to the library (one thread) between proposal and acceptance, and accepted moves keep their value.
  integer(int64) function sweep_per_step(smp, wk, wf, ws, fld, sweep, recompute_every) result(nacc)
    type(sampler_t), intent(inout) :: smp
    type(walkers_t), intent(inout) :: wk
    type(wf_t), intent(in) :: wf
    type(wf_ws_t), intent(inout) :: ws(0:)
    type(env_field_t), intent(inout) :: fld
    integer, intent(in) :: sweep, recompute_every
    integer :: w, e
    integer(int64) :: t0
    nacc = 0
    do e = 1, wf%ne
      smp%step = smp%step + 1
      !$omp parallel do schedule(static)
      do w = 1, wk%nw
        call propose(smp%delta, smp%step, wk, wf%bs, e, w)
      end do
      !$omp end parallel do
      call field_start(fld, wk%prop, wk%uprop)
      t0 = clock_ticks()
      !$omp parallel do schedule(static)
      do w = 1, wk%nw
        call metropolis(smp%delta, smp%step, wk, wf, ws(thread_id()), e, w)
      end do
      !$omp end parallel do
      smp%ticks_wf = smp%ticks_wf + (clock_ticks() - t0)
      call field_finish(fld)
      do w = 1, wk%nw
        if (wk%acc(w)) wk%u(e, w) = wk%uprop(w)
      end do
      nacc = nacc + count(wk%acc)
    end do
    if (mod(sweep, recompute_every) == 0) call recompute(smp, wk, wf, ws)
  end function

  subroutine recompute(smp, wk, wf, ws)
    type(sampler_t), intent(inout) :: smp
    type(walkers_t), intent(inout) :: wk
    type(wf_t), intent(in) :: wf
    type(wf_ws_t), intent(inout) :: ws(0:)
    integer(int64) :: t0
    t0 = clock_ticks()
    call walkers_recompute(wk, wf, ws)
    smp%ticks_wf = smp%ticks_wf + (clock_ticks() - t0)
  end subroutine

  ! Equilibration: the field is not needed (acceptance ignores it). The move length is tuned after every
  ! sweep towards ~50 % acceptance on the acceptance of all processes, so every rank count tunes it alike.
  subroutine sampler_equilibrate(smp, wk, wf, ws, inp)
    type(sampler_t), intent(inout) :: smp
    type(walkers_t), intent(inout) :: wk
    type(wf_t), intent(in) :: wf
    type(wf_ws_t), intent(inout) :: ws(0:)
    type(input_t), intent(in) :: inp
    integer :: isweep
    integer(int64) :: cnt(2)
    real(real64) :: acc_rate
    do isweep = 1, inp%n_equil
      cnt(1) = sweeps_all(smp, wk, wf, ws, 1, isweep - 1, inp%recompute_every)
      cnt(2) = int(wk%nw, int64) * wf%ne
      call par_sum_int64(cnt)
      smp%n_acc_eq = smp%n_acc_eq + cnt(1); smp%n_try_eq = smp%n_try_eq + cnt(2)
      if (inp%tune_moves) then
        acc_rate = real(cnt(1), real64) / cnt(2)
        smp%delta = smp%delta * min(1.25_real64, max(0.8_real64, (acc_rate + 0.05_real64) / 0.55_real64))
      end if
    end do
  end subroutine

  ! Before the first block: fresh inverses, and for the per-step field modes the field at every electron
  ! (they keep each electron's value from the step that moved it).
  subroutine sampler_prepare(smp, wk, wf, ws, fld)
    type(sampler_t), intent(inout) :: smp
    type(walkers_t), intent(inout) :: wk
    type(wf_t), intent(in) :: wf
    type(wf_ws_t), intent(inout) :: ws(0:)
    type(env_field_t), intent(inout) :: fld
    call recompute(smp, wk, wf, ws)
    if (fld%per_step) call field_eval_all(fld, wk%ne * wk%nw, wk%pos, wk%u)
  end subroutine

  ! One block: steps_per_block sweeps, a local energy of every walker every energy_every sweeps into
  ! parts(:, w, m) (E_L, kinetic, e-e, e-n, environment), m = 1 .. steps_per_block / energy_every.
  ! Consecutive sweeps are correlated over several sweeps: measuring less often costs less and loses
  ! little (the reblocked error bar says how much).
  subroutine sampler_block(smp, wk, wf, ws, fld, inp, parts)
    type(sampler_t), intent(inout) :: smp
    type(walkers_t), intent(inout) :: wk
    type(wf_t), intent(in) :: wf
    type(wf_ws_t), intent(inout) :: ws(0:)
    type(env_field_t), intent(inout) :: fld
    type(input_t), intent(in) :: inp
    real(real64), intent(out) :: parts(:, :, :)
    integer :: m, k
    do m = 1, inp%steps_per_block / inp%energy_every
      if (fld%per_step) then
        do k = 1, inp%energy_every
          smp%n_acc = smp%n_acc + sweep_per_step(smp, wk, wf, ws, fld, inp%n_equil + smp%nsweep + k, &
               inp%recompute_every)
        end do
      else
        smp%n_acc = smp%n_acc + sweeps_all(smp, wk, wf, ws, inp%energy_every, inp%n_equil + smp%nsweep, &
             inp%recompute_every)
      end if
      smp%n_try = smp%n_try + int(inp%energy_every, int64) * wf%ne * wk%nw
      smp%nsweep = smp%nsweep + inp%energy_every
      call measure(smp, wk, wf, ws, fld, parts(:, :, m), mod(m, inp%forces_every) == 0)
    end do
  end subroutine

  ! Local energies of all walkers: kinetic + e-e + e-n + n-n + sum_i U_ES(r_i) + the nuclear constant.
  ! 'measured': the field of every electron starts first (on CUDA it runs during the wavefunction part).
  ! with_forces: the electrons' field at the sites is added to the field's accumulator (key forces, every
  ! forces_every local energies).
  subroutine measure(smp, wk, wf, ws, fld, parts, with_forces)
    type(sampler_t), intent(inout) :: smp
    type(walkers_t), intent(inout) :: wk
    type(wf_t), intent(in) :: wf
    type(wf_ws_t), intent(inout) :: ws(0:)
    type(env_field_t), intent(inout) :: fld
    real(real64), intent(out) :: parts(:, :)
    logical, intent(in) :: with_forces
    integer :: w
    integer(int64) :: t0
    real(real64) :: ek, vee, ven, p
    if (fld%active .and. .not. fld%per_step) call field_start_all(fld, wk%ne * wk%nw, wk%pos, wk%u)
    t0 = clock_ticks()
    !$omp parallel do schedule(static) private(ek, vee, ven)
    do w = 1, wk%nw
      call wf_local_energy(wf, ws(thread_id()), wk%pos(:, :, w), wk%ainva(:, :, w), wk%ainvb(:, :, w), ek, vee, ven)
      parts(:, w) = [0.0_real64, ek, vee, ven, 0.0_real64]
    end do
    !$omp end parallel do
    smp%ticks_wf = smp%ticks_wf + (clock_ticks() - t0)
    call field_finish(fld)
    if (with_forces) call field_forces_add(fld, wk%ne * wk%nw, wk%pos)
    do w = 1, wk%nw
      p = parts(2, w) + parts(3, w) + parts(4, w) + smp%vnn + sum(wk%u(:, w)) + fld%e_nuc_env
      if (.not. is_finite(p)) call die('non-finite local energy (walker ' // itoa(wk%first + w - 1) // ')')
      parts(1, w) = p
      parts(5, w) = sum(wk%u(:, w))
    end do
  end subroutine

end module vmc_sampler
