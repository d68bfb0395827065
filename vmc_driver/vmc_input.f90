! vmc_input.f90 -- the namelist &vmc (documented in vmc_driver/README.md), checked before any work:
! unknown keys are reported with file and line (a scan of the text before the namelist read, since
! compilers name the key but not the line), every value is range-checked by name.
module vmc_input
  use, intrinsic :: iso_fortran_env, only: real64, int64
  use vmc_util
  implicit none
  private
  public :: input_t, input_read, MAX_CUBES

  integer, parameter :: MAX_CUBES = 16
  character(len=*), parameter :: KEYS(*) = [character(len=24) :: 'molden', 'cubes', 'density_threshold', &
       'jastrow', 'b_ee', 'b_en', 'n_walkers', 'n_equil', 'n_blocks', 'steps_per_block', 'move_length', &
       'tune_moves', 'seed', 'backend', 'precision', 'field_calls', 'n_threads', 'n_electrons', &
       'recompute_every', 'output_json', 'first_walker', 'cusp_correction', 'devices', 'energy_every', &
       'cusp_rc_z', 'cusp_rc_max', 'balance_walkers']

  type input_t
    character(len=512) :: path = ''       ! the input file itself (for messages)
    character(len=512) :: molden = '', cubes(MAX_CUBES) = '', output_json = ''
    real(real64) :: density_threshold = 1e-3_real64, b_ee = 1, b_en = 1, move_length = 0.5_real64
    logical :: jastrow = .false., tune_moves = .true.
    logical :: cusp_correction = .true.   ! nuclear cusp correction of the MOs (vmc_cusp.f90)
    real(real64) :: cusp_rc_z = 0.5_real64, cusp_rc_max = 0.2_real64   ! its radius: min(rc_z / Z, rc_max) bohr
    integer :: energy_every = 1           ! sweeps between local energies
    logical :: balance_walkers = .false.  ! MPI: walker shares by each rank's equilibration speed
    integer :: n_walkers = 0, n_equil = 0, n_blocks = 0, steps_per_block = 0, n_threads = 0
    integer :: n_electrons = -1, recompute_every = 0, n_cubes = 0
    integer(int64) :: seed = 0, first_walker = 0
    character(len=16) :: backend = 'auto', precision = 'double', field_calls = 'batched'
    character(len=64) :: devices = ''   ! CUDA device spec for the ranks of a node ('' = QMMM_DEVICE or round robin)
  end type

