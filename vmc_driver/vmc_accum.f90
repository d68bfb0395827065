! vmc_accum.f90 -- accumulation of the local energies over blocks and processes.
! Once per block every walker's energies go to rank 0 (vmc_par), which sums them in global walker order,
! the same additions in the same order as one process makes them: results do not depend on the rank count.
! At the end the series of walker-averaged local energies is reblocked for the error bar (vmc_stats).
module vmc_accum
  use, intrinsic :: iso_fortran_env, only: real64, int64, output_unit
  use vmc_util
  use vmc_stats
  use vmc_input, only: input_t
  use vmc_sampler, only: NPART
  use vmc_par
  implicit none
  private
  public :: accum_t, accum_init, accum_block, accum_finish

  type accum_t
    integer :: n_meas = 0, nw = 0, nw_total = 0      ! measurements per block, walkers here and in all
    real(real64), allocatable :: parts(:, :, :)      ! (NPART, nw, n_meas) this block, this process
    real(real64), allocatable :: parts_all(:)        ! rank 0: every rank's parts, in rank order
    real(real64), allocatable :: series(:)           ! rank 0: walker-averaged E_L per measurement
    real(real64), allocatable :: part_series(:, :)   ! rank 0: (NPART, measurements) walker-averaged parts
    real(real64), allocatable :: block_mean(:)       ! rank 0: mean E_L per block
    real(real64) :: sum_e = 0, sum_e2 = 0, sum_k = 0, sum_ee = 0, sum_en = 0, sum_f = 0
    integer(int64) :: n_samples = 0
    integer(int64) :: n_acc = 0, n_try = 0           ! acceptance of all processes so far
    real(real64) :: mean = 0, err = 0                ! rank 0, after accum_finish
    integer :: level = 0                             ! reblocking level (block length 2^level)
    logical :: converged = .false.                   ! the reblocking criterion was met
    real(real64) :: part_err(NPART) = 0              ! reblocked error bars of the parts' means
  end type

contains

  subroutine accum_init(acc, inp, nw, nw_total)
    type(accum_t), intent(out) :: acc
    type(input_t), intent(in) :: inp
    integer, intent(in) :: nw, nw_total
    acc%n_meas = inp%steps_per_block / inp%energy_every
    acc%nw = nw; acc%nw_total = nw_total
    allocate(acc%parts(NPART, nw, acc%n_meas))
    allocate(acc%parts_all(merge(NPART * nw_total * acc%n_meas, 1, par_root)))
    allocate(acc%series(inp%n_blocks * acc%n_meas), acc%block_mean(inp%n_blocks))
    allocate(acc%part_series(NPART, inp%n_blocks * acc%n_meas))
  end subroutine

  ! Block ib is in acc%parts on every process: gather, sum on rank 0, print its line there.
  subroutine accum_block(acc, ib, n_acc, n_try)
    type(accum_t), intent(inout) :: acc
    integer, intent(in) :: ib
    integer(int64), intent(in) :: n_acc, n_try     ! this process's acceptance counters so far
    integer(int64) :: cnt(2)
    real(real64) :: bmean, berr
    call par_gatherv_real(reshape(acc%parts, [size(acc%parts)]), acc%parts_all)
    cnt = [n_acc, n_try]
    call par_sum_int64(cnt)
    acc%n_acc = cnt(1); acc%n_try = cnt(2)
    if (.not. par_root) return
    call sum_block(acc, (ib - 1) * acc%n_meas)
    acc%block_mean(ib) = sum(acc%series((ib - 1) * acc%n_meas + 1:ib * acc%n_meas)) / acc%n_meas
    call mean_err(acc%block_mean(1:ib), bmean, berr)
    write(output_unit, '(a)') '  ' // right(itoa(ib), 5) // ' ' // fixed(acc%block_mean(ib), 19, 10) // ' ' // &
         fixed(bmean, 19, 10) // ' ' // fixed(berr, 16, 10) // ' ' // fixed(real(cnt(1), real64) / cnt(2), 10, 4)
  end subroutine

  ! Rank 0: the block's measurements with walkers in global order (rank order = walker order).
  subroutine sum_block(acc, meas0)
    type(accum_t), intent(inout) :: acc
    integer, intent(in) :: meas0
    integer :: s, r, w, first, n, k
    real(real64) :: el, p, ps(NPART)
    do s = 1, acc%n_meas
      el = 0; ps = 0
      do r = 0, par_size - 1
        call par_share(acc%nw_total, r, first, n)
        do w = 1, n
          k = NPART * acc%n_meas * first + NPART * (n * (s - 1) + w - 1)   ! rank r's parts(:, w, s)
          p = acc%parts_all(k + 1)
          el = el + p
          acc%sum_e = acc%sum_e + p; acc%sum_e2 = acc%sum_e2 + p * p
          acc%sum_k = acc%sum_k + acc%parts_all(k + 2); acc%sum_ee = acc%sum_ee + acc%parts_all(k + 3)
          acc%sum_en = acc%sum_en + acc%parts_all(k + 4)
          acc%sum_f = acc%sum_f + acc%parts_all(k + 5)
          ps = ps + acc%parts_all(k + 1:k + NPART)
          acc%n_samples = acc%n_samples + 1
        end do
      end do
      acc%series(meas0 + s) = el / acc%nw_total
      acc%part_series(:, meas0 + s) = ps / acc%nw_total
    end do
  end subroutine

  ! Reblocked mean and error of E_L, and error bars of each part's mean (its own reblocking: a smooth
  ! one-body part such as the environment term fluctuates far less than the total).
  subroutine accum_finish(acc)
    type(accum_t), intent(inout) :: acc
    integer :: i, lv
    real(real64) :: m
    if (.not. par_root) return
    call reblock(acc%series, acc%mean, acc%err, acc%level, acc%converged)
    do i = 1, NPART
      call reblock(acc%part_series(i, :), m, acc%part_err(i), lv)
    end do
  end subroutine

end module vmc_accum
