!     test_pol_f77.f -- the pol family through the module-free interface
!     (QMMM_F77_POL_*), fixed form: a .pot file read, its permanent
!     field, a solve without an external field (E_pol against the
!     dipoles and the field), two sites from arrays against the
!     analytic dipole alpha q / d^2, a missing file's status, destroy.
!     Argument: the .pot file (tests/data/pol/water3.pot).
      PROGRAM TPOL77
      IMPLICIT NONE
      INCLUDE 'qmmm_accel_f77.fi'
      INTEGER*8 P, Q, EXCL(1)
      INTEGER N, NPOL, STATUS, ITER, NFAIL, I
      INTEGER*8 N8, NP8
      DOUBLE PRECISION FIELD(3, 9), MU(3, 9), EEXT(3, 9), RESID
      DOUBLE PRECISION EPOL, EPEXT, EPMM, S, XYZ(3, 2), CHG(2)
      DOUBLE PRECISION ALPHA(2), DIP(3, 2), MU2(3, 2), E2(3, 2)
      CHARACTER*300 PATH, TEXT
      NFAIL = 0
      CALL GET_COMMAND_ARGUMENT(1, PATH)
!     The file: 9 sites, all polarizable; default options but the
!     tolerance (1e-12).
      CALL QMMM_F77_POL_CREATE_FROM_POT(P, PATH, 0, 200, 1D-12,
     &  QMMM_BACKEND_CPU, STATUS)
      IF (STATUS .NE. QMMM_SUCCESS) THEN
        CALL QMMM_F77_ERROR_MESSAGE(TEXT, I)
        PRINT *, 'FAILED: create_from_pot ', STATUS, TEXT
        STOP 1
      END IF
      CALL QMMM_F77_POL_SIZES(P, N8, NP8, STATUS)
      IF (STATUS .NE. 0 .OR. N8 .NE. 9 .OR. NP8 .NE. 9) THEN
        PRINT *, 'FAILED: sizes ', STATUS, N8, NP8
        NFAIL = NFAIL + 1
      END IF
      CALL QMMM_F77_POL_STATIC_FIELD(P, FIELD, STATUS)
      IF (STATUS .NE. 0) NFAIL = NFAIL + 1
      EEXT = 0
      MU = 0
      CALL QMMM_F77_POL_SOLVE(P, EEXT, MU, ITER, RESID, EPOL, EPEXT,
     &  EPMM, STATUS)
      S = -0.5D0 * SUM(MU * FIELD)
      PRINT '(A,I0,A,ES10.3,A,F16.12,A,F16.12)', 'water3: ', ITER,
     &  ' iterations, residual ', RESID, ', E_pol ', EPOL,
     &  ', -1/2 mu.E_mm ', S
      IF (STATUS .NE. 0 .OR. ITER .LE. 0 .OR. RESID .GT. 1D-12) THEN
        PRINT *, 'FAILED: solve ', STATUS, ITER, RESID
        NFAIL = NFAIL + 1
      END IF
      IF (ABS(EPOL - S) .GT. 1D-14 .OR. EPEXT .NE. 0 .OR.
     &    ABS(EPMM - S) .GT. 1D-14 .OR. S .GE. 0) THEN
        PRINT *, 'FAILED: E_pol ', EPOL, EPEXT, EPMM, S
        NFAIL = NFAIL + 1
      END IF
      CALL QMMM_F77_POL_DESTROY(P, STATUS)
      IF (STATUS .NE. 0 .OR. P .NE. 0) NFAIL = NFAIL + 1
!     Two sites: +1 e at the origin (not polarizable), alpha = 10 at
!     x = 6, no exclusions: mu = alpha q / d^2 along x.
      XYZ = 0
      XYZ(1, 2) = 6
      CHG(1) = 1
      CHG(2) = 0
      DIP = 0
      ALPHA(1) = 0
      ALPHA(2) = 10
      EXCL(1) = -1
      CALL QMMM_F77_POL_CREATE(Q, 2, XYZ, CHG, DIP, 1, ALPHA, 0, EXCL,
     &  0, 200, 1D-12, QMMM_BACKEND_CPU, STATUS)
      IF (STATUS .NE. 0) THEN
        PRINT *, 'FAILED: create ', STATUS
        STOP 1
      END IF
      E2 = 0
      MU2 = 0
      CALL QMMM_F77_POL_SOLVE(Q, E2, MU2, ITER, RESID, EPOL, EPEXT,
     &  EPMM, STATUS)
      PRINT '(A,F18.15,A,F18.15)', 'two sites: mu_x ', MU2(1, 2),
     &  ', alpha q / d^2 ', 10D0 / 36D0
      IF (STATUS .NE. 0 .OR. ABS(MU2(1, 2) - 10D0 / 36D0) .GT. 1D-14
     &    .OR. ANY(MU2(:, 1) .NE. 0) .OR. MU2(2, 2) .NE. 0 .OR.
     &    MU2(3, 2) .NE. 0) THEN
        PRINT *, 'FAILED: two sites ', STATUS, MU2
        NFAIL = NFAIL + 1
      END IF
      CALL QMMM_F77_POL_SET_TOLERANCE(Q, 0.5D0, STATUS)
      IF (STATUS .NE. QMMM_ERR_INVALID_ARG) THEN
        PRINT *, 'FAILED: set_tolerance 0.5 ', STATUS
        NFAIL = NFAIL + 1
      END IF
      CALL QMMM_F77_POL_SET_TOLERANCE(Q, 1D-6, STATUS)
      IF (STATUS .NE. 0) THEN
        PRINT *, 'FAILED: set_tolerance 1e-6 ', STATUS
        NFAIL = NFAIL + 1
      END IF
      IF (ABS(EPOL + 0.5D0 * 10D0 / 36D0**2) .GT. 1D-15) THEN
        PRINT *, 'FAILED: two sites E_pol ', EPOL
        NFAIL = NFAIL + 1
      END IF
      CALL QMMM_F77_POL_DESTROY(Q, STATUS)
!     A missing file: its status, and the name (blanks dropped) in the
!     message.
      PATH = 'no_such_file.pot'
      CALL QMMM_F77_POL_CREATE_FROM_POT(P, PATH, 0, 200, 1D-8,
     &  QMMM_BACKEND_CPU, STATUS)
      CALL QMMM_F77_ERROR_MESSAGE(TEXT, I)
      IF (STATUS .NE. QMMM_ERR_FILE_OPEN .OR. P .NE. 0 .OR.
     &    INDEX(TEXT, 'no_such_file.pot') .EQ. 0 .OR.
     &    INDEX(TEXT, 'no_such_file.pot ') .EQ.
     &    INDEX(TEXT, 'no_such_file.pot')) THEN
        PRINT *, 'FAILED: missing file ', STATUS, TRIM(TEXT)
        NFAIL = NFAIL + 1
      END IF
      IF (NFAIL .GT. 0) THEN
        PRINT *, 'pol_f77:', NFAIL, ' failures'
        STOP 1
      END IF
      PRINT '(A)', 'pol_f77: all passed'
      END
