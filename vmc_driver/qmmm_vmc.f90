! qmmm_vmc -- variational Monte Carlo of a QM fragment in the electrostatic field of its environment.
! Usage: qmmm_vmc input.nml [result.json]    (namelist &vmc, see vmc_driver/README.md). Atomic units throughout.
!
! One step moves one electron (the same index in every walker; sweeps cycle through the electrons).
! The field U_ES at the proposed positions of all walkers goes to the library in one call (batched) or
! one call per walker (per_walker); with the CUDA backend the batched call runs asynchronously while the
! wavefunction is updated. Acceptance uses |Psi|^2 only, never the field, so runs with different
! backends or precisions visit exactly the same configurations.
!
! MPI (vmc_par): walkers are dealt to ranks in contiguous shares; every walker's random stream depends
! only on (seed, global walker index), so every rank count visits the same configurations. Per-walker
! local energies are gathered to rank 0 once per block and summed there in global walker order, exactly
! as one process sums them: results do not depend on the rank count (beyond the field's batching).
! Rank 0 prints and writes the JSON; an error on any rank stops the whole job (vmc_util's die hook).
program qmmm_vmc
  use, intrinsic :: iso_fortran_env, only: real64, int64, output_unit
  use qmmm_accel
  use vmc_util
  use vmc_rng
  use vmc_input
  use vmc_molden
  use vmc_wavefunction
  use vmc_stats
  use vmc_par
  implicit none

  type(input_t) :: inp
  type(basis_t) :: bs
  type(wf_t) :: wf
  type(qmmm_field) :: field
  type(qmmm_env) :: env
  character(len=512) :: arg
  integer :: ne, na, nb, nw, w, e, s, ib, isweep, nsweep_total, st, backend_used, prec_used, level, i, n_meas, im
  integer :: nw_total, w0, device, device_used, local_rank, local_size, r
  integer(int64) :: step, clk0, clk1, clk_rate, t_field, t_wf, t_all0, t_all, t_setup, n_cells, n_env_nuc
  real(real64), allocatable :: pos(:,:,:), ainva(:,:,:), ainvb(:,:,:), u(:,:), prop(:,:), uprop(:), ratio(:), dcur(:)
  real(real64), allocatable :: series(:), block_mean(:), unuc(:)
  real(real64), allocatable :: parts(:, :, :), parts_all(:), rank_times(:, :)
  integer, allocatable :: rank_info(:, :)
  character(len=160), allocatable :: rank_lines(:)
  logical, allocatable :: acc(:)
  integer(int64), allocatable :: key(:)
  real(real64) :: delta, p, ek, vee, ven, vnn, e_nuc_env, sum_e, sum_e2, sum_k, sum_ee, sum_en, sum_f
  real(real64) :: mean, err, bmean, berr, acc_rate, cell_volume
  integer(int64) :: n_acc, n_try, n_acc_eq, n_try_eq, n_samples, cnt(2)
  logical :: ok, have_field, use_async
  character(len=16) :: backend_name

  call par_init()
  call get_command_argument(1, arg)
  if (len_trim(arg) == 0 .or. command_argument_count() > 2) &
       call die('usage: qmmm_vmc input.nml [result.json] (namelist &vmc; see vmc_driver/README.md)')
  call input_read(trim(arg), inp)
  if (command_argument_count() == 2) call get_command_argument(2, inp%output_json)
  call molden_read(trim(inp%molden), bs)
  if (inp%n_electrons >= 0 .and. inp%n_electrons /= bs%nalpha + bs%nbeta) &
       call die(trim(arg) // ': key ''n_electrons'' = ' // itoa(inp%n_electrons) // ' but ' // trim(inp%molden) // &
       ' occupies ' // itoa(bs%nalpha) // ' alpha + ' // itoa(bs%nbeta) // ' beta orbitals')
  call wf_setup(wf, bs, inp%jastrow, inp%b_ee, inp%b_en, inp%cusp_correction, inp%cusp_rc_z, inp%cusp_rc_max)
  na = wf%na; nb = wf%nb; ne = wf%ne; nw_total = inp%n_walkers
  ! Every rank reads the same input, so every rank finds this alike: one message, clean stop.
  if (nw_total < par_size) call par_stop_all(trim(arg) // ': key ''n_walkers'' = ' // itoa(nw_total) // &
       ' is less than the ' // itoa(par_size) // ' MPI ranks: every rank needs at least one walker')
  call par_share(nw_total, par_rank, w0, nw)
  call system_clock(t_all0, clk_rate)

  ! ---- environment field ----
  have_field = inp%n_cubes > 0
  e_nuc_env = 0
  backend_name = 'none'
  device_used = -1; device = -1
  call par_node_rank(local_rank, local_size)
  use_async = .false.
  n_cells = 0; n_env_nuc = 0
  if (have_field) then
    st = qmmm_env_create(env)
    call check(st, 'qmmm_env_create')
    do i = 1, inp%n_cubes
      st = qmmm_env_add_cube(env, trim(inp%cubes(i)), inp%density_threshold)
      call check(st, trim(inp%cubes(i)))
    end do
    st = qmmm_env_sizes(env, n_cells, n_env_nuc, cell_volume)
    call check(st, 'qmmm_env_sizes')
    ! The GPU of this rank: node-local rank mod the node's GPUs, unless 'devices' or QMMM_DEVICE say otherwise.
    if (inp%backend /= 'cpu') then
      call par_select_device(inp%devices, device, local_rank, local_size, st)
      call check(st, 'choosing the CUDA device (key ''devices'' = ''' // trim(inp%devices) // ''')')
    end if
    block
      type(qmmm_options) :: opt
      opt%backend = merge(QMMM_BACKEND_CPU, merge(QMMM_BACKEND_CUDA, QMMM_BACKEND_AUTO, inp%backend == 'cuda'), &
           inp%backend == 'cpu')
      opt%precision = merge(QMMM_PRECISION_SINGLE, merge(QMMM_PRECISION_MIXED, QMMM_PRECISION_DOUBLE, &
           inp%precision == 'mixed'), inp%precision == 'single')
      opt%n_threads = inp%n_threads
      if (device >= 0) opt%device = device
      st = qmmm_field_create_from_env(field, env, opt)
      call check(st, 'field for backend=''' // trim(inp%backend) // ''' precision=''' // trim(inp%precision) // '''')
      ! Constant: QM nuclei in the environment; U_ES is the energy of one electron, a nucleus has -Z times it.
      ! Computed once, so always in double precision: with Z up to 8 a single or mixed field would put 8x
      ! its error into every local energy (mixed: 5e-8 hartree on the water dimer, most of its gap). A double
      ! field is used as it is; otherwise a CPU double field of the same environment, for this one call.
      allocate(unuc(bs%natom))
      if (opt%precision == QMMM_PRECISION_DOUBLE) then
        st = qmmm_field_eval(field, bs%xyz, unuc)
        call check(st, 'field at the QM nuclei')
      else
        block
          type(qmmm_options) :: o_dbl
          type(qmmm_field) :: f_dbl
          o_dbl%backend = QMMM_BACKEND_CPU
          o_dbl%n_threads = inp%n_threads
          st = qmmm_field_create_from_env(f_dbl, env, o_dbl)
          call check(st, 'double-precision field for the QM nuclei')
          st = qmmm_field_eval(f_dbl, bs%xyz, unuc)
          call check(st, 'field at the QM nuclei')
          st = qmmm_field_destroy(f_dbl)
        end block
      end if
    end block
    st = qmmm_env_destroy(env)
    st = qmmm_field_backend(field, backend_used, prec_used, device_used)
    call check(st, 'qmmm_field_backend')
    backend_name = merge('cuda', 'cpu ', backend_used == QMMM_BACKEND_CUDA)
    use_async = backend_used == QMMM_BACKEND_CUDA .and. inp%field_calls == 'batched'
    e_nuc_env = -sum(bs%z * unuc)
  end if
  vnn = 0
  do i = 1, bs%natom
    do s = i + 1, bs%natom
      vnn = vnn + bs%z(i) * bs%z(s) / norm2(bs%xyz(:, i) - bs%xyz(:, s))
    end do
  end do

  ! ---- walkers ----
  allocate(pos(3, ne, nw), ainva(max(na,1), max(na,1), nw), ainvb(max(nb,1), max(nb,1), nw), u(ne, nw), &
       prop(3, nw), uprop(nw), ratio(nw), dcur(nw), acc(nw), key(nw))
  ainva = 0; ainvb = 0; u = 0
  do w = 1, nw
    key(w) = rng_key(inp%seed, inp%first_walker + w0 + w - 1)
    call initial_walker(w)
  end do

  ! Each rank once: host, device, backend, walkers; rank 0 prints them in rank order.
  allocate(rank_lines(par_size), rank_info(4, par_size))
  call par_gather_text('  rank ' // itoa(par_rank) // ' host ' // trim(par_host()) // ' (local rank ' // &
       itoa(local_rank) // ' of ' // itoa(local_size) // ')  backend ' // trim(backend_name) // '  device ' // &
       itoa(device_used) // '  walkers ' // itoa(w0) // '..' // itoa(w0 + nw - 1), rank_lines)
  call par_gather_int([device_used, local_rank, w0, nw], rank_info)
  if (par_root) call print_header()

  ! ---- equilibration: the field is not needed (acceptance ignores it) ----
  t_field = 0; t_wf = 0
  call system_clock(clk0); t_setup = clk0 - t_all0   ! reading cubes, building the field, first walkers
  delta = inp%move_length
  step = 0
  n_acc_eq = 0; n_try_eq = 0
  do isweep = 1, inp%n_equil
    n_acc = 0; n_try = 0
    do e = 1, ne
      step = step + 1
      call propose(e)
      call system_clock(clk0)
      call metropolis(e)
      call system_clock(clk1); t_wf = t_wf + (clk1 - clk0)
      n_acc = n_acc + count(acc); n_try = n_try + nw
    end do
    cnt = [n_acc, n_try]
    call par_sum_int64(cnt)   ! global acceptance: the same tuned move length for every rank count
    n_acc = cnt(1); n_try = cnt(2)
    n_acc_eq = n_acc_eq + n_acc; n_try_eq = n_try_eq + n_try
    if (inp%tune_moves) then
      acc_rate = real(n_acc, real64) / n_try
      delta = delta * min(1.25_real64, max(0.8_real64, (acc_rate + 0.05_real64) / 0.55_real64))
    end if
    if (mod(isweep, inp%recompute_every) == 0) call recompute_all()
  end do

  ! ---- walker shares by measured speed (balance_walkers): positions move, the rest is rebuilt below ----
  if (inp%balance_walkers .and. par_size > 1 .and. inp%n_equil > 0) then
    call par_rebalance(nw_total, real(nw, real64) * inp%n_equil / max(real(t_wf, real64) / clk_rate, 1e-9_real64), &
         pos, w0, nw)
    deallocate(ainva, ainvb, u, prop, uprop, ratio, dcur, acc, key)
    allocate(ainva(max(na,1), max(na,1), nw), ainvb(max(nb,1), max(nb,1), nw), u(ne, nw), prop(3, nw), uprop(nw), &
         ratio(nw), dcur(nw), acc(nw), key(nw))
    ainva = 0; ainvb = 0; u = 0
    do w = 1, nw
      key(w) = rng_key(inp%seed, inp%first_walker + w0 + w - 1)
    end do
    call par_gather_int([device_used, local_rank, w0, nw], rank_info)
    if (par_root) write(output_unit, '(a,*(1x,i0))') '  walkers per rank after balancing (equilibration speed):', &
         rank_info(4, :)
  end if

  ! ---- accumulation ----
  call recompute_all()
  if (have_field) then
    call system_clock(clk0)
    block
      real(real64), allocatable :: uall(:)
      allocate(uall(ne * nw))
      st = qmmm_field_eval(field, reshape(pos, [3, ne * nw]), uall)
      call check(st, 'qmmm_field_eval (all electrons)')
      u = reshape(uall, [ne, nw])
    end block
    call system_clock(clk1); t_field = t_field + (clk1 - clk0)
  end if
  n_meas = inp%steps_per_block / inp%energy_every   ! local energies per block (every energy_every sweeps)
  allocate(series(inp%n_blocks * n_meas), block_mean(inp%n_blocks))
  allocate(parts(5, nw, n_meas))   ! per walker and measurement: E_L, kinetic, e-e, e-n, environment
  allocate(parts_all(merge(5 * nw_total * n_meas, 1, par_root)))
  sum_e = 0; sum_e2 = 0; sum_k = 0; sum_ee = 0; sum_en = 0; sum_f = 0
  n_acc = 0; n_try = 0; n_samples = 0
  nsweep_total = 0
  if (par_root) then
    write(output_unit, '(a,f8.4,a)') '  move length   ', delta, ' bohr (after equilibration)'
    write(output_unit, '(a)') ''
    write(output_unit, '(a)') '  block    E(block)            running mean        error (blocks)   acceptance'
  end if
  do ib = 1, inp%n_blocks
    do s = 1, inp%steps_per_block
      do e = 1, ne
        step = step + 1
        call propose(e)
        call field_start()
        call system_clock(clk0)
        call metropolis(e)
        call system_clock(clk1); t_wf = t_wf + (clk1 - clk0)
        call field_finish(e)
        n_acc = n_acc + count(acc); n_try = n_try + nw
      end do
      nsweep_total = nsweep_total + 1
      if (mod(inp%n_equil + nsweep_total, inp%recompute_every) == 0) call recompute_all()
      ! Consecutive sweeps are correlated over several sweeps: a local energy every energy_every sweeps
      ! costs less and loses little (the reblocked error bar says how much).
      if (mod(s, inp%energy_every) /= 0) cycle
      im = s / inp%energy_every
      call system_clock(clk0)
      do w = 1, nw
        call wf_local_energy(wf, pos(:, :, w), ainva(:, :, w), ainvb(:, :, w), ek, vee, ven)
        p = ek + vee + ven + vnn + sum(u(:, w)) + e_nuc_env
        if (.not. (abs(p) < huge(p))) call die('non-finite local energy (walker ' // itoa(w0 + w - 1) // ')')
        parts(:, w, im) = [p, ek, vee, ven, sum(u(:, w))]
      end do
      call system_clock(clk1); t_wf = t_wf + (clk1 - clk0)
    end do
    ! Once per block: every walker's energies to rank 0, summed there in global walker order.
    call par_gatherv_real(reshape(parts, [size(parts)]), parts_all)
    cnt = [n_acc, n_try]
    call par_sum_int64(cnt)
    if (par_root) then
      call accumulate_block((ib - 1) * n_meas)
      block_mean(ib) = sum(series((ib - 1) * n_meas + 1:ib * n_meas)) / n_meas
      call mean_err(block_mean(1:ib), bmean, berr)
      write(output_unit, '(2x,i5,2(1x,f19.10),1x,f16.10,1x,f10.4)') ib, block_mean(ib), bmean, berr, &
           real(cnt(1), real64) / cnt(2)
    end if
  end do
  n_acc = cnt(1); n_try = cnt(2)
  call system_clock(clk1)
  t_all = clk1 - t_all0
  ! Final positions (for the checksum) and every rank's times, to rank 0.
  block
    real(real64), allocatable :: pos_all(:)
    allocate(pos_all(merge(3 * ne * nw_total, 1, par_root)), rank_times(4, par_size))
    call par_gatherv_real(reshape(pos, [size(pos)]), pos_all)
    call par_gather_real(real([t_all, t_field, t_wf, t_setup], real64) / clk_rate, rank_times)
    if (par_root) then
      call reblock(series, mean, err, level)
      call report(sum(pos_all))
    end if
  end block
  if (have_field) st = qmmm_field_destroy(field)
  call par_finalize()

contains

  subroutine print_header()
  write(output_unit, '(a)') 'qmmm_vmc: variational Monte Carlo (atomic units: bohr, hartree)'
  write(output_unit, '(a)') '  molden        ' // trim(inp%molden)
  write(output_unit, '(a,i0,a,i0,a,i0,a,i0)') '  electrons     ', ne, ' (', na, ' alpha, ', nb, ' beta), basis functions ', &
       bs%nbf
  write(output_unit, '(a,i0,a,i0,a)') '  environment   ', n_cells, ' cells, ', n_env_nuc, ' nuclei; field backend ' // &
       trim(backend_name) // ', precision ' // trim(inp%precision) // ', calls ' // trim(inp%field_calls)
  write(output_unit, '(a,l1,a,f8.4,a,f8.4,a,l1)') '  jastrow       ', inp%jastrow, '  b_ee ', inp%b_ee, '  b_en ', inp%b_en, &
       '  cusp_correction ', inp%cusp_correction
  write(output_unit, '(a,i0,a,i0,a,i0,a,i0,a,i0,a,i0)') '  walkers ', nw_total, ', equilibration sweeps ', inp%n_equil, &
       ', blocks ', inp%n_blocks, ' x ', inp%steps_per_block, ' sweeps (local energy every ', inp%energy_every, &
       '), seed ', inp%seed
    write(output_unit, '(a,i0,a)') '  MPI ranks     ', par_size, trim(merge(' (built with MPI)   ', &
         ' (built without MPI)', par_have_mpi))
    do r = 1, par_size
      write(output_unit, '(a)') trim(rank_lines(r))
    end do
  end subroutine

  ! Rank 0: the block's sweeps with walkers in global order (rank order = walker order): the same sums
  ! in the same order as a single process makes them, so the rank count does not change a bit.
  subroutine accumulate_block(meas0)
    integer, intent(in) :: meas0
    integer :: s, r, w, first, n, k
    real(real64) :: el, p
    do s = 1, n_meas
      el = 0
      do r = 0, par_size - 1
        call par_share(nw_total, r, first, n)
        do w = 1, n
          k = 5 * n_meas * first + 5 * (n * (s - 1) + w - 1)   ! rank r's parts(:, w, s)
          p = parts_all(k + 1)
          el = el + p
          sum_e = sum_e + p; sum_e2 = sum_e2 + p * p
          sum_k = sum_k + parts_all(k + 2); sum_ee = sum_ee + parts_all(k + 3); sum_en = sum_en + parts_all(k + 4)
          sum_f = sum_f + parts_all(k + 5)
          n_samples = n_samples + 1
        end do
      end do
      series(meas0 + s) = el / nw_total
    end do
  end subroutine

  subroutine check(st, what)
    integer, intent(in) :: st
    character(len=*), intent(in) :: what
    if (st /= QMMM_SUCCESS) call die(what // ': ' // qmmm_status_string(st) // ': ' // qmmm_error_message())
  end subroutine

  ! Electrons start around the nuclei (alpha and beta dealt over atoms by Z), drawn from the walker's
  ! stream at negative step numbers; redrawn while a Slater matrix is singular.
  subroutine initial_walker(w)
    integer, intent(in) :: w
    integer :: e, k, a, try, slot
    integer :: sites_a(ne + 1), sites_b(ne + 1), nsa, nsb
    nsa = 0; nsb = 0
    do a = 1, bs%natom
      do k = 1, (nint(bs%z(a)) + 1) / 2
        nsa = nsa + 1; if (nsa <= ne) sites_a(nsa) = a
      end do
      do k = 1, nint(bs%z(a)) / 2
        nsb = nsb + 1; if (nsb <= ne) sites_b(nsb) = a
      end do
    end do
    nsa = min(nsa, ne); nsb = min(nsb, ne)
    if (nsa == 0) then
      nsa = 1; sites_a(1) = 1
    end if
    if (nsb == 0) then
      nsb = nsa; sites_b = sites_a
    end if
    do try = 1, 100
      do e = 1, ne
        if (e <= na) then
          a = sites_a(mod(e - 1, nsa) + 1)
        else
          a = sites_b(mod(e - na - 1, nsb) + 1)
        end if
        do slot = 1, 3
          pos(slot, e, w) = bs%xyz(slot, a) + 2 / max(1.0_real64, sqrt(bs%z(a))) * &
               (rng_uniform(key(w), -int(try * (ne + 1) + e, int64), slot) - 0.5_real64)
        end do
      end do
      call wf_invert(wf, pos(:, :, w), ainva(:, :, w), ainvb(:, :, w), ok)
      if (ok) return
    end do
    call die('cannot find a starting configuration with non-singular Slater matrices (walker ' // itoa(w0 + w - 1) // ')')
  end subroutine

  ! Moves shrink near nuclei (cube side delta * min(1, d + 0.05), d the distance to the nearest
  ! nucleus in bohr) so that core electrons are sampled as well as valence ones.
  real(real64) function move_scale(r) result(f)
    real(real64), intent(in) :: r(3)
    integer :: a
    real(real64) :: d2
    d2 = huge(1.0_real64)
    do a = 1, bs%natom
      d2 = min(d2, sum((r - bs%xyz(:, a))**2))
    end do
    f = min(1.0_real64, sqrt(d2) + 0.05_real64)
  end function

  subroutine propose(e)
    integer, intent(in) :: e
    integer :: w, c
    do w = 1, nw
      dcur(w) = delta * move_scale(pos(:, e, w))
      do c = 1, 3
        prop(c, w) = pos(c, e, w) + dcur(w) * (rng_uniform(key(w), step, c - 1) - 0.5_real64)
      end do
    end do
  end subroutine

  subroutine metropolis(e)
    integer, intent(in) :: e
    integer :: w
    real(real64) :: pw, dnew
    do w = 1, nw
      ! The reverse move must be possible from the proposed point's (smaller or larger) cube;
      ! the proposal densities 1/dcur^3 and 1/dnew^3 enter the acceptance (detailed balance).
      dnew = delta * move_scale(prop(:, w))
      acc(w) = .false.
      if (maxval(abs(prop(:, w) - pos(:, e, w))) > 0.5_real64 * dnew) cycle
      pw = wf_ratio(wf, pos(:, :, w), ainva(:, :, w), ainvb(:, :, w), e, prop(:, w), ratio(w))
      pw = pw * (dcur(w) / dnew)**3
      acc(w) = rng_uniform(key(w), step, 3) < pw
      if (acc(w)) call wf_accept(wf, pos(:, :, w), ainva(:, :, w), ainvb(:, :, w), e, prop(:, w), ratio(w))
    end do
  end subroutine

  subroutine field_start()
    integer :: w
    if (.not. have_field) return
    call system_clock(clk0)
    if (use_async) then
      st = qmmm_field_eval_async(field, prop, uprop)
      call check(st, 'qmmm_field_eval_async')
    else if (inp%field_calls == 'batched') then
      st = qmmm_field_eval(field, prop, uprop)
      call check(st, 'qmmm_field_eval')
    else
      do w = 1, nw
        st = qmmm_field_eval(field, prop(:, w:w), uprop(w:w))
        call check(st, 'qmmm_field_eval')
      end do
    end if
    call system_clock(clk1); t_field = t_field + (clk1 - clk0)
  end subroutine

  subroutine field_finish(e)
    integer, intent(in) :: e
    integer :: w
    if (.not. have_field) return
    if (use_async) then
      call system_clock(clk0)
      st = qmmm_field_wait(field)
      call check(st, 'qmmm_field_wait')
      call system_clock(clk1); t_field = t_field + (clk1 - clk0)
    end if
    do w = 1, nw
      if (acc(w)) u(e, w) = uprop(w)
    end do
  end subroutine

  subroutine recompute_all()
    integer :: w
    call system_clock(clk0)
    do w = 1, nw
      call wf_invert(wf, pos(:, :, w), ainva(:, :, w), ainvb(:, :, w), ok)
      if (.not. ok) call die('singular Slater matrix at a periodic recomputation (walker ' // itoa(w0 + w - 1) // ')')
    end do
    call system_clock(clk1); t_wf = t_wf + (clk1 - clk0)
  end subroutine

  subroutine report(checksum)
    real(real64), intent(in) :: checksum
    real(real64) :: var, sec_all, sec_f, sec_wf, nsmp, sec_setup
    integer :: uj, ios
    character(len=256) :: msg
    character(len=:), allocatable :: tmp
    nsmp = real(n_samples, real64)
    var = sum_e2 / nsmp - (sum_e / nsmp)**2
    sec_all = real(t_all, real64) / clk_rate
    sec_f = real(t_field, real64) / clk_rate
    sec_wf = real(t_wf, real64) / clk_rate
    sec_setup = real(t_setup, real64) / clk_rate
    write(output_unit, '(a)') ''
    write(output_unit, '(a,f19.10,a,f14.10,a,i0,a)') '  energy        ', mean, ' +- ', err, &
         ' hartree (reblocked, block length 2^', level, ' local energies)'
    write(output_unit, '(a,f19.10)') '  variance      ', var
    write(output_unit, '(a,f10.4,a,f10.4)') '  acceptance    ', real(n_acc, real64) / n_try, '   equilibration ', &
         real(n_acc_eq, real64) / max(n_try_eq, 1_int64)
    write(output_unit, '(a)') '  parts (mean)  kinetic, e-e, e-n, n-n, electrons-environment, nuclei-environment:'
    write(output_unit, '(16x,6f16.8)') sum_k / nsmp, sum_ee / nsmp, sum_en / nsmp, vnn, sum_f / nsmp, e_nuc_env
    write(output_unit, '(a,f10.3,a,f10.3,a,f10.3,a,f10.3,a)') '  time (s)      total ', sec_all, '  field ', sec_f, &
         '  wavefunction ', sec_wf, '  rest ', sec_all - sec_f - sec_wf
    write(output_unit, '(a,f10.3,a)') '                (of which setup: cubes, field, walkers ', sec_setup, ')'
    if (par_size > 1) write(output_unit, '(a,f10.3,a,f10.3,a,f10.3,a)') '  ranks (max)   field ', &
         maxval(rank_times(2, :)), '  wavefunction ', maxval(rank_times(3, :)), '  setup ', maxval(rank_times(4, :))
    ! Written only now, after everything succeeded, so a failed run leaves no result file.
    tmp = trim(inp%output_json) // '.tmp'
    open(newunit=uj, file=tmp, status='replace', action='write', iostat=ios, iomsg=msg)
    if (ios /= 0) call die(trim(inp%output_json) // ': cannot write (' // trim(msg) // ')')
    write(uj, '(a)') '{'
    write(uj, '(a)') '  "program": "qmmm_vmc", "units": "hartree, bohr, seconds",'
    write(uj, '(a)') '  "molden": "' // trim(inp%molden) // '",'
    write(uj, '(a)') '  "backend": "' // trim(backend_name) // '", "precision": "' // trim(inp%precision) // &
         '", "field_calls": "' // trim(inp%field_calls) // '",'
    write(uj, '(a)') '  "n_cells": ' // itoa(int(n_cells)) // ', "n_electrons": ' // itoa(ne) // ', "n_walkers": ' // &
         itoa(nw_total) // ', "seed": ' // itoa(int(inp%seed)) // ', "jastrow": ' // &
         trim(merge('true ', 'false', inp%jastrow)) // &
         ', "cusp_correction": ' // trim(merge('true ', 'false', inp%cusp_correction)) // ','
    write(uj, '(a)') '  "n_equil": ' // itoa(inp%n_equil) // ', "n_blocks": ' // itoa(inp%n_blocks) // &
         ', "steps_per_block": ' // itoa(inp%steps_per_block) // ', "energy_every": ' // itoa(inp%energy_every) // ','
    write(uj, '(a)') '  "energy": ' // rtoa(mean) // ', "error": ' // rtoa(err) // ', "reblock_level": ' // &
         itoa(level) // ', "variance": ' // rtoa(var) // ','
    write(uj, '(a)') '  "acceptance": ' // rtoa(real(n_acc, real64) / n_try) // ', "move_length": ' // rtoa(delta) // ','
    write(uj, '(a)') '  "parts": {"kinetic": ' // rtoa(sum_k / nsmp) // ', "electron_electron": ' // rtoa(sum_ee / nsmp) // &
         ', "electron_nucleus": ' // rtoa(sum_en / nsmp) // ', "nucleus_nucleus": ' // rtoa(vnn) // ','
    write(uj, '(a)') '            "electron_environment": ' // rtoa(sum_f / nsmp) // ', "nucleus_environment": ' // &
         rtoa(e_nuc_env) // '},'
    write(uj, '(a)') '  "time": {"total": ' // rtoa(sec_all) // ', "field": ' // rtoa(sec_f) // ', "wavefunction": ' // &
         rtoa(sec_wf) // ', "rest": ' // rtoa(sec_all - sec_f - sec_wf) // ', "setup": ' // rtoa(sec_setup) // &
         ', "sampling": ' // rtoa(sec_all - sec_setup) // '},'
    ! One entry per rank: where it ran and its own times (rank 0's "time" above includes waiting for the others).
    write(uj, '(a,i0,a)') '  "n_ranks": ', par_size, ', "ranks": ['
    do r = 1, par_size
      write(uj, '(a)') '    {"rank": ' // itoa(r - 1) // ', "local_rank": ' // itoa(rank_info(2, r)) // ', "device": ' // &
           itoa(rank_info(1, r)) // ', "first_walker": ' // itoa(rank_info(3, r)) // ', "walkers": ' // &
           itoa(rank_info(4, r)) // ', "time": {"total": ' // rtoa(rank_times(1, r)) // ', "field": ' // &
           rtoa(rank_times(2, r)) // ', "wavefunction": ' // rtoa(rank_times(3, r)) // ', "setup": ' // &
           rtoa(rank_times(4, r)) // '}}' // trim(merge(', ', '  ', r < par_size))
    end do
    write(uj, '(a)') '  ],'
    write(uj, '(a)', advance='no') '  "block_energies": ['
    do i = 1, inp%n_blocks
      write(uj, '(a)', advance='no') rtoa(block_mean(i))
      if (i < inp%n_blocks) write(uj, '(a)', advance='no') ', '
    end do
    write(uj, '(a)') '],'
    write(uj, '(a)') '  "final_position_checksum": ' // rtoa(checksum)
    write(uj, '(a)') '}'
    close(uj)
    call rename_file(tmp, trim(inp%output_json))
  end subroutine

  subroutine rename_file(from, to)
    character(len=*), intent(in) :: from, to
    integer :: r
    r = rename(from, to)   ! GNU extension (gfortran); keeps the result file all-or-nothing
    if (r /= 0) call die(to // ': cannot rename ' // from // ' into place')
  end subroutine

end program qmmm_vmc
