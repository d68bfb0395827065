!     test_f77_integer_size.f -- QMMM_F77_INTEGER_SIZE tells a program
!     whether its default INTEGER is the 4 bytes the module-free
!     interface takes. Built twice: as is (4 bytes: STATUS 0) and with
!     -fdefault-integer-8 (8 bytes: STATUS QMMM_ERR_INVALID_ARG, read
!     whole, and a message that names the flag).
      PROGRAM TF77IS
      IMPLICIT NONE
      INCLUDE 'qmmm_accel_f77.fi'
      INTEGER IPROBE(2), STATUS, ST2, NBYTES, NFAIL
      CHARACTER*300 TEXT
      NFAIL = 0
      NBYTES = BIT_SIZE(STATUS) / 8
      IPROBE(1) = 1
      IPROBE(2) = 2
      STATUS = -7
      CALL QMMM_F77_INTEGER_SIZE(IPROBE, STATUS)
      IF (IPROBE(1) .NE. NBYTES) THEN
        PRINT *, 'FAILED: IPROBE(1) =', IPROBE(1), ' for', NBYTES
        NFAIL = NFAIL + 1
      END IF
      IF (NBYTES .EQ. 4 .AND. STATUS .NE. QMMM_SUCCESS) THEN
        PRINT *, 'FAILED: 4-byte INTEGER, STATUS =', STATUS
        NFAIL = NFAIL + 1
      END IF
      IF (NBYTES .EQ. 8) THEN
        IF (STATUS .NE. QMMM_ERR_INVALID_ARG) THEN
          PRINT *, 'FAILED: 8-byte INTEGER, STATUS =', STATUS
          NFAIL = NFAIL + 1
        END IF
        ST2 = 0
        CALL QMMM_F77_ERROR_MESSAGE(TEXT, ST2)
        IF (INDEX(TEXT, '-fdefault-integer-8') .EQ. 0) THEN
          PRINT *, 'FAILED: message ', TEXT
          NFAIL = NFAIL + 1
        END IF
      END IF
      IPROBE(1) = 3
      IPROBE(2) = 2
      STATUS = -7
      CALL QMMM_F77_INTEGER_SIZE(IPROBE, STATUS)
      IF (NBYTES .EQ. 4 .AND. (STATUS .NE. QMMM_ERR_INVALID_ARG .OR.
     &    IPROBE(1) .NE. 3)) THEN
        PRINT *, 'FAILED: IPROBE (3, 2) gave', STATUS, IPROBE(1)
        NFAIL = NFAIL + 1
      END IF
      IF (NFAIL .NE. 0) STOP 1
      PRINT '(A,I1)', 'f77_integer_size: all passed, INTEGER*', NBYTES
      END
