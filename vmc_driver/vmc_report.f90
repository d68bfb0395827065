! vmc_report.f90 -- what rank 0 prints (header, summary) and the JSON result (vmc_json), written only
! after everything succeeded and renamed into place, so a failed run leaves no result file.
module vmc_report
  use, intrinsic :: iso_fortran_env, only: real64, int64, output_unit
  use vmc_util
  use vmc_json
  use vmc_input, only: input_t, input_where
  use vmc_field, only: env_field_t
  use vmc_sampler, only: sampler_t
  use vmc_accum, only: accum_t
  use vmc_forces, only: forces_t, forces_report, forces_json
  use vmc_pol, only: pol_t, pol_report, pol_json
  use vmc_par, only: par_size, par_rank, par_root, par_have_mpi, par_host, par_gather_text, par_gather_int, &
       par_gather_real, par_gatherv_real
  use qmmm_accel, only: qmmm_gpu_mps_active, QMMM_SUCCESS
  implicit none
  private
  public :: run_info_t, gather_rank_info, gather_results, report_header, report_blocks_start, report_final, &
       report_pol_start, report_check_output

  ! What the report needs beyond the sampler's, accumulator's and field's own state (rank 0's copy).
  type run_info_t
    integer :: nw_total = 0, ne = 0, na = 0, nb = 0, nbf = 0
    character(len=176), allocatable :: rank_lines(:)   ! one line per rank: host, device, walkers, MPS
    integer, allocatable :: rank_info(:, :)            ! (6, ranks): device, local rank, first walker, walkers,
                                                       ! threads, MPS (MPS_NONE, MPS_OFF, MPS_ON, MPS_UNKNOWN)
    real(real64), allocatable :: rank_times(:, :)      ! (4, ranks): total, field, wavefunction, setup (s)
    real(real64) :: checksum = 0                       ! sum of all final electron coordinates
  end type

  ! Whether CUDA MPS serves a rank's GPU field (ranks sharing a GPU run concurrently only through it).
  integer, parameter :: MPS_NONE = -1, MPS_OFF = 0, MPS_ON = 1, MPS_UNKNOWN = 2
  character(len=7), parameter :: MPS_WORD(-1:2) = [character(len=7) :: 'none', 'off', 'on', 'unknown']