contains

  subroutine input_read(path, inp)
    character(len=*), intent(in) :: path
    type(input_t), intent(out) :: inp
    character(len=512) :: molden, cubes(MAX_CUBES), output_json
    real(real64) :: density_threshold, b_ee, b_en, move_length, cusp_rc_z, cusp_rc_max
    logical :: jastrow, tune_moves, cusp_correction, balance_walkers
    integer :: n_walkers, n_equil, n_blocks, steps_per_block, n_threads, n_electrons, recompute_every, energy_every
    integer(int64) :: seed, first_walker
    character(len=16) :: backend, precision, field_calls
    character(len=64) :: devices
    namelist /vmc/ molden, cubes, density_threshold, jastrow, b_ee, b_en, n_walkers, n_equil, n_blocks, &
         steps_per_block, move_length, tune_moves, seed, backend, precision, field_calls, n_threads, &
         n_electrons, recompute_every, output_json, first_walker, cusp_correction, devices, energy_every, &
         cusp_rc_z, cusp_rc_max, balance_walkers
    integer :: u, ios, i
    character(len=512) :: msg

    molden = ''; cubes = ''; output_json = 'vmc_result.json'
    density_threshold = 1e-3_real64; b_ee = 1; b_en = 1; move_length = 0.5_real64
    jastrow = .true.; tune_moves = .true.; cusp_correction = .true.
    n_walkers = 64; n_equil = 100; n_blocks = 20; steps_per_block = 20; n_threads = 0
    n_electrons = -1; recompute_every = 50; seed = 1; first_walker = 0
    backend = 'auto'; precision = 'double'; field_calls = 'batched'; devices = ''
    energy_every = 1; cusp_rc_z = 0.5_real64; cusp_rc_max = 0.2_real64; balance_walkers = .false.

    call scan_keys(path)
    open(newunit=u, file=path, status='old', action='read', iostat=ios, iomsg=msg)
    if (ios /= 0) call die(trim(path) // ': cannot open input (' // trim(msg) // ')')
    read(u, nml=vmc, iostat=ios, iomsg=msg)
    close(u)
    if (ios /= 0) call die(trim(path) // ': namelist &vmc: ' // trim(msg))

    inp%molden = molden; inp%cubes = cubes; inp%output_json = output_json
    inp%density_threshold = density_threshold; inp%b_ee = b_ee; inp%b_en = b_en; inp%move_length = move_length
    inp%jastrow = jastrow; inp%tune_moves = tune_moves; inp%cusp_correction = cusp_correction
    inp%n_walkers = n_walkers; inp%n_equil = n_equil; inp%n_blocks = n_blocks
    inp%steps_per_block = steps_per_block; inp%n_threads = n_threads; inp%n_electrons = n_electrons
    inp%recompute_every = recompute_every; inp%seed = seed; inp%first_walker = first_walker
    inp%backend = lower(adjustl(backend)); inp%precision = lower(adjustl(precision))
    inp%field_calls = lower(adjustl(field_calls))
    inp%devices = adjustl(devices)
    inp%energy_every = energy_every; inp%cusp_rc_z = cusp_rc_z; inp%cusp_rc_max = cusp_rc_max
    inp%balance_walkers = balance_walkers

    if (len_trim(inp%molden) == 0) call bad('molden', 'is required (path of the Molden file)')
    inp%n_cubes = 0
    do i = 1, MAX_CUBES
      if (len_trim(inp%cubes(i)) == 0) exit
      inp%n_cubes = i
    end do
    if (any(len_trim(inp%cubes(inp%n_cubes + 1:)) > 0)) call bad('cubes', 'has a gap (empty entry before a used one)')
    if (.not. (inp%density_threshold >= 0 .and. inp%density_threshold < 1e3_real64)) &
         call bad('density_threshold', 'must be a finite value >= 0 (e/bohr^3)')
    if (.not. (inp%b_ee > 0 .and. inp%b_ee < 1e6_real64)) call bad('b_ee', 'must be > 0 (1/bohr)')
    if (.not. (inp%b_en > 0 .and. inp%b_en < 1e6_real64)) call bad('b_en', 'must be > 0')
    if (inp%n_walkers < 1) call bad('n_walkers', 'must be >= 1 (got ' // itoa(inp%n_walkers) // ')')
    if (inp%n_equil < 0) call bad('n_equil', 'must be >= 0')
    if (inp%n_blocks < 2) call bad('n_blocks', 'must be >= 2 (an error bar needs two blocks)')
    if (inp%steps_per_block < 1) call bad('steps_per_block', 'must be >= 1')
    if (inp%energy_every < 1) call bad('energy_every', 'must be >= 1 (sweeps)')
    if (mod(inp%steps_per_block, inp%energy_every) /= 0) call bad('energy_every', 'must divide steps_per_block (' // &
         itoa(inp%steps_per_block) // ')')
    if (.not. (inp%cusp_rc_z > 0 .and. inp%cusp_rc_z <= 2)) call bad('cusp_rc_z', 'must be in (0, 2] (bohr x Z)')
    if (.not. (inp%cusp_rc_max > 0 .and. inp%cusp_rc_max <= 1)) call bad('cusp_rc_max', 'must be in (0, 1] bohr')
    if (.not. (inp%move_length > 0 .and. inp%move_length < 100)) call bad('move_length', 'must be in (0, 100) bohr')
    if (inp%n_threads < 0) call bad('n_threads', 'must be >= 0 (0: library default)')
    if (inp%recompute_every < 1) call bad('recompute_every', 'must be >= 1 (sweeps)')
    if (inp%first_walker < 0) call bad('first_walker', 'must be >= 0')
    if (len_trim(inp%output_json) == 0) call bad('output_json', 'must not be empty')
    select case (inp%backend)
    case ('auto', 'cpu', 'cuda')
    case default
      call bad('backend', "must be 'auto', 'cpu' or 'cuda' (got '" // trim(inp%backend) // "')")
    end select
    select case (inp%precision)
    case ('double', 'single', 'mixed')
    case default
      call bad('precision', "must be 'double', 'single' or 'mixed' (got '" // trim(inp%precision) // "')")
    end select
    select case (inp%field_calls)
    case ('batched', 'per_walker')
    case default
      call bad('field_calls', "must be 'batched' or 'per_walker' (got '" // trim(inp%field_calls) // "')")
    end select
  contains
    subroutine bad(key, what)
      character(len=*), intent(in) :: key, what
      call die(trim(path) // ': key ''' // key // ''' ' // what)
    end subroutine
  end subroutine

  ! Every identifier followed by '=' (outside quotes and ! comments) must be a known key.
  subroutine scan_keys(path)
    character(len=*), intent(in) :: path
    integer :: u, ios, ln, i, j, k
    character(len=1024) :: line
    character(len=1) :: q
    character(len=256) :: msg
    logical :: found_group
    open(newunit=u, file=path, status='old', action='read', iostat=ios, iomsg=msg)
    if (ios /= 0) call die(trim(path) // ': cannot open input (' // trim(msg) // ')')
    ln = 0
    found_group = .false.
    do
      read(u, '(a)', iostat=ios) line
      if (ios /= 0) exit
      ln = ln + 1
      if (index(lower(line), '&vmc') > 0) found_group = .true.
      q = ' '
      do i = 1, len_trim(line)
        if (q /= ' ') then
          if (line(i:i) == q) q = ' '
          cycle
        end if
        if (line(i:i) == '''' .or. line(i:i) == '"') then
          q = line(i:i); cycle
        end if
        if (line(i:i) == '!') exit
        if (line(i:i) /= '=') cycle
        j = i - 1
        do while (j > 0)
          if (line(j:j) /= ' ') exit
          j = j - 1
        end do
        if (j > 0) then
          if (line(j:j) == ')') then   ! cubes(2) = ...
            do while (j > 0)
              if (line(j:j) == '(') exit
              j = j - 1
            end do
            j = j - 1
          end if
        end if
        k = j
        do while (k > 0)
          if (index('abcdefghijklmnopqrstuvwxyz0123456789_', lower(line(k:k))) == 0) exit
          k = k - 1
        end do
        if (j <= k) call die(trim(path) // ':' // itoa(ln) // ': "=" without a key name')
        if (.not. any(KEYS == lower(line(k+1:j)))) &
             call die(trim(path) // ':' // itoa(ln) // ': unknown key ''' // line(k+1:j) // ''' in &vmc')
      end do
    end do
    close(u)
    if (.not. found_group) call die(trim(path) // ': no &vmc namelist group')
  end subroutine

end module vmc_input
