C     consumer_f77.f -- a fixed-form program that uses the module-free
C     interface of an installed qmmm-accel: no .mod file, -lqmmm_accel only.
      PROGRAM F77USE
      IMPLICIT NONE
      INCLUDE 'qmmm_accel_f77.fi'
      INTEGER*8 H
      INTEGER N, NONE, NTHR, ST
      DOUBLE PRECISION X(2), Y(2), Z(2), Q(2), COORD(3,1), E, D(3)
      DOUBLE PRECISION ORIG(3), M(3)
      DATA ORIG /0.0D0, 0.0D0, 0.0D0/
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
C     A dipole (1, 0, 0) at the origin: -mu.d/d^3 = -1/4 at (2, 0, 0);
C     updated to (2, 0, 0): -1/2. Both exact.
      M(1) = 1.0D0
      M(2) = 0.0D0
      M(3) = 0.0D0
      CALL QMMM_F77_SET_DIPOLES(H, N, ORIG, M, ST)
      IF (ST .NE. QMMM_SUCCESS) STOP 4
      CALL QMMM_F77_FIELD_EVAL_SUM(H, N, COORD, E, ST)
      IF (ST .NE. QMMM_SUCCESS .OR. E .NE. -0.25D0) STOP 5
      M(1) = 2.0D0
      CALL QMMM_F77_UPDATE_DIPOLES(H, N, M, ST)
      CALL QMMM_F77_FIELD_EVAL_SUM(H, N, COORD, E, ST)
      IF (ST .NE. QMMM_SUCCESS .OR. E .NE. -0.5D0) STOP 6
      CALL QMMM_F77_FIELD_DESTROY(H, ST)
      IF (ST .NE. QMMM_SUCCESS .OR. H .NE. 0) STOP 3
      PRINT '(A)', 'consumer_f77: ok'
      END
