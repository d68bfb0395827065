! vmc_input_keys.f90 -- every key of the namelist &vmc, declared once: name, type, default, allowed values,
! unit and meaning. The reader (vmc_input.f90) takes the defaults, type and range checks from this table, and
! `qmmm_vmc --keys-markdown` prints it as the key table of vmc_driver/README.md (test vmc_readme_keys keeps the
! two equal). Rules between keys (energy_every divides steps_per_block, ...) are code in vmc_input.f90.
module vmc_input_keys
  use, intrinsic :: iso_fortran_env, only: real64, int64
  use vmc_util, only: lower, itoa
  implicit none
  private
  public :: key_t, KEYS, MAX_CUBES, key_index, keys_markdown, range_text
  public :: K_INT, K_INT64, K_REAL, K_LOGICAL, K_STRING

  ! Value types: 32-bit and 64-bit integer, real(real64), logical, quoted string.
  integer, parameter :: K_INT = 1, K_INT64 = 2, K_REAL = 3, K_LOGICAL = 4, K_STRING = 5
  integer, parameter :: MAX_CUBES = 16
  integer(int64), parameter :: NO_ILIMIT = huge(1_int64)
  real(real64), parameter :: NO_RLIMIT = huge(1.0_real64)

  ! One key. Ranges: integers in [ilo, ihi]; reals in lo..hi with open '(' ')' or closed '[' ']' ends (and
  ! finite); strings one of the blank-separated choices (case-insensitive) where there are choices.
  type key_t
    character(len=24) :: name = ''
    integer :: kind = K_INT
    integer :: count = 1                   ! elements: 1, or more for an array key (key(i) = ...)
    character(len=24) :: default = ''      ! in namelist syntax; '' for none
    logical :: required = .false.          ! must be given (it has no default)
    logical :: nonempty = .false.          ! a string that must not be ''
    integer(int64) :: ilo = -NO_ILIMIT, ihi = NO_ILIMIT
    real(real64) :: lo = -NO_RLIMIT, hi = NO_RLIMIT
    character(len=2) :: ends = '[]'
    character(len=40) :: choices = ''
    character(len=16) :: unit = ''
    character(len=640) :: what = ''        ! one line of the README's table
  end type

  ! The table, in the README's order. Counts are capped where an int32 or rank 0's buffers would overflow.
  type(key_t), parameter :: KEYS(*) = [ &
    key_t(name='molden', kind=K_STRING, required=.true., nonempty=.true., &
      what='Molden file of the QM fragment: atoms, s-f shells, occupied MOs (see below)'), &
    key_t(name='cubes', kind=K_STRING, count=MAX_CUBES, &
      what='environment cube files (`.cube` or `.cube.gz`), up to 16: `cubes = ''a.cube'', ''b.cube''`'), &
    key_t(name='density_threshold', kind=K_REAL, default='1e-3', lo=0.0_real64, hi=1e3_real64, ends='[)', &
      unit='e/bohr^3', what='cells with rho >= threshold are kept'), &
    key_t(name='mm_charges', kind=K_STRING, default="''", what='MM point charges as the environment instead of ' // &
      'cubes: a text file of lines `x y z q` (bohr, e; physical charges: an electron at r feels -q/|r - R|), ' // &
      '`#` starts a comment (`data/water_mm/mm_charges.txt`)'), &
    key_t(name='jastrow', kind=K_LOGICAL, default='.true.', what='Jastrow factor on/off (`.false.`: the HF ' // &
      'determinant; its VMC energy is the HF energy plus the cusp correction''s bias, below)'), &
    key_t(name='b_ee', kind=K_REAL, default='1', lo=0.0_real64, hi=1e6_real64, ends='()', unit='1/bohr', &
      what='Jastrow e-e range parameter, see below'), &
    key_t(name='b_en', kind=K_REAL, default='1', lo=0.0_real64, hi=1e6_real64, ends='()', unit='1/bohr', &
      what='Jastrow e-n range parameter, see below'), &
    key_t(name='cusp_correction', kind=K_LOGICAL, default='.true.', &
      what='nuclear cusp correction of the MOs (`vmc_cusp.f90`); `.false.`: the raw Gaussian determinant'), &
    key_t(name='cusp_rc_z', kind=K_REAL, default='0.5', lo=0.0_real64, hi=2.0_real64, ends='(]', unit='bohr x Z', &
      what='correction radius at a nucleus of charge Z: min(`cusp_rc_z` / Z, `cusp_rc_max`, 0.4 x ' // &
      'nearest-neighbour distance)'), &
    key_t(name='cusp_rc_max', kind=K_REAL, default='0.2', lo=0.0_real64, hi=1.0_real64, ends='(]', unit='bohr', &
      what='largest correction radius (see `cusp_rc_z`)'), &
    key_t(name='n_walkers', kind=K_INT, default='64', ilo=1, ihi=10000000, unit='walkers', what='walkers'), &
    key_t(name='n_equil', kind=K_INT, default='100', ilo=0, ihi=1000000000, unit='sweeps', &
      what='equilibration sweeps (move length tuned to ~50 % acceptance; no field calls)'), &
    key_t(name='n_blocks', kind=K_INT, default='20', ilo=2, ihi=100000000, unit='blocks', &
      what='accumulation blocks (an error bar needs two)'), &
    key_t(name='steps_per_block', kind=K_INT, default='20', ilo=1, ihi=1000000000, unit='sweeps', &
      what='sweeps per block'), &
    key_t(name='energy_every', kind=K_INT, default='1', ilo=1, ihi=1000000000, unit='sweeps', &
      what='sweeps between local energies (divides `steps_per_block`). Sweeps are correlated over several ' // &
      'sweeps, so e.g. 4 costs little in error bar and saves the local energies'' time and, with ' // &
      '`field_calls = ''measured''`, the field''s'), &
    key_t(name='move_length', kind=K_REAL, default='0.5', lo=0.0_real64, hi=100.0_real64, ends='()', unit='bohr', &
      what='initial cube side of a move; scaled by min(1, d + 0.05), d = distance to the nearest nucleus'), &
    key_t(name='tune_moves', kind=K_LOGICAL, default='.true.', what='tune `move_length` during equilibration ' // &
      '(an acceptance over the run outside [0.05, 0.95], tuned or not, gets a warning naming the key to change)'), &
    key_t(name='seed', kind=K_INT64, default='1', what='random seed (every 64-bit integer is one)'), &
    key_t(name='first_walker', kind=K_INT64, default='0', ilo=0, ihi=2_int64**62, &
      what='global index of the first walker (for runs split over processes)'), &
    key_t(name='balance_walkers', kind=K_LOGICAL, default='.false.', what='MPI: after the equilibration, walker ' // &
      'shares proportional to each rank''s measured speed there (walkers move between ranks with their ' // &
      'positions; their random streams go with their global index, so the configurations do not change). ' // &
      'Off by default: the shares then depend on timing, and on the GPU a different batch can change a field ' // &
      'value in the last bits; on the CPU field the output stays bitwise the same (test `vmc_mpi_balance`)'), &
    key_t(name='devices', kind=K_STRING, default="''", what='CUDA device(s) for the ranks of a node: `''''` = ' // &
      '`$QMMM_DEVICE` if set, else node-local rank mod the node''s GPU count; `''2''` = device 2 for every ' // &
      'rank; `''0,2''` = that list dealt round robin'), &
    key_t(name='backend', kind=K_STRING, default="'auto'", choices='auto cpu cuda', what='field backend'), &
    key_t(name='precision', kind=K_STRING, default="'double'", choices='double single mixed', &
      what='field precision'), &
    key_t(name='field_calls', kind=K_STRING, default="'measured'", choices='measured batched per_walker', &
      what='`''measured''`: the field only where it is used, all electrons of all walkers in one call per ' // &
      'local energy (every `energy_every` sweeps); `''batched''`: one call per step with the moved electron of ' // &
      'every walker; `''per_walker''`: one call per walker and step (the reference FMO-QMC code''s structure). ' // &
      'The same energies in every mode (bitwise on the CPU field)'), &
    key_t(name='field_method', kind=K_STRING, default="'direct'", choices='direct split', &
      what='`''direct''`: every cell summed at every point (the reference); `''split''`: the range-split field ' // &
      '(`QMMM_METHOD_SPLIT`): near cells summed, the smooth rest interpolated from a grid over the region ' // &
      'below. Needs `precision = ''double''` or `''mixed''` (on a GPU, `''mixed''` computes the near cells'' ' // &
      'terms in single precision where their measured rounding fits the tolerance; the CPU evaluates it in double)'), &
    key_t(name='field_tolerance', kind=K_REAL, default='1e-7', lo=1e-11_real64, hi=1e-3_real64, ends='[]', &
      what='`''split''` only: requested max normwise error of the field'), &
    key_t(name='field_margin', kind=K_REAL, default='4.0', lo=0.0_real64, hi=100.0_real64, ends='[]', unit='bohr', &
      what='`''split''` only: the region is the box of the QM nuclei grown by this margin ' // &
      '(`qmmm_region_around`); points outside it are summed directly (correct, slower) and counted'), &
    key_t(name='n_threads', kind=K_INT, default='0', ilo=0, ihi=1024, unit='threads', what='OpenMP threads of ' // &
      'each process: its walkers are shared out over them, and the CPU field uses the same threads between the ' // &
      'walkers'' parallel loops (field calls stay on one thread). `0`: `OMP_NUM_THREADS` if set (more than ' // &
      '1024 is refused there too), else the node''s cores divided by the MPI ranks on the node. Results are ' // &
      'bitwise the same for any count'), &
    key_t(name='n_electrons', kind=K_INT, default='-1', ilo=-1, ihi=100000, unit='electrons', &
      what='if >= 0, must equal the electrons the Molden occupations give (`-1`: not checked)'), &
    key_t(name='charge', kind=K_INT, default='0', ilo=-100000, ihi=100000, unit='e', what='total charge of the ' // &
      'QM fragment: the Molden occupations must hold sum Z - `charge` electrons (Z from `[Atoms]`), always checked'), &
    key_t(name='recompute_every', kind=K_INT, default='50', ilo=1, ihi=1000000000, unit='sweeps', &
      what='sweeps between full recomputations of the inverse Slater matrices'), &
    key_t(name='forces', kind=K_LOGICAL, default='.false.', what='forces on the environment: the electrons'' ' // &
      'field at every site (MM charge, cell, nucleus of the environment) averaged over the blocks, plus the QM ' // &
      'nuclei''s exact field, as the force on each site (q E, hartree/bohr; with `pol_file` q E + (mu . grad) E, ' // &
      'mu the site''s permanent + induced dipole) with error bars from the blocks; the ' // &
      'force of the environment on each QM nucleus (exact); their sums. Printed (largest ten) and in the JSON ' // &
      '(`forces`)'), &
    key_t(name='forces_every', kind=K_INT, default='1', ilo=1, ihi=1000000000, unit='local energies', &
      what='`forces` only: local energies between force samples (divides `steps_per_block` / `energy_every`). ' // &
      'On the CPU the field at the sites can cost more than the local energies: sampling it less often saves ' // &
      'that time for a larger error bar (successive local energies are correlated, so less than it saves)'), &
    key_t(name='pol_file', kind=K_STRING, default="''", what='polarizable MM environment (instead of `cubes` ' // &
      'and `mm_charges`): a `.pot` file of CPPE and PElib (docs/user-guide/pot-format.md) whose charges and ' // &
      'permanent dipoles are the field, and whose polarizable sites get induced dipoles from the electrons'' ' // &
      'block-averaged field plus the QM nuclei''s (docs/user-guide/polarizable.md, `data/water_pol`). Off by default'), &
    key_t(name='pol_mode', kind=K_STRING, default="'scf'", choices='scf first', what='`pol_file` only: ' // &
      '`''scf''`: sampling and dipole updates alternate until the dipoles change less than their statistical ' // &
      'error (or `pol_max_updates`), then `n_blocks` with the dipoles fixed; `''first''`: the dipoles of the ' // &
      'first update only (no self-consistency, for comparison)'), &
    key_t(name='pol_blocks', kind=K_INT, default='4', ilo=2, ihi=1000000, unit='blocks', what='`pol_file` ' // &
      'only: blocks sampled before each dipole update (their field at the sites gives the dipoles and, block by ' // &
      'block, their error bars)'), &
    key_t(name='pol_max_updates', kind=K_INT, default='10', ilo=2, ihi=10000, unit='updates', what='`pol_mode ' // &
      '= ''scf''` only: dipole updates at most (a run that stops here without convergence warns)'), &
    key_t(name='pol_converge', kind=K_REAL, default='2', lo=0.0_real64, hi=100.0_real64, ends='(]', &
      what='`pol_mode = ''scf''` only: the dipoles have converged when the rms over the sites of their change ' // &
      'in an update is at most this many times the rms of its error bar (from the second update on; with 2, ' // &
      'pure noise passes with a probability near 1 and a drift above twice the noise does not)'), &
    key_t(name='pol_tolerance', kind=K_REAL, default='1e-8', lo=1e-15_real64, hi=1e-1_real64, ends='[]', &
      what='`pol_file` only: relative residual of each dipole solve (`qmmm_pol_solve`)'), &
    key_t(name='output_json', kind=K_STRING, default="'vmc_result.json'", nonempty=.true., &
      what='JSON summary, written only after a successful run (a second command-line argument overrides it); ' // &
      'checked before the run: a folder, or a folder that takes no new file, is refused')]

contains

  ! Position of name (case-insensitive) in KEYS; 0 if it is not a key.
  pure integer function key_index(name) result(k)
    character(len=*), intent(in) :: name
    do k = 1, size(KEYS)
      if (KEYS(k)%name == lower(name)) return
    end do
    k = 0
  end function

  function kind_name(key) result(s)
    type(key_t), intent(in) :: key
    character(len=:), allocatable :: s
    character(len=*), parameter :: NAMES(5) = [character(len=16) :: 'integer', 'integer (64-bit)', 'real', &
         'logical', 'string']
    s = trim(NAMES(key%kind))
    if (key%count > 1) s = 'up to ' // itoa(key%count) // ' ' // s // 's'
  end function

  ! The allowed values as the messages and the README show them: [1, 64], (0, 1000000), 'a', 'b' or 'c'.
  function range_text(key) result(s)
    type(key_t), intent(in) :: key
    character(len=:), allocatable :: s
    character(len=len(key%choices)) :: rest
    integer :: i
    s = ''
    select case (key%kind)
    case (K_INT, K_INT64)
      if (key%ilo /= -NO_ILIMIT .or. key%ihi /= NO_ILIMIT) &
           s = '[' // itoa(key%ilo) // ', ' // itoa(key%ihi) // ']'
    case (K_REAL)
      s = key%ends(1:1) // trim(bound_text(key%lo)) // ', ' // trim(bound_text(key%hi)) // key%ends(2:2)
    case (K_STRING)
      rest = adjustl(key%choices)
      do while (len_trim(rest) > 0)
        i = index(trim(rest), ' ')
        if (i == 0) i = len_trim(rest) + 1
        if (len(s) > 0 .and. len_trim(rest(i:)) == 0) then
          s = s // ' or '
        else if (len(s) > 0) then
          s = s // ', '
        end if
        s = s // '''' // rest(1:i-1) // ''''
        rest = adjustl(rest(i:))
      end do
      if (len(s) == 0 .and. key%nonempty) s = 'not empty'
    end select
  end function

  ! A range's bound: an integer as one, else compact (1.0E-11).
  pure function bound_text(x) result(s)
    real(real64), intent(in) :: x
    character(len=24) :: s
    write(s, '(g0)') x
    if (x == aint(x) .and. abs(x) < 1e7_real64) write(s, '(i0)') int(x)
    if (abs(x) >= 1e7_real64 .or. (x /= 0 .and. abs(x) < 1e-2_real64)) write(s, '(es8.1)') x
    s = adjustl(s)
  end function

  ! The README's key table (Markdown), one row per key.
  subroutine keys_markdown(unit)
    integer, intent(in) :: unit
    integer :: k
    character(len=:), allocatable :: default, range
    type(key_t) :: key
    write(unit, '(a)') '| key | type | default | allowed | unit | meaning |'
    write(unit, '(a)') '| --- | --- | --- | --- | --- | --- |'
    do k = 1, size(KEYS)
      key = KEYS(k)
      default = '`' // trim(key%default) // '`'
      if (key%required) then
        default = '(required)'
      else if (len_trim(key%default) == 0) then
        default = 'none'
      end if
      range = range_text(key)
      if (len(range) > 0 .and. (key%kind /= K_STRING .or. len_trim(key%choices) > 0)) range = '`' // range // '`'
      write(unit, '(a)') '| `' // trim(key%name) // '` | ' // kind_name(key) // ' | ' // default // ' | ' // &
           range // ' | ' // trim(key%unit) // ' | ' // trim(key%what) // ' |'
    end do
  end subroutine

end module vmc_input_keys
