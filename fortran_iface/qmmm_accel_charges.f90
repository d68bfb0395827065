! qmmm_accel_charges.f90 -- the point-charge part of module qmmm_accel_field under its former module name, so that
! codes written `use qmmm_accel_charges` still build. New code: `use qmmm_accel` or `use qmmm_accel_field`.
module qmmm_accel_charges
  use qmmm_accel_field, only: qmmm_field_create_charges, qmmm_field_eval_sum, qmmm_field_eval_sum_async, &
       qmmm_default_threads, qmmm_set_node_ranks, QMMM_SCREEN_NONE, QMMM_SCREEN_EXP, QMMM_SCREEN_GAUSSIAN
  implicit none
  public
end module qmmm_accel_charges
