! vmc_walkers.f90 -- the walkers of one process: electron positions, inverse Slater matrices, the field
! value at every electron and the random stream of each walker, plus the proposal of the current step.
! Walker w of this process is walker first + w - 1 (0-based) of the whole run; its random numbers depend
! only on (seed, first_walker + that index), so its path does not depend on how walkers are shared out.
module vmc_walkers
  use, intrinsic :: iso_fortran_env, only: real64, int64
  use vmc_util
  use vmc_rng
  use vmc_wavefunction
  use vmc_par, only: thread_id
  implicit none
  private
  public :: walkers_t, walkers_setup, walkers_start, walkers_recompute

  type walkers_t
    integer :: nw = 0, ne = 0, first = 0          ! walkers here, electrons, global index of walker 1
    real(real64), allocatable :: pos(:,:,:)       ! (3, ne, nw) electron positions, bohr
    real(real64), allocatable :: ainva(:,:,:)     ! (na, na, nw) inverse transposed alpha Slater matrix
    real(real64), allocatable :: ainvb(:,:,:)     ! (nb, nb, nw) the same for beta
    real(real64), allocatable :: u(:,:)           ! (ne, nw) U_ES at each electron, hartree
    integer(int64), allocatable :: key(:)         ! (nw) random stream
    ! The step in progress: the moved electron's proposed position in every walker, its field value,
    ! determinant ratio, move cube side and whether the move was accepted.
    real(real64), allocatable :: prop(:,:), uprop(:), ratio(:), dcur(:)
    logical, allocatable :: acc(:)
  end type

contains

  ! Storage for nw walkers starting at global index first (positions kept if already there and of the
  ! right size: after par_rebalance they arrive with the walkers). Keys from (seed, first_walker + index).
  subroutine walkers_setup(wk, wf, first, nw, seed, first_walker)
    type(walkers_t), intent(inout) :: wk
    type(wf_t), intent(in) :: wf
    integer, intent(in) :: first, nw
    integer(int64), intent(in) :: seed, first_walker
    integer :: w, na, nb
    na = max(wf%na, 1); nb = max(wf%nb, 1)
    wk%nw = nw; wk%ne = wf%ne; wk%first = first
    if (allocated(wk%pos)) then
      if (size(wk%pos, 3) /= nw) deallocate(wk%pos)
    end if
    if (.not. allocated(wk%pos)) allocate(wk%pos(3, wf%ne, nw))
    if (allocated(wk%ainva)) deallocate(wk%ainva, wk%ainvb, wk%u, wk%key, wk%prop, wk%uprop, wk%ratio, wk%dcur, wk%acc)
    allocate(wk%ainva(na, na, nw), wk%ainvb(nb, nb, nw), wk%u(wf%ne, nw), wk%key(nw), wk%prop(3, nw), wk%uprop(nw), &
         wk%ratio(nw), wk%dcur(nw), wk%acc(nw))
    wk%ainva = 0; wk%ainvb = 0; wk%u = 0
    do w = 1, nw
      wk%key(w) = rng_key(seed, first_walker + first + w - 1)
    end do
  end subroutine

  ! Electrons start around the nuclei (alpha and beta dealt over atoms by Z), drawn from the walker's
  ! stream at negative step numbers; redrawn while a Slater matrix is singular.
  subroutine walkers_start(wk, wf, ws)
    type(walkers_t), intent(inout) :: wk
    type(wf_t), intent(in) :: wf
    type(wf_ws_t), intent(inout) :: ws(0:)
    integer :: w, e, k, a, try, slot, ne, na, nsa, nsb
    integer :: sites_a(wf%ne + 1), sites_b(wf%ne + 1)
    logical :: ok
    ne = wf%ne; na = wf%na
    nsa = 0; nsb = 0
    do a = 1, wf%bs%natom
      do k = 1, (nint(wf%bs%z(a)) + 1) / 2
        nsa = nsa + 1; if (nsa <= ne) sites_a(nsa) = a
      end do
      do k = 1, nint(wf%bs%z(a)) / 2
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
    !$omp parallel do schedule(static) private(try, e, a, slot, ok)
    walkers: do w = 1, wk%nw
      do try = 1, 100
        do e = 1, ne
          if (e <= na) then
            a = sites_a(mod(e - 1, nsa) + 1)
          else
            a = sites_b(mod(e - na - 1, nsb) + 1)
          end if
          do slot = 1, 3
            wk%pos(slot, e, w) = wf%bs%xyz(slot, a) + 2 / max(1.0_real64, sqrt(wf%bs%z(a))) * &
                 (rng_uniform(wk%key(w), -int(try * (ne + 1) + e, int64), slot) - 0.5_real64)
          end do
        end do
        call wf_invert(wf, ws(thread_id()), wk%pos(:, :, w), wk%ainva(:, :, w), wk%ainvb(:, :, w), ok)
        if (ok) cycle walkers
      end do
      call die('cannot find a starting configuration with non-singular Slater matrices (walker ' // &
           itoa(wk%first + w - 1) // ')')
    end do walkers
    !$omp end parallel do
  end subroutine

  ! Inverse Slater matrices of every walker from its positions (rounding of the updates does not pile up).
  subroutine walkers_recompute(wk, wf, ws)
    type(walkers_t), intent(inout) :: wk
    type(wf_t), intent(in) :: wf
    type(wf_ws_t), intent(inout) :: ws(0:)
    integer :: w
    logical :: ok
    !$omp parallel do schedule(static) private(ok)
    do w = 1, wk%nw
      call wf_invert(wf, ws(thread_id()), wk%pos(:, :, w), wk%ainva(:, :, w), wk%ainvb(:, :, w), ok)
      if (.not. ok) call die('singular Slater matrix at a periodic recomputation (walker ' // itoa(wk%first + w - 1) // ')')
    end do
    !$omp end parallel do
  end subroutine

end module vmc_walkers