contains

  ! The temporary file the JSON is written to before it is renamed into place (the same folder: rename stays
  ! within one file system).
  function tmp_name(path) result(s)
    character(len=*), intent(in) :: path
    character(len=:), allocatable :: s
    s = trim(path) // '.tmp'
  end function

  ! Before the run: the result path is not empty, not a folder or other non-file, and its folder takes a new
  ! file (the temporary file is created and removed here). A run then cannot end in "cannot write" after all
  ! its work, or leave its temporary file behind. what names the path in messages (key and line, or argument).
  subroutine report_check_output(path, what)
    character(len=*), intent(in) :: path, what
    integer :: values(13), st, u, ios
    integer, parameter :: S_IFMT = int(o'170000'), S_IFREG = int(o'100000'), S_IFDIR = int(o'040000')
    character(len=256) :: msg
    if (len_trim(path) == 0) call die(what // ' is empty: the JSON result needs a file name')
    call stat(trim(path), values, st)   ! GNU extension; st /= 0: nothing there (yet)
    if (st == 0) then
      if (iand(values(3), S_IFMT) == S_IFDIR) call die(what // ' is a folder: the JSON result needs a file name')
      if (iand(values(3), S_IFMT) /= S_IFREG) call die(what // ' exists and is not a regular file')
    else if (path(len_trim(path):len_trim(path)) == '/') then
      call die(what // ' names a folder: the JSON result needs a file name')
    end if
    open(newunit=u, file=tmp_name(path), status='replace', action='write', iostat=ios, iomsg=msg)
    if (ios /= 0) call die(what // ': cannot create a file in its folder (' // trim(msg) // ')')
    close(u, status='delete')
  end subroutine

  ! Removes path if it is there (a failed result's temporary file).
  subroutine remove_file(path)
    character(len=*), intent(in) :: path
    integer :: u, ios
    open(newunit=u, file=path, status='old', iostat=ios)
    if (ios == 0) close(u, status='delete')
  end subroutine

  ! Warnings on stderr about a run whose numbers are not what they seem: an acceptance over the accumulation
  ! outside [ACC_LOW, ACC_HIGH] (walkers that hardly move: successive local energies are nearly the same, and
  ! the error bar cannot see it) or an error bar that is 0 to ten digits of the energy (every walker-averaged
  ! local energy the same up to rounding: no error estimate at all). Each names the key to change.
  subroutine warn_sampling(inp, smp, acc, acceptance)
    type(input_t), intent(in) :: inp
    type(sampler_t), intent(in) :: smp
    type(accum_t), intent(in) :: acc
    real(real64), intent(in) :: acceptance
    real(real64), parameter :: ACC_LOW = 0.05_real64, ACC_HIGH = 0.95_real64
    character(len=:), allocatable :: where, fix, what
    where = input_where(inp, 'move_length') // ': '
    if (.not. inp%tune_moves) then
      fix = 'change key ''move_length'' (or set tune_moves = .true.)'
    else if (inp%n_equil == 0) then
      fix = 'n_equil = 0 left no sweeps to tune it: change key ''move_length'' or raise key ''n_equil'''
    else
      fix = 'the tuning had ' // itoa(inp%n_equil) // ' sweeps: raise key ''n_equil'' or change key ''move_length'''
    end if
    what = 'acceptance ' // trim(adjustl(fixed(acceptance, 6, 4))) // ' over the run with moves of ' // &
         short(smp%delta) // ' bohr'
    if (acceptance > ACC_HIGH) then
      call warn(where // what // ' (above ' // short(ACC_HIGH) // '): the walkers hardly move, so the error bar ' // &
           'is too small; ' // fix)
    else if (.not. (acceptance >= ACC_LOW)) then
      call warn(where // what // ' (below ' // short(ACC_LOW) // '): nearly every move is rejected, so the error ' // &
           'bar is too small; ' // fix)
    end if
    ! 0 to ten digits of the energy: what is left is rounding in the sums, not a statistical error
    if (.not. (acc%err > 1e-10_real64 * max(1.0_real64, abs(acc%mean)))) call warn(where // 'the error bar is ' // &
         short(acc%err) // ' hartree, 0 to ten digits of the energy (' // what // '): it is not an error ' // &
         'estimate; ' // fix)
  end subroutine

  ! Every rank's place (host, node-local rank, device, walkers, threads, MPS) to rank 0; after par_rebalance
  ! (rebalanced) only the numbers, and rank 0 prints the new shares.
  subroutine gather_rank_info(info, fld, local_rank, local_size, w0, nw, nt, rebalanced)
    type(run_info_t), intent(inout) :: info
    type(env_field_t), intent(in) :: fld
    integer, intent(in) :: local_rank, local_size, w0, nw, nt
    logical, intent(in), optional :: rebalanced
    integer :: mps
    logical :: on
    if (.not. allocated(info%rank_info)) &
         allocate(info%rank_lines(par_size), info%rank_info(6, par_size), info%rank_times(4, par_size))
    mps = MPS_NONE
    if (fld%backend == 'cuda') then
      ! A pipe that cannot be inspected is reported, not fatal: MPS changes speed, never results.
      mps = MPS_UNKNOWN
      if (qmmm_gpu_mps_active(on) == QMMM_SUCCESS) mps = merge(MPS_ON, MPS_OFF, on)
    end if
    call par_gather_int([fld%device, local_rank, w0, nw, nt, mps], info%rank_info)
    if (present(rebalanced)) then
      if (par_root) write(output_unit, '(a,*(1x,i0))') '  walkers per rank after balancing (equilibration speed):', &
           info%rank_info(4, :)
      return
    end if
    call par_gather_text('  rank ' // itoa(par_rank) // ' host ' // trim(par_host()) // ' (local rank ' // &
         itoa(local_rank) // ' of ' // itoa(local_size) // ')  backend ' // trim(fld%backend) // '  device ' // &
         itoa(fld%device) // '  walkers ' // itoa(w0) // '..' // itoa(w0 + nw - 1) // '  threads ' // itoa(nt) // &
         trim(merge('  mps ' // MPS_WORD(mps), repeat(' ', 13), mps /= MPS_NONE)), info%rank_lines)
  end subroutine

  ! Final positions (their sum: the checksum of the configurations) and every rank's times to rank 0.
  subroutine gather_results(info, pos, times)
    type(run_info_t), intent(inout) :: info
    real(real64), intent(in) :: pos(:,:,:), times(4)
    real(real64), allocatable :: pos_all(:)
    allocate(pos_all(merge(3 * size(pos, 2) * info%nw_total, 1, par_root)))
    call par_gatherv_real(reshape(pos, [size(pos)]), pos_all)
    call par_gather_real(times, info%rank_times)
    info%checksum = sum(pos_all)
  end subroutine

  subroutine report_header(inp, fld, info)
    type(input_t), intent(in) :: inp
    type(env_field_t), intent(in) :: fld
    type(run_info_t), intent(in) :: info
    integer :: r
    write(output_unit, '(a)') 'qmmm_vmc: variational Monte Carlo (atomic units: bohr, hartree)'
    write(output_unit, '(a)') '  molden        ' // trim(inp%molden)
    write(output_unit, '(a,i0,a,i0,a,i0,a,i0)') '  electrons     ', info%ne, ' (', info%na, ' alpha, ', info%nb, &
         ' beta), basis functions ', info%nbf
    write(output_unit, '(a,i0,a,i0,a)') '  environment   ', fld%n_cells, ' cells, ', fld%n_nuclei, &
         ' nuclei; field backend ' // trim(fld%backend) // ', precision ' // trim(inp%precision) // ', calls ' // &
         trim(inp%field_calls)
    if (fld%split) call report_split_setup(inp, fld)
    write(output_unit, '(a,l1,a,l1)') '  jastrow       ', inp%jastrow, '  b_ee ' // fixed(inp%b_ee, 8, 4) // &
         '  b_en ' // fixed(inp%b_en, 8, 4) // '  cusp_correction ', inp%cusp_correction
    write(output_unit, '(a,i0,a,i0,a,i0,a,i0,a,i0,a,i0)') '  walkers ', info%nw_total, ', equilibration sweeps ', &
         inp%n_equil, ', blocks ', inp%n_blocks, ' x ', inp%steps_per_block, ' sweeps (local energy every ', &
         inp%energy_every, '), seed ', inp%seed
    write(output_unit, '(a,i0,a)') '  MPI ranks     ', par_size, trim(merge(' (built with MPI)   ', &
         ' (built without MPI)', par_have_mpi))
    do r = 1, par_size
      write(output_unit, '(a)') trim(info%rank_lines(r))
    end do
  end subroutine

  ! The range-split field: what was asked, the region, what the library chose and built, and its setup time.
  subroutine report_split_setup(inp, fld)
    type(input_t), intent(in) :: inp
    type(env_field_t), intent(in) :: fld
    write(output_unit, '(a,es8.1,a)') '  field method  split, tolerance ', inp%field_tolerance, &
         ', region = QM nuclei + ' // fixed(inp%field_margin, 6, 2) // ' bohr: (' // fixed(fld%region(1), 9, 3) // &
         fixed(fld%region(2), 9, 3) // fixed(fld%region(3), 9, 3) // ') .. (' // fixed(fld%region(4), 9, 3) // &
         fixed(fld%region(5), 9, 3) // fixed(fld%region(6), 9, 3) // ')'
    write(output_unit, '(a,es9.2,a,i0,a)') '                alpha ' // fixed(fld%alpha, 7, 3) // ' /bohr, r_cut ' // &
         fixed(fld%r_cut, 7, 3) // ' bohr, spacing ' // fixed(fld%spacing, 7, 4) // ' bohr, error estimate ', &
         fld%error_estimate, '; ', fld%grid_values, ' grid values, ' // &
         fixed(real(fld%bytes, real64) / 2.0_real64**20, 9, 1) // ' MiB; setup ' // &
         fixed(fld%create_seconds, 8, 3) // ' s'
  end subroutine

  ! The polarizable loop's table: one line per dipole update.
  subroutine report_pol_start()
    write(output_unit, '(a)') ''
    write(output_unit, '(a)') '  dipole updates (rms over the sites'' components, e bohr; converged: change / error <= ' // &
         'key pol_converge)'
    write(output_unit, '(a)') '  update blocks       rms mu   rms change change/err           E_pol        error  iter'
  end subroutine

  subroutine report_blocks_start(delta)
    real(real64), intent(in) :: delta
    write(output_unit, '(a)') '  move length   ' // fixed(delta, 8, 4) // ' bohr (after equilibration)'
    write(output_unit, '(a)') ''
    write(output_unit, '(a)') '  block    E(block)            running mean        error (blocks)   acceptance'
  end subroutine

  subroutine report_final(inp, fld, smp, acc, info, frc, pol)
    type(input_t), intent(in) :: inp
    type(forces_t), intent(in) :: frc
    type(pol_t), intent(in) :: pol
    type(env_field_t), intent(in) :: fld
    type(sampler_t), intent(in) :: smp
    type(accum_t), intent(in) :: acc
    type(run_info_t), intent(in) :: info
    real(real64) :: var, nsmp, t(4), acceptance, mk, mee, men, mf
    type(json_writer) :: js
    integer :: ios, r
    character(len=256) :: msg
    character(len=:), allocatable :: tmp
    nsmp = real(acc%n_samples, real64)
    var = acc%sum_e2 / nsmp - (acc%sum_e / nsmp)**2
    mk = acc%sum_k / nsmp; mee = acc%sum_ee / nsmp; men = acc%sum_en / nsmp; mf = acc%sum_f / nsmp
    acceptance = real(acc%n_acc, real64) / acc%n_try
    t = info%rank_times(:, 1)   ! this rank's (rank 0's) total, field, wavefunction, setup
    call warn_sampling(inp, smp, acc, acceptance)
    write(output_unit, '(a)') ''
    write(output_unit, '(a,i0,a,i0,a)') '  energy        ' // fixed(acc%mean, 19, 10) // ' +- ' // &
         fixed(acc%err, 14, 10) // ' hartree (reblocked, block length 2^', acc%level, ' local energies, ', &
         size(acc%series) / 2**acc%level, ' blocks)'
    if (.not. acc%converged) write(output_unit, '(a)') '  WARNING: the reblocking criterion was never met (too ' // &
         'short a run for its correlation time): the error bar is not reliable'
    write(output_unit, '(a)') '  variance      ' // fixed(var, 19, 10)
    write(output_unit, '(a)') '  acceptance    ' // fixed(acceptance, 10, 4) // '   equilibration ' // &
         fixed(real(smp%n_acc_eq, real64) / max(smp%n_try_eq, 1_int64), 10, 4)
    write(output_unit, '(a)') '  parts (mean)  kinetic, e-e, e-n, n-n, electrons-environment, nuclei-environment:'
    write(output_unit, '(a)') repeat(' ', 16) // row([mk, mee, men, smp%vnn, mf, fld%e_nuc_env])
    write(output_unit, '(a)') '  (error bars)  ' // row([acc%part_err(2:4), 0.0_real64, acc%part_err(5), 0.0_real64])
    write(output_unit, '(a)') '  time (s)      total ' // fixed(t(1), 10, 3) // '  field ' // fixed(t(2), 10, 3) // &
         '  wavefunction ' // fixed(t(3), 10, 3) // '  rest ' // fixed(t(1) - t(2) - t(3), 10, 3)
    write(output_unit, '(a)') '                (of which setup: cubes, field, walkers ' // fixed(t(4), 10, 3) // ')'
    if (fld%split) write(output_unit, '(a,i0,a,i0,a)') '  split field   ', fld%n_points, &
         ' points evaluated, ', fld%n_outside, ' outside the region (summed directly: ' // &
         fixed(100 * real(fld%n_outside, real64) / max(fld%n_points, 1_int64), 7, 3) // ' %)'
    if (par_size > 1) write(output_unit, '(a)') '  ranks (max)   field ' // &
         fixed(maxval(info%rank_times(2, :)), 10, 3) // '  wavefunction ' // &
         fixed(maxval(info%rank_times(3, :)), 10, 3) // '  setup ' // fixed(maxval(info%rank_times(4, :)), 10, 3)

    call pol_report(pol, fld)
    call forces_report(frc, fld)

    tmp = tmp_name(inp%output_json)
    call js%open(tmp, ios, msg)
    if (ios /= 0) call die(trim(inp%output_json) // ': cannot write (' // trim(msg) // ')')
    call js%put('program', 'qmmm_vmc')
    call js%put('units', 'hartree, bohr, seconds')
    call js%put('molden', trim(inp%molden))
    call js%put('backend', trim(fld%backend))
    call js%put('precision', trim(inp%precision))
    call js%put('field_calls', trim(inp%field_calls))
    call js%put('field_method', trim(inp%field_method))
    if (fld%split) then
      call js%begin_object('field_split')   ! bohr; tolerance and error_estimate normwise; setup_seconds: create
      call js%put('tolerance', inp%field_tolerance)
      call js%put('margin', inp%field_margin)
      call js%put('region', fld%region)
      call js%put('alpha', fld%alpha)
      call js%put('r_cut', fld%r_cut)
      call js%put('spacing', fld%spacing)
      call js%put('error_estimate', fld%error_estimate)
      call js%put('grid_values', fld%grid_values)
      call js%put('bytes', fld%bytes)
      call js%put('setup_seconds', fld%create_seconds)
      call js%put('n_points', fld%n_points)            ! all ranks
      call js%put('n_outside', fld%n_outside)
      call js%end()
    end if
    call js%put('n_cells', fld%n_cells)
    call js%put('n_electrons', info%ne)
    call js%put('n_walkers', info%nw_total)
    call js%put('seed', inp%seed)
    call js%put('jastrow', inp%jastrow)
    call js%put('cusp_correction', inp%cusp_correction)
    call js%put('n_equil', inp%n_equil)
    call js%put('n_blocks', inp%n_blocks)
    call js%put('steps_per_block', inp%steps_per_block)
    call js%put('energy_every', inp%energy_every)
    call js%put('energy', acc%mean)
    call js%put('error', acc%err)
    call js%put('reblock_level', acc%level)
    call js%put('reblock_blocks', size(acc%series) / 2**acc%level)   ! blocks of the chosen length
    call js%put('reblock_converged', acc%converged)
    call js%put('variance', var)
    call js%put('acceptance', acceptance)
    call js%put('move_length', smp%delta)
    call js%begin_object('parts')
    call js%put('kinetic', mk)
    call js%put('electron_electron', mee)
    call js%put('electron_nucleus', men)
    call js%put('nucleus_nucleus', smp%vnn)
    call js%put('electron_environment', mf)
    call js%put('nucleus_environment', fld%e_nuc_env)
    call js%end()
    call js%begin_object('parts_error')   ! reblocked error bars of the means above (constants: none)
    call js%put('kinetic', acc%part_err(2))
    call js%put('electron_electron', acc%part_err(3))
    call js%put('electron_nucleus', acc%part_err(4))
    call js%put('electron_environment', acc%part_err(5))
    call js%end()
    ! rank 0's times include waiting for the others; every rank's own follow under "ranks"
    call put_times(t, .true.)
    call js%put('n_ranks', par_size)
    call js%put('n_threads', info%rank_info(5, 1))   ! rank 0's (every rank's are under "ranks")
    call js%begin_array('ranks')
    do r = 1, par_size
      call js%begin_object()
      call js%put('rank', r - 1)
      call js%put('local_rank', info%rank_info(2, r))
      call js%put('device', info%rank_info(1, r))
      call js%put('first_walker', info%rank_info(3, r))
      call js%put('walkers', info%rank_info(4, r))
      call js%put('threads', info%rank_info(5, r))
      if (info%rank_info(6, r) /= MPS_NONE) call js%put('mps', trim(MPS_WORD(info%rank_info(6, r))))
      call put_times(info%rank_times(:, r), .false.)
      call js%end()
    end do
    call js%end()
    call js%put('block_energies', acc%block_mean)
    call pol_json(pol, fld, js)
    call forces_json(frc, fld, js)
    call js%put('final_position_checksum', info%checksum)
    call js%close()
    if (rename(tmp, trim(inp%output_json)) /= 0) then   ! GNU extension; keeps the result file all-or-nothing
      call remove_file(tmp)
      call die(trim(inp%output_json) // ': cannot rename ' // tmp // ' into place')
    end if

  contains

    ! The energy parts' columns (16 characters each).
    function row(x) result(s)
      real(real64), intent(in) :: x(:)
      character(len=:), allocatable :: s
      integer :: i
      s = ''
      do i = 1, size(x)
        s = s // fixed(x(i), 16, 8)
      end do
    end function

    subroutine put_times(tt, whole)
      real(real64), intent(in) :: tt(4)
      logical, intent(in) :: whole
      call js%begin_object('time')
      call js%put('total', tt(1))
      call js%put('field', tt(2))
      call js%put('wavefunction', tt(3))
      if (whole) call js%put('rest', tt(1) - tt(2) - tt(3))
      call js%put('setup', tt(4))
      if (whole) call js%put('sampling', tt(1) - tt(4))
      call js%end()
    end subroutine

  end subroutine

end module vmc_report
