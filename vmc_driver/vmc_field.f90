! vmc_field.f90 -- the coupling to the environment: the library's field U_ES built from the cube files,
! the constant energy of the QM nuclei in it, and the field calls of the sampler, timed here.
! U_ES(r) is the energy of one electron at r (hartree); a nucleus of charge Z at R has -Z U_ES(R).
! Modes (key field_calls): 'measured' (default) evaluates every electron of every walker in one call at
! each measurement, the only place the field is used; 'batched' and 'per_walker' evaluate the moved
! electron at every step (one call per step, or one per walker, as the published FMO-QMC code
! does). With the CUDA
! backend, 'measured' and 'batched' calls run asynchronously while the CPU works on the wavefunction.
! Method (key field_method): 'direct' sums every cell; 'split' is the library's range-split field over the
! box of the QM nuclei grown by field_margin, to field_tolerance (points outside it are summed directly).
! The environment is the cells and nuclei of the cubes or, with key mm_charges, MM point charges.
! Forces (key forces): the library's site accumulator sums the electrons' field at every site (weight -1 per
! electron) over each block's measurements; the QM nuclei's field at the sites and the environment's force on
! the QM nuclei are computed once here, exactly (direct double sums).
! Polarizable MM (key pol_file): the .pot file's sites are read into a qmmm_pol; their charges are the field's
! sources (as MM charges) and their dipoles (permanent, then permanent + induced: vmc_pol) are attached to it, so
! U_ES includes them. The site accumulator then serves the dipole solves (and the forces, when asked for). With
! forces, the run's blocks (dipoles fixed) also sum the electrons' field gradient at the sites (the accumulator's
! gradient option), for the dipoles' force (mu . grad) E; the QM nuclei's field gradient there is exact, as above.
module vmc_field
  use, intrinsic :: iso_fortran_env, only: real64, int64
  use, intrinsic :: iso_c_binding, only: c_loc
  use qmmm_accel
  use vmc_util
  use vmc_input, only: input_t
  use vmc_molden, only: basis_t
  use vmc_par, only: par_select_device, par_sum_int64, par_node_open, par_node_bcast_real, par_node_bcast_int64, &
       par_node_close
  implicit none
  private
  public :: env_field_t, field_setup, field_start, field_start_all, field_finish, field_eval_all, field_destroy
  public :: field_split_totals, field_forces_add, field_forces_take, field_set_induced, field_forces_grad_on

  type env_field_t
    logical :: active = .false.          ! cubes were given
    logical :: async = .false.           ! calls run asynchronously (CUDA; 'measured' and 'batched')
    logical :: pending = .false.         ! an asynchronous call is under way
    logical :: per_step = .false.        ! 'batched' or 'per_walker': the moved electron at every step
    character(len=16) :: calls = 'measured', backend = 'none'
    integer :: device = -1               ! CUDA device in use (-1: none)
    integer(int64) :: n_cells = 0, n_nuclei = 0
    real(real64) :: e_nuc_env = 0        ! -sum_A Z_A U_ES(R_A): QM nuclei in the environment
    integer(int64) :: ticks = 0          ! time in field calls (exposed time for asynchronous ones)
    real(real64) :: create_seconds = 0   ! qmmm_field_create (the split's grid and cell list)
    ! field_method = 'split': the region (lo xyz, hi xyz; bohr), what the library chose (alpha 1/bohr, r_cut and
    ! spacing bohr, normwise error estimate), its tables (grid values, bytes), and after field_split_totals the
    ! points evaluated and those outside the region (summed directly), over all ranks.
    logical :: split = .false.
    real(real64) :: region(6) = 0, alpha = 0, r_cut = 0, spacing = 0, error_estimate = 0
    integer(int64) :: grid_values = 0, bytes = 0, n_points = 0, n_outside = 0
    type(qmmm_field) :: f
    ! forces: the sites (cells or MM charges as read, then the environment's nuclei), their physical charges (e:
    ! -q of a cell, q of an MM charge, Z of a nucleus), the QM nuclei's field there (hartree/(e bohr)) and the
    ! environment's force on each QM nucleus (hartree/bohr); w: the electrons' weights (-1) for the accumulator.
    ! accum: the library's site accumulator is fed (forces or pol); forces: the forces report was asked for.
    logical :: forces = .false., accum = .false.
    integer(int64) :: n_sites = 0, n_charges = 0
    real(real64), allocatable :: site_xyz(:,:), site_q(:), e_qm_sites(:,:), f_qm(:,:), w(:)
    real(real64), allocatable :: take_phi(:)   ! the accumulator's phi, read every block into the same array
    character(len=512) :: mm_charges = ''
    ! pol_file: the polarizable sites (the field's first n_charges sites), their permanent dipoles p (e bohr), the
    ! field's nuclear constant without the induced dipoles, and the QM nuclei (for the induced dipoles' terms).
    logical :: pol_on = .false.
    type(qmmm_pol) :: pol
    character(len=512) :: pol_file = ''
    integer(int64) :: n_polarizable = 0
    real(real64), allocatable :: pol_p(:,:), qm_xyz(:,:), qm_z(:)
    real(real64) :: e_nuc_env_perm = 0
    ! pol_file with forces: mu, the dipoles in the field (permanent + induced, e bohr; (3, n_charges)); the QM
    ! nuclei's field gradient at the sites (6, n_sites: xx xy xz yy yz zz, hartree/(e bohr^2)); grad: the
    ! accumulator sums the electrons' field gradient too (from field_forces_grad_on).
    real(real64), allocatable :: mu(:,:), g_qm_sites(:,:)
    logical :: grad = .false.
  end type

contains

  subroutine check(st, what)
    integer, intent(in) :: st
    character(len=*), intent(in) :: what
    if (st /= QMMM_SUCCESS) call die(what // ': ' // qmmm_status_string(st) // ': ' // qmmm_error_message())
  end subroutine

  ! Reads the cubes into one environment, builds the field for the input's backend and precision (the
  ! GPU of this rank: node-local rank mod the node's GPUs unless 'devices' or QMMM_DEVICE say otherwise),
  ! and evaluates the nuclear constant. Without cubes the field stays inactive (all terms zero).
  ! n_threads: the process's threads; the CPU field uses them all, as its calls come between the
  ! sampler's parallel loops (never inside one), so walkers and field never compete for the cores.
  subroutine field_setup(fld, inp, bs, local_rank, local_size, n_threads)
    type(env_field_t), intent(inout) :: fld
    type(input_t), intent(in) :: inp
    type(basis_t), intent(in) :: bs
    integer, intent(inout) :: local_rank, local_size
    integer, intent(in) :: n_threads
    type(qmmm_options) :: opt
    real(real64) :: cell_volume, unuc(bs%natom)
    real(real64), allocatable, target :: cell_xyz(:,:), cell_q(:), nuc_xyz(:,:), nuc_z(:), mm_xyz(:,:), mm_q(:)
    real(real64), target :: region(6)
    integer :: st, backend_used, prec_used, device
    integer(int64) :: t0
    logical :: charges
    fld%calls = inp%field_calls
    fld%pol_on = len_trim(inp%pol_file) > 0
    charges = len_trim(inp%mm_charges) > 0 .or. fld%pol_on
    fld%active = inp%n_cubes > 0 .or. charges
    fld%per_step = fld%active .and. inp%field_calls /= 'measured'
    if (.not. fld%active) return
    if (fld%pol_on) then
      call pol_read(fld, inp, n_threads, mm_xyz, mm_q)
      allocate(cell_xyz(3, 0), cell_q(0), nuc_xyz(3, 0), nuc_z(0))
      cell_volume = 0
      fld%n_charges = size(mm_q, kind=int64)
    else if (charges) then
      fld%mm_charges = inp%mm_charges
      call mm_charges_read(trim(inp%mm_charges), mm_xyz, mm_q)
      allocate(cell_xyz(3, 0), cell_q(0), nuc_xyz(3, 0), nuc_z(0))
      cell_volume = 0
      fld%n_charges = size(mm_q, kind=int64)
    else
      call environment_read(inp, cell_xyz, cell_q, nuc_xyz, nuc_z, cell_volume)
      fld%n_cells = size(cell_q, kind=int64)
    end if
    fld%n_nuclei = size(nuc_z, kind=int64)
    device = -1
    if (inp%backend /= 'cpu') then
      call par_select_device(inp%devices, device, local_rank, local_size, st)
      call check(st, 'choosing the CUDA device (key ''devices'' = ''' // trim(inp%devices) // ''')')
    end if
    opt%backend = merge(QMMM_BACKEND_CPU, merge(QMMM_BACKEND_CUDA, QMMM_BACKEND_AUTO, inp%backend == 'cuda'), &
         inp%backend == 'cpu')
    opt%precision = merge(QMMM_PRECISION_SINGLE, merge(QMMM_PRECISION_MIXED, QMMM_PRECISION_DOUBLE, &
         inp%precision == 'mixed'), inp%precision == 'single')
    opt%n_threads = n_threads
    if (device >= 0) opt%device = device
    fld%split = inp%field_method == 'split'
    if (fld%split) then
      st = qmmm_region_around(bs%xyz, inp%field_margin, region)
      call check(st, 'the split field''s region (QM nuclei + field_margin)')
      opt%method = QMMM_METHOD_SPLIT
      opt%tolerance = inp%field_tolerance
      opt%region = c_loc(region)   ! read by create only
      fld%region = region
    end if
    t0 = clock_ticks()
    opt%cell_volume = cell_volume   ! as qmmm_field_create_from_env takes it from the environment
    st = create(fld%f, opt)
    call check(st, 'field for backend=''' // trim(inp%backend) // ''' precision=''' // trim(inp%precision) // &
         ''' field_method=''' // trim(inp%field_method) // '''')
    fld%create_seconds = clock_seconds(clock_ticks() - t0)
    if (fld%split) then
      st = qmmm_field_split_params(fld%f, fld%alpha, fld%r_cut, fld%spacing, fld%error_estimate)
      call check(st, 'qmmm_field_split_params')
      st = qmmm_field_split_stats(fld%f, grid_values=fld%grid_values, bytes=fld%bytes)
      call check(st, 'qmmm_field_split_stats')
    end if
    ! The constant is computed once, so always in double precision by the direct sum: with Z up to 8 a single
    ! or mixed field would put 8x its error into every local energy (mixed: 5e-8 hartree on the water dimer,
    ! most of its gap), and the split's error is the tolerance, not rounding. A direct double field is used as
    ! it is; otherwise a CPU direct double field of the same environment.
    ! The forces' constants (the QM nuclei's field at the sites, the sites' force on the QM nuclei) likewise.
    if (opt%precision == QMMM_PRECISION_DOUBLE .and. .not. fld%split) then
      st = qmmm_field_eval(fld%f, bs%xyz, unuc)
      call check(st, 'field at the QM nuclei')
      if (inp%forces .or. fld%pol_on) call forces_setup(fld%f)
    else
      block
        type(qmmm_options) :: o_dbl
        type(qmmm_field) :: f_dbl
        o_dbl%backend = QMMM_BACKEND_CPU
        o_dbl%n_threads = n_threads
        o_dbl%cell_volume = cell_volume
        st = create(f_dbl, o_dbl)
        call check(st, 'double-precision field for the QM nuclei')
        st = qmmm_field_eval(f_dbl, bs%xyz, unuc)
        call check(st, 'field at the QM nuclei')
        if (inp%forces .or. fld%pol_on) call forces_setup(f_dbl)
        st = qmmm_field_destroy(f_dbl)
      end block
    end if
    st = qmmm_field_backend(fld%f, backend_used, prec_used, fld%device)
    call check(st, 'qmmm_field_backend')
    fld%backend = merge('cuda', 'cpu ', backend_used == QMMM_BACKEND_CUDA)
    fld%async = backend_used == QMMM_BACKEND_CUDA .and. inp%field_calls /= 'per_walker'
    fld%e_nuc_env = -sum(bs%z * unuc)
    fld%e_nuc_env_perm = fld%e_nuc_env
    if (fld%pol_on) then
      fld%qm_xyz = bs%xyz; fld%qm_z = bs%z
    end if
  contains

    ! The field of the environment read above (cells or MM charges, and nuclei) with options o.
    integer function create(f, o) result(s)
      type(qmmm_field), intent(out) :: f
      type(qmmm_options), intent(in) :: o
      if (charges) then
        s = qmmm_field_create_charges(f, mm_xyz, mm_q, opt=o)
      else
        s = qmmm_field_create(f, cell_xyz, cell_q, nuc_xyz, nuc_z, opt=o)
      end if
      ! The .pot's permanent dipoles (zero where it has none): the sites the induced dipoles are added to later.
      if (s == QMMM_SUCCESS .and. fld%pol_on) s = qmmm_field_set_dipoles(f, mm_xyz, fld%pol_p)
    end function

    ! The sites and their physical charges, the QM nuclei's field at them and the environment's force on the QM
    ! nuclei (F_A = Z_A dU/dr at R_A: U is an electron's energy), from the double-precision direct field fd.
    subroutine forces_setup(fd)
      type(qmmm_field), intent(in) :: fd
      real(real64) :: grad(3, bs%natom), u(bs%natom)   ! u: not unuc, which the energy's constant keeps
      real(real64), allocatable :: phi(:)
      integer :: a
      integer(int64) :: nc
      fld%forces = inp%forces
      fld%accum = .true.
      nc = merge(fld%n_charges, fld%n_cells, charges)
      fld%n_sites = nc + fld%n_nuclei
      allocate(fld%site_xyz(3, fld%n_sites), fld%site_q(fld%n_sites), fld%e_qm_sites(3, fld%n_sites), &
           fld%f_qm(3, bs%natom), phi(fld%n_sites))
      if (charges) then
        fld%site_xyz(:, 1:nc) = mm_xyz; fld%site_q(1:nc) = mm_q
      else
        fld%site_xyz(:, 1:nc) = cell_xyz; fld%site_q(1:nc) = -cell_q
      end if
      fld%site_xyz(:, nc + 1:) = nuc_xyz; fld%site_q(nc + 1:) = nuc_z
      st = qmmm_field_eval_grad(fd, bs%xyz, u, grad)
      call check(st, 'field gradient at the QM nuclei')
      do a = 1, bs%natom
        fld%f_qm(:, a) = bs%z(a) * grad(:, a)
      end do
      st = qmmm_field_site_field(fd, bs%xyz, bs%z, phi, fld%e_qm_sites)
      call check(st, 'the QM nuclei''s field at the environment''s sites')
      if (inp%forces .and. fld%pol_on) then
        allocate(fld%g_qm_sites(6, fld%n_sites))
        st = qmmm_field_site_field_grad(fd, bs%xyz, bs%z, fld%g_qm_sites)
        call check(st, 'the QM nuclei''s field gradient at the environment''s sites')
      end if
    end subroutine
  end subroutine

  ! The .pot file of key pol_file into fld%pol (every rank reads it: a few thousand lines), its sites' positions
  ! and charges as the field's MM charges, and its permanent dipoles into fld%pol_p.
  subroutine pol_read(fld, inp, n_threads, xyz, q)
    type(env_field_t), intent(inout) :: fld
    type(input_t), intent(in) :: inp
    integer, intent(in) :: n_threads
    real(real64), allocatable, intent(out) :: xyz(:,:), q(:)
    integer(int64) :: n
    integer :: st
    fld%pol_file = inp%pol_file
    ! The solver on the CPU unless the field's backend asks for CUDA: the same bits on every rank (rank 0 solves
    ! and broadcasts anyway, vmc_pol) and no device contention for the few hundred sites of a typical shell.
    ! Every solve starts from the dipoles the field has (start_from_mu; vmc_pol says why).
    st = qmmm_pol_create_from_pot(fld%pol, trim(inp%pol_file), tolerance=inp%pol_tolerance, n_threads=n_threads, &
         backend=merge(QMMM_BACKEND_CUDA, QMMM_BACKEND_CPU, inp%backend == 'cuda'), start_from_mu=.true.)
    call check(st, trim(inp%pol_file) // ' (key ''pol_file'')')
    st = qmmm_pol_sizes(fld%pol, n, fld%n_polarizable)
    call check(st, 'qmmm_pol_sizes')
    allocate(xyz(3, n), q(n), fld%pol_p(3, n))
    st = qmmm_pol_sites(fld%pol, xyz=xyz, charge=q, dipole=fld%pol_p)
    call check(st, 'qmmm_pol_sites')
    fld%mu = fld%pol_p
  end subroutine

  ! MM point charges from a text file: one charge a line, x y z q (bohr, e); '#' starts a comment, blank lines are
  ! skipped. Any other line is an error naming the file and line.
  subroutine mm_charges_read(path, xyz, q)
    character(len=*), intent(in) :: path
    real(real64), allocatable, intent(out) :: xyz(:,:), q(:)
    character(len=1024) :: line
    real(real64) :: v(4)
    real(real64), allocatable :: buf(:,:)
    integer :: u, ios, n, ln, h
    character(len=256) :: msg
    open(newunit=u, file=path, status='old', action='read', iostat=ios, iomsg=msg)
    if (ios /= 0) call die(path // ': cannot open (' // trim(msg) // ')')
    allocate(buf(4, 1024))
    n = 0; ln = 0
    do
      read(u, '(a)', iostat=ios) line
      if (ios /= 0) exit
      ln = ln + 1
      h = index(line, '#')
      if (h > 0) line(h:) = ''
      if (len_trim(line) == 0) cycle
      read(line, *, iostat=ios) v
      if (ios /= 0) call die(path // ':' // itoa(ln) // ': expected x y z q (bohr, e), got ''' // trim(line) // '''')
      if (.not. all(is_finite(v))) call die(path // ':' // itoa(ln) // ': a value is not a finite number')
      if (any(abs(v(1:3)) > 1e6_real64)) call die(path // ':' // itoa(ln) // ': a coordinate beyond 1e6 bohr')
      n = n + 1
      if (n > size(buf, 2)) buf = reshape(buf, [4, 2 * size(buf, 2)], pad=[0.0_real64])
      buf(:, n) = v
    end do
    close(u)
    if (n == 0) call die(path // ': no charges (lines x y z q)')
    xyz = buf(1:3, 1:n); q = buf(4, 1:n)
  end subroutine

  ! The induced dipoles mu(3, n_charges) (e bohr) join the permanent ones in the field (every rank, the same bits),
  ! and the QM nuclei's energy in them joins the nuclear constant: -sum_A Z_A U_dip(R_A) = -mu . E_nuclei(sites),
  ! summed here in double in site order.
  subroutine field_set_induced(fld, mu)
    type(env_field_t), intent(inout) :: fld
    real(real64), intent(in) :: mu(:,:)
    real(real64), allocatable :: total(:,:)
    integer :: st
    allocate(total(3, size(mu, 2)))
    total = fld%pol_p + mu
    st = qmmm_field_update_dipoles(fld%f, total)
    call check(st, 'qmmm_field_update_dipoles (the induced dipoles)')
    fld%mu = total
    fld%e_nuc_env = fld%e_nuc_env_perm - sum(mu * fld%e_qm_sites(:, 1:fld%n_charges))
  end subroutine

  ! Adds the field of n electrons x(3, n) (weight -1 each) at every site to the library's accumulator (forces
  ! only; after any asynchronous call has finished).
  subroutine field_forces_add(fld, n, x)
    type(env_field_t), intent(inout) :: fld
    integer, intent(in) :: n
    real(real64), intent(in), target :: x(3, n)
    integer(int64) :: t0
    integer :: st
    if (.not. fld%accum) return
    t0 = clock_ticks()
    if (allocated(fld%w)) then
      if (size(fld%w) < n) deallocate(fld%w)
    end if
    if (.not. allocated(fld%w)) allocate(fld%w(n), source=-1.0_real64)
    st = qmmm_field_site_accum_add(fld%f, x, fld%w(1:n))
    call check(st, 'qmmm_field_site_accum_add (the electrons'' field at the sites)')
    fld%ticks = fld%ticks + (clock_ticks() - t0)
  end subroutine

  ! From now on (pol_file with forces: the run's blocks, dipoles fixed) the accumulator also sums the electrons'
  ! field gradient at the sites; it is zeroed (call it between blocks).
  subroutine field_forces_grad_on(fld)
    type(env_field_t), intent(inout) :: fld
    integer :: st
    if (.not. (fld%forces .and. fld%pol_on)) return
    st = qmmm_field_site_accum_set_grad(fld%f, .true.)
    call check(st, 'qmmm_field_site_accum_set_grad')
    fld%grad = .true.
  end subroutine

  ! The accumulator's sums since the last call, and the calls it holds; the accumulator is reset. v(1:3, k): the
  ! electrons' field at site k; with fld%grad, v(4:9, k): its gradient (xx xy xz yy yz zz).
  subroutine field_forces_take(fld, v, n_calls)
    type(env_field_t), intent(inout) :: fld
    real(real64), intent(out) :: v(:,:)
    integer(int64), intent(out) :: n_calls
    real(real64), allocatable :: e(:,:), g(:,:)
    integer :: st
    ! Without the gradient v is (3, n_sites): the sums go straight into it (no array of 3 n_sites made and touched
    ! every block).
    if (.not. allocated(fld%take_phi)) allocate(fld%take_phi(fld%n_sites))
    if (.not. fld%grad) then
      st = qmmm_field_site_accum_read(fld%f, fld%take_phi, v, n_calls=n_calls)
      call check(st, 'qmmm_field_site_accum_read')
    else
      allocate(e(3, fld%n_sites), g(6, fld%n_sites))
      st = qmmm_field_site_accum_read(fld%f, fld%take_phi, e, n_calls=n_calls)
      call check(st, 'qmmm_field_site_accum_read')
      v(1:3, :) = e
      st = qmmm_field_site_accum_read_grad(fld%f, g)
      call check(st, 'qmmm_field_site_accum_read_grad')
      v(4:9, :) = g
    end if
    st = qmmm_field_site_accum_reset(fld%f)
    call check(st, 'qmmm_field_site_accum_reset')
  end subroutine

  ! The environment's cells (centres, populations), nuclei and cell volume (0 for cubes of different dV), read
  ! once per node: the node's rank 0 reads and parses the cubes and passes the arrays to the node's other
  ! ranks, so setup does not grow with the ranks per node. The arrays are what each rank would have read, so
  ! results are bitwise those of every rank reading (ranks of one node with different inputs each read their
  ! own: par_node_open).
  subroutine environment_read(inp, cell_xyz, cell_q, nuc_xyz, nuc_z, cell_volume)
    type(input_t), intent(in) :: inp
    real(real64), allocatable, intent(out) :: cell_xyz(:,:), cell_q(:), nuc_xyz(:,:), nuc_z(:)
    real(real64), intent(out) :: cell_volume
    type(qmmm_env) :: env
    character(len=:), allocatable :: key
    character(len=32) :: thr
    integer(int64) :: n(2)
    real(real64) :: v(1)
    logical :: leader, shared
    integer :: st, i
    write(thr, '(es24.16e3)') inp%density_threshold
    key = thr
    do i = 1, inp%n_cubes
      key = key // '|' // trim(inp%cubes(i))
    end do
    call par_node_open(key, leader, shared)
    if (leader .or. .not. shared) then
      st = qmmm_env_create(env)
      call check(st, 'qmmm_env_create')
      do i = 1, inp%n_cubes
        st = qmmm_env_add_cube(env, trim(inp%cubes(i)), inp%density_threshold)
        call check(st, trim(inp%cubes(i)))
      end do
      st = qmmm_env_sizes(env, n(1), n(2), v(1))
      call check(st, 'qmmm_env_sizes')
      allocate(cell_xyz(3, n(1)), cell_q(n(1)), nuc_xyz(3, n(2)), nuc_z(n(2)))
      st = qmmm_env_copy(env, cell_xyz, cell_q, nuc_xyz, nuc_z)
      call check(st, 'qmmm_env_copy')
      st = qmmm_env_destroy(env)
    end if
    if (shared) then
      call par_node_bcast_int64(n, 2)
      call par_node_bcast_real(v, 1_int64)
      if (.not. leader) allocate(cell_xyz(3, n(1)), cell_q(n(1)), nuc_xyz(3, n(2)), nuc_z(n(2)))
      call par_node_bcast_real(cell_xyz, 3 * n(1))
      call par_node_bcast_real(cell_q, n(1))
      call par_node_bcast_real(nuc_xyz, 3 * n(2))
      call par_node_bcast_real(nuc_z, n(2))
    end if
    call par_node_close()
    cell_volume = v(1)
  end subroutine

  ! The split field's points evaluated and those outside its region, summed over the ranks (collective: every
  ! rank calls it, before the report).
  subroutine field_split_totals(fld)
    type(env_field_t), intent(inout) :: fld
    integer(int64) :: c(2)
    integer :: st
    c = 0
    if (fld%active .and. fld%split) then
      st = qmmm_field_split_stats(fld%f, n_points=c(1), n_outside=c(2))
      call check(st, 'qmmm_field_split_stats')
    end if
    call par_sum_int64(c)
    fld%n_points = c(1); fld%n_outside = c(2)
  end subroutine

  ! Starts the field at the proposed positions prop(3, nw) into uprop(nw): one call (asynchronous on
  ! CUDA) or one call per walker; field_finish completes it.
  subroutine field_start(fld, prop, uprop)
    type(env_field_t), intent(inout) :: fld
    ! contiguous and target: the asynchronous call keeps uprop's address until field_finish, so it must be the
    ! walkers' own array, never a packed temporary that is freed on return (that corrupted the heap on CUDA).
    real(real64), intent(in), contiguous, target :: prop(:,:)
    real(real64), intent(inout), contiguous, target :: uprop(:)
    integer(int64) :: t0
    integer :: w, st
    if (.not. fld%per_step) return
    t0 = clock_ticks()
    if (fld%async) then
      st = qmmm_field_eval_async(fld%f, prop, uprop)
      call check(st, 'qmmm_field_eval_async')
      fld%pending = .true.
    else if (fld%calls == 'batched') then
      st = qmmm_field_eval(fld%f, prop, uprop)
      call check(st, 'qmmm_field_eval')
    else
      do w = 1, size(uprop)
        st = qmmm_field_eval(fld%f, prop(:, w:w), uprop(w:w))
        call check(st, 'qmmm_field_eval')
      end do
    end if
    fld%ticks = fld%ticks + (clock_ticks() - t0)
  end subroutine

  ! U_ES at n points x(3, n) into u(n), all in one call ('measured': every electron of every walker;
  ! pos(3, ne, nw) and u(ne, nw) pass whole by sequence association). On CUDA it returns at once and
  ! field_finish completes it: x and u must stay untouched until then.
  subroutine field_start_all(fld, n, x, u)
    type(env_field_t), intent(inout) :: fld
    integer, intent(in) :: n
    real(real64), intent(in), target :: x(3, n)
    real(real64), intent(inout), target :: u(n)
    integer(int64) :: t0
    integer :: st
    if (.not. fld%active) return
    t0 = clock_ticks()
    if (fld%async) then
      st = qmmm_field_eval_async(fld%f, x, u)
      call check(st, 'qmmm_field_eval_async (all electrons)')
      fld%pending = .true.
    else
      st = qmmm_field_eval(fld%f, x, u)
      call check(st, 'qmmm_field_eval (all electrons)')
    end if
    fld%ticks = fld%ticks + (clock_ticks() - t0)
  end subroutine

  ! Waits for an asynchronous call (the exposed part of its time is counted).
  subroutine field_finish(fld)
    type(env_field_t), intent(inout) :: fld
    integer(int64) :: t0
    integer :: st
    if (.not. fld%pending) return
    t0 = clock_ticks()
    st = qmmm_field_wait(fld%f)
    call check(st, 'qmmm_field_wait')
    fld%pending = .false.
    fld%ticks = fld%ticks + (clock_ticks() - t0)
  end subroutine

  ! U_ES at n points x(3, n) in one call (x and u by sequence association: pos(3, ne, nw) passes whole).
  subroutine field_eval_all(fld, n, x, u)
    type(env_field_t), intent(inout) :: fld
    integer, intent(in) :: n
    real(real64), intent(in), target :: x(3, n)
    real(real64), intent(out), target :: u(n)
    integer(int64) :: t0
    integer :: st
    if (.not. fld%active) then
      u = 0
      return
    end if
    t0 = clock_ticks()
    st = qmmm_field_eval(fld%f, x, u)
    call check(st, 'qmmm_field_eval (all electrons)')
    fld%ticks = fld%ticks + (clock_ticks() - t0)
  end subroutine

  subroutine field_destroy(fld)
    type(env_field_t), intent(inout) :: fld
    integer :: st
    if (fld%active) st = qmmm_field_destroy(fld%f)
    if (fld%pol_on) st = qmmm_pol_destroy(fld%pol)
    fld%active = .false.; fld%pol_on = .false.
  end subroutine

end module vmc_field
