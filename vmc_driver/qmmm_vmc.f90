! qmmm_vmc -- variational Monte Carlo of a QM fragment in the electrostatic field of its environment.
! Usage: qmmm_vmc input.nml [result.json]    (namelist &vmc, see vmc_driver/README.md). Atomic units throughout.
!        qmmm_vmc --keys-markdown             (the key table of vmc_driver/README.md, from vmc_input_keys.f90)
! The steps: input (vmc_input), orbitals (vmc_molden), the memory the run needs against the machine's
! (vmc_memory), trial function (vmc_wavefunction), field (vmc_field), walkers (vmc_walkers), equilibration
! and blocks (vmc_sampler), sums over walkers and ranks (vmc_accum), the polarizable loop before the blocks
! (vmc_pol, key pol_file), output (vmc_report). MPI (vmc_par):
! walkers in contiguous shares per rank; within a rank on OpenMP threads; results do not depend on the rank
! or thread count (on the CPU field: bitwise). Rank 0 prints and writes the JSON; an error on any rank stops
! the whole job.
program qmmm_vmc
  use, intrinsic :: iso_fortran_env, only: real64, int64, output_unit
  use vmc_util
  use vmc_input
  use vmc_input_keys, only: keys_markdown, KEYS, key_index
  use vmc_molden
  use vmc_wavefunction
  use vmc_walkers
  use vmc_field
  use vmc_sampler
  use vmc_accum
  use vmc_forces
  use vmc_pol
  use vmc_report
  use vmc_par
  use vmc_memory
  implicit none
  type(input_t) :: inp
  type(basis_t) :: bs
  type(wf_t) :: wf
  type(wf_ws_t), allocatable :: ws(:)   ! one wavefunction workspace per thread
  type(env_field_t) :: fld
  type(walkers_t) :: wk
  type(sampler_t) :: smp
  type(accum_t) :: acc
  type(forces_t) :: frc
  type(pol_t) :: pol
  real(real64), allocatable :: e_sites(:,:)   ! rank 0: a block's mean field of the electrons at the sites
  real(real64), allocatable :: g_sites(:,:)   ! rank 0: its gradient (pol_file with forces: the dipoles' force)
  type(run_info_t) :: info
  integer :: ib, w0, nw, local_rank, local_size, nt, t, n_site_meas
  logical :: pol_done
  integer(int64) :: t_start, t_setup

  call par_init()
  call read_inputs(inp, bs)
  call wf_setup(wf, bs, inp%jastrow, inp%b_ee, inp%b_en, inp%cusp_correction, inp%cusp_rc_z, inp%cusp_rc_max)
  info%nw_total = inp%n_walkers; info%ne = wf%ne; info%na = wf%na; info%nb = wf%nb; info%nbf = bs%nbf
  ! Every rank reads the same input, so every rank finds this alike: one message, clean stop.
  if (inp%n_walkers < par_size) call par_stop_all(trim(inp%path) // ': key ''n_walkers'' = ' // itoa(inp%n_walkers) &
       // ' is less than the ' // itoa(par_size) // ' MPI ranks: every rank needs at least one walker')
  call par_share(inp%n_walkers, par_rank, w0, nw)
  t_start = clock_ticks()
  call par_node_rank(local_rank, local_size)
  nt = threads_start(inp%n_threads, local_size, int(KEYS(key_index('n_threads'))%ihi))
  ! Before anything sized by the walkers, blocks or threads is allocated: a run that cannot fit stops here.
  call memory_check(inp, bs, par_size, nt, par_root, local_size)
  allocate(ws(0:nt - 1))
  do t = 0, nt - 1
    call wf_workspace(wf, ws(t))
  end do
  call field_setup(fld, inp, bs, local_rank, local_size, nt)
  call walkers_setup(wk, wf, w0, nw, inp%seed, inp%first_walker)
  call walkers_start(wk, wf, ws)
  call gather_rank_info(info, fld, local_rank, local_size, w0, nw, nt)
  if (par_root) call report_header(inp, fld, info)

  call par_barrier()   ! ranks set up at different speeds (CUDA contexts): sampling starts together
  t_setup = clock_ticks() - t_start   ! reading cubes, building the field, first walkers
  call sampler_init(smp, inp, bs)
  call sampler_equilibrate(smp, wk, wf, ws, inp)
  ! Walker shares by measured speed (balance_walkers): positions move with the walkers, the rest is rebuilt.
  if (inp%balance_walkers .and. par_size > 1 .and. inp%n_equil > 0) then
    call par_rebalance(inp%n_walkers, real(nw, real64) * inp%n_equil / max(clock_seconds(smp%ticks_wf), 1e-9_real64), &
         wk%pos, w0, nw)
    call walkers_setup(wk, wf, w0, nw, inp%seed, inp%first_walker)
    call gather_rank_info(info, fld, local_rank, local_size, w0, nw, nt, rebalanced=.true.)
  end if

  call sampler_prepare(smp, wk, wf, ws, fld)
  call accum_init(acc, inp, nw, inp%n_walkers)
  call forces_init(frc, fld, inp%n_blocks)
  call pol_init(pol, fld, inp)
  n_site_meas = acc%n_meas / inp%forces_every   ! measurements with the field at the sites, per block
  ! Polarizable MM: blocks and dipole updates alternate (their energies are not the run's: the dipoles change),
  ! then the run's blocks sample with the dipoles fixed.
  if (pol%on) then
    if (par_root) call report_pol_start()
    pol_done = .false.
    do while (.not. pol_done)
      do ib = 1, inp%pol_blocks
        call sampler_block(smp, wk, wf, ws, fld, inp, acc%parts)
        call site_field_block(fld, ib, n_site_meas, inp%n_walkers, e_sites)
        if (par_root) call pol_block(pol, fld, e_sites)
      end do
      call pol_update(pol, fld, pol_done)
      ! The per-step field modes keep each electron's value from the step that moved it: with new dipoles in the
      ! field every value is taken again (as sampler_prepare does), so no electron keeps the old dipoles' term.
      if (fld%per_step) call field_eval_all(fld, wk%ne * wk%nw, wk%pos, wk%u)
    end do
  end if
  ! With dipoles and forces the run's blocks also sum the electrons' field gradient (the dipoles' force).
  call field_forces_grad_on(fld)
  if (par_root) call report_blocks_start(smp%delta)
  do ib = 1, inp%n_blocks
    call sampler_block(smp, wk, wf, ws, fld, inp, acc%parts)
    call accum_block(acc, ib, smp%n_acc, smp%n_try)
    call site_field_block(fld, ib, n_site_meas, inp%n_walkers, e_sites, g_sites)
    if (par_root .and. fld%accum) then
      call forces_block(frc, fld, ib, e_sites, g_sites)
      call pol_block(pol, fld, e_sites)
    end if
  end do
  if (allocated(e_sites)) deallocate(e_sites)   ! the program's own arrays stay to the end; this one need not
  if (allocated(g_sites)) deallocate(g_sites)
  call accum_finish(acc)
  if (par_root) call pol_finish(pol, fld, acc%mean, acc%err, acc%sum_f / real(acc%n_samples, real64), &
       acc%part_err(5))
  call forces_finish(frc, fld, acc%n_meas, acc%level)

  call field_split_totals(fld)   ! collective: the split field's points outside its region, all ranks
  call gather_results(info, wk%pos, [clock_seconds(clock_ticks() - t_start), clock_seconds(fld%ticks), &
       clock_seconds(smp%ticks_wf), clock_seconds(t_setup)])
  if (par_root) call report_final(inp, fld, smp, acc, info, frc, pol)
  call field_destroy(fld)
  call par_finalize()

contains

  ! Arguments, namelist and Molden file; any problem stops the run with the reader's message.
  subroutine read_inputs(inp, bs)
    type(input_t), intent(out) :: inp
    type(basis_t), intent(out) :: bs
    character(len=512) :: arg
    character(len=:), allocatable :: msg
    integer :: st
    real(real64) :: zsum
    character(len=*), parameter :: USAGE = 'usage: qmmm_vmc input.nml [result.json]   (namelist &vmc; ' // &
         'result.json overrides its output_json; keys in vmc_driver/README.md)' // new_line('a') // &
         '       qmmm_vmc --keys-markdown              (the table of keys, as in vmc_driver/README.md)'
    call get_command_argument(1, arg)
    if (arg == '--help' .or. arg == '-h' .or. arg == '--keys-markdown') then
      if (par_root .and. arg == '--keys-markdown') then
        call keys_markdown(output_unit)
      else if (par_root) then
        write(output_unit, '(a)') USAGE
      end if
      call par_finalize()
      stop
    end if
    if (len_trim(arg) == 0 .or. command_argument_count() > 2) call die(USAGE)
    call input_read(trim(arg), inp, st, msg)
    if (st /= 0) call die(msg)
    if (command_argument_count() == 2) then
      call get_command_argument(2, inp%output_json, status=st)
      if (st /= 0) call die('the result file name (second argument) is longer than ' // &
           itoa(len(inp%output_json)) // ' characters')
      if (par_root) call report_check_output(inp%output_json, 'the result file ''' // trim(inp%output_json) // &
           ''' (second argument)')
    else if (par_root) then
      call report_check_output(inp%output_json, input_where(inp, 'output_json') // ': key ''output_json'' = ''' // &
           trim(inp%output_json) // '''')
    end if
    call molden_read(trim(inp%molden), bs, st, msg)
    if (st /= 0) call die(msg)
    if (inp%n_electrons >= 0 .and. inp%n_electrons /= bs%nalpha + bs%nbeta) &
         call die(trim(arg) // ': key ''n_electrons'' = ' // itoa(inp%n_electrons) // ' but ' // trim(inp%molden) // &
         ' occupies ' // itoa(bs%nalpha) // ' alpha + ' // itoa(bs%nbeta) // ' beta orbitals')
    ! The occupied MOs against the nuclei and the declared charge: a Molden file cut between two MOs (or one
    ! written for another charge) reads as a smaller determinant and would run without a word.
    zsum = sum(bs%z)
    if (abs(zsum - inp%charge - (bs%nalpha + bs%nbeta)) > 1e-6_real64) &
         call die(trim(inp%molden) // ':' // itoa(bs%mo_line) // ': the occupied MOs hold ' // &
         itoa(bs%nalpha + bs%nbeta) // ' electrons (' // itoa(bs%nalpha) // ' alpha + ' // itoa(bs%nbeta) // &
         ' beta), but the nuclear charges sum to ' // ztoa(zsum) // ' and key ''charge'' = ' // itoa(inp%charge) // &
         ' (' // input_where(inp, 'charge') // '), so ' // ztoa(zsum - inp%charge) // &
         ' are expected (a file cut between MOs? an ion needs key ''charge'')')
    if (3_int64 * (bs%nalpha + bs%nbeta) * inp%n_walkers > huge(1)) call die(trim(arg) // ': key ''n_walkers'' = ' // &
         itoa(inp%n_walkers) // ' x ' // itoa(bs%nalpha + bs%nbeta) // ' electrons: more than 2^31 coordinates')
  end subroutine

  ! A sum of nuclear charges: an integer as one, else in full.
  function ztoa(z) result(s)
    real(real64), intent(in) :: z
    character(len=:), allocatable :: s
    if (abs(z - anint(z)) < 1e-9_real64 .and. abs(z) < 1e9_real64) then
      s = itoa(nint(z))
    else
      s = rtoa(z)
    end if
  end function

end program qmmm_vmc
