! vmc_rng.f90 -- counter-based random numbers: every number is a pure function of
! (seed, global walker index, step, slot), so a walker's path does not depend on how walkers are
! spread over processes or on the order in which they are visited.
! The mixer is splitmix64's finaliser; 64-bit wrap-around multiplication needs -fwrapv (set in CMake).
module vmc_rng
  use, intrinsic :: iso_fortran_env, only: int64, real64
  implicit none
  private
  public :: rng_uniform, rng_key

  integer(int64), parameter :: GOLDEN = -7046029254386353131_int64   ! 0x9E3779B97F4A7C15
  integer(int64), parameter :: M1 = -4658895280553007687_int64       ! 0xBF58476D1CE4E5B9
  integer(int64), parameter :: M2 = -7723592293110705685_int64       ! 0x94D049BB133111EB

contains

  pure function mix64(x0) result(z)
    integer(int64), intent(in) :: x0
    integer(int64) :: z
    z = x0
    z = ieor(z, ishft(z, -30)) * M1
    z = ieor(z, ishft(z, -27)) * M2
    z = ieor(z, ishft(z, -31))
  end function

  ! The key of one walker's stream: two rounds so that nearby seeds and walkers give unrelated keys.
  pure function rng_key(seed, walker) result(k)
    integer(int64), intent(in) :: seed, walker
    integer(int64) :: k
    k = mix64(mix64(seed + GOLDEN) + walker * GOLDEN)
  end function

  ! Uniform in (0,1): 53 random bits plus half an ulp, so neither 0 nor 1 occurs (log() is safe).
  pure function rng_uniform(key, step, slot) result(u)
    integer(int64), intent(in) :: key, step
    integer, intent(in) :: slot
    real(real64) :: u
    integer(int64) :: z
    z = mix64(key + mix64(step * 8_int64 + int(slot, int64)) * GOLDEN)
    z = mix64(z)
    u = (real(ishft(z, -11), real64) + 0.5_real64) * 2.0_real64**(-53)
  end function

end module vmc_rng
