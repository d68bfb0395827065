C     consumer_f77.f -- a fixed-form program that uses the module-free
C     interface of an installed qmmm-accel: no .mod file, -lqmmm_accel only.
      PROGRAM F77USE
      IMPLICIT NONE
      INCLUDE 'qmmm_accel_f77.fi'
      INTEGER*8 H
      INTEGER N, NONE, NTHR, ST
      DOUBLE PRECISION X(2), Y(2), Z(2), Q(2), COORD(3,1), E, D(3)
      DATA X /0.0D0, 4.0D0/, Y /0.0D0, 0.0D0/, Z /0.0D0, 0.0D0/
      DATA Q /1.0D0, -1.0D0/, COORD /2.0D0, 0.0D0, 0.0D0/
      N = 2
      NONE = 0
      NTHR = 1
      CALL QMMM_F77_CHARGES_CREATE(H, N, X, Y, Z, Q, QMMM_SCREEN_NONE,
     &     D, D, NONE, D, D, QMMM_BACKEND_CPU, QMMM_PRECISION_DOUBLE,
     &     NTHR, ST)
      IF (ST .NE. QMMM_SUCCESS) STOP 1
      N = 1
      CALL QMMM_F77_FIELD_EVAL_SUM(H, N, COORD, E, ST)
C     -1/2 from the +1 charge, +1/2 from the -1 charge: 0 exactly.
      IF (ST .NE. QMMM_SUCCESS .OR. E .NE. 0.0D0) STOP 2
      CALL QMMM_F77_FIELD_DESTROY(H, ST)
      IF (ST .NE. QMMM_SUCCESS .OR. H .NE. 0) STOP 3
      PRINT '(A)', 'consumer_f77: ok'
      END
