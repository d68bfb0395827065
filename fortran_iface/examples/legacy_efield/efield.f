C     efield.f -- a legacy QMC code's point-charge call site, written the
C     way such codes write it (fixed form, a COMMON block of MM charges in
C     separate arrays, physical charges, optional screening), and the same
C     energy through qmmm-accel's module-free interface, side by side.
C
C     The MM environment: NCHG charges Q at (X, Y, Z), bohr and e. ISCR
C     selects the screening of every charge: 0 none, 1 -q(1-a exp(-b r^2))/r
C     with SA, SB; 2 -q erf(r/sigma)/r with SA = sigma.
      BLOCK DATA MMINIT
      INTEGER MAXCHG
      PARAMETER (MAXCHG = 5000)
      INTEGER NCHG, ISCR
      DOUBLE PRECISION X(MAXCHG), Y(MAXCHG), Z(MAXCHG), Q(MAXCHG)
      DOUBLE PRECISION SA(MAXCHG), SB(MAXCHG)
      COMMON /MMCHG/ X, Y, Z, Q, SA, SB, NCHG, ISCR
      INTEGER*8 HFIELD
      COMMON /QMMMH/ HFIELD
      DATA NCHG /0/, ISCR /0/, HFIELD /0/
      END
C
C     The loop the library replaces: ENERGY = sum over electrons and
C     charges of the potential energy of the electron.
      SUBROUTINE EFLOOP(NELEC, COORD, ENERGY)
      INTEGER NELEC
      DOUBLE PRECISION COORD(3,*), ENERGY
      INTEGER MAXCHG
      PARAMETER (MAXCHG = 5000)
      INTEGER NCHG, ISCR
      DOUBLE PRECISION X(MAXCHG), Y(MAXCHG), Z(MAXCHG), Q(MAXCHG)
      DOUBLE PRECISION SA(MAXCHG), SB(MAXCHG)
      COMMON /MMCHG/ X, Y, Z, Q, SA, SB, NCHG, ISCR
      INTEGER I, M
      DOUBLE PRECISION DX, DY, DZ, R, F
      ENERGY = 0.0D0
      DO 20 I = 1, NELEC
        DO 10 M = 1, NCHG
          DX = COORD(1,I) - X(M)
          DY = COORD(2,I) - Y(M)
          DZ = COORD(3,I) - Z(M)
          R = SQRT(DX*DX + DY*DY + DZ*DZ)
          F = 1.0D0
          IF (ISCR .EQ. 1) F = 1.0D0 - SA(M)*EXP(-SB(M)*R*R)
          IF (ISCR .EQ. 2) F = ERF(R/SA(M))
          ENERGY = ENERGY - Q(M)*F/R
   10   CONTINUE
   20 CONTINUE
      END
C
C     The same through qmmm-accel: the field is made on the first call
C     (the code has no finalize hook; the library frees it at exit) and
C     the sum over the electrons is one call. STATUS /= 0: the message.
      SUBROUTINE EFQMMM(NELEC, COORD, ENERGY, STATUS)
      INTEGER NELEC, STATUS
      DOUBLE PRECISION COORD(3,*), ENERGY
      INCLUDE 'qmmm_accel_f77.fi'
      INTEGER MAXCHG
      PARAMETER (MAXCHG = 5000)
      INTEGER NCHG, ISCR
      DOUBLE PRECISION X(MAXCHG), Y(MAXCHG), Z(MAXCHG), Q(MAXCHG)
      DOUBLE PRECISION SA(MAXCHG), SB(MAXCHG)
      COMMON /MMCHG/ X, Y, Z, Q, SA, SB, NCHG, ISCR
      INTEGER*8 HFIELD
      COMMON /QMMMH/ HFIELD
      INTEGER NONE, NTHR
      DOUBLE PRECISION DUMMY(3)
      NONE = 0
      NTHR = 0
      IF (HFIELD .EQ. 0) THEN
        CALL QMMM_F77_CHARGES_CREATE(HFIELD, NCHG, X, Y, Z, Q, ISCR,
     &       SA, SB, NONE, DUMMY, DUMMY, QMMM_BACKEND_AUTO,
     &       QMMM_PRECISION_DOUBLE, NTHR, STATUS)
        IF (STATUS .NE. QMMM_SUCCESS) RETURN
      END IF
      CALL QMMM_F77_FIELD_EVAL_SUM(HFIELD, NELEC, COORD, ENERGY,
     &     STATUS)
      END
C
C     A new environment (another MM snapshot): drop the field, so the
C     next EFQMMM call makes it from the COMMON block again.
      SUBROUTINE EFRSET(STATUS)
      INTEGER STATUS
      INTEGER*8 HFIELD
      COMMON /QMMMH/ HFIELD
      STATUS = 0
      IF (HFIELD .NE. 0) CALL QMMM_F77_FIELD_DESTROY(HFIELD, STATUS)
      END
C
C     The forces on the MM charges from the electrons (charge -1 each),
C     the loop a legacy code hands to its MM engine: FX(M), FY(M), FZ(M)
C     = -dENERGY/dR(M), hartree/bohr. With g(r) the screened 1/r above,
C     the electron at r pushes charge M by Q(M) g'(r) (R(M) - r) / r.
      SUBROUTINE FFLOOP(NELEC, COORD, FX, FY, FZ)
      INTEGER NELEC
      DOUBLE PRECISION COORD(3,*), FX(*), FY(*), FZ(*)
      INTEGER MAXCHG
      PARAMETER (MAXCHG = 5000)
      INTEGER NCHG, ISCR
      DOUBLE PRECISION X(MAXCHG), Y(MAXCHG), Z(MAXCHG), Q(MAXCHG)
      DOUBLE PRECISION SA(MAXCHG), SB(MAXCHG)
      COMMON /MMCHG/ X, Y, Z, Q, SA, SB, NCHG, ISCR
      INTEGER I, M
      DOUBLE PRECISION DX, DY, DZ, R, E, GP, SPI
      SPI = SQRT(4.0D0*ATAN(1.0D0))
      DO 40 M = 1, NCHG
        FX(M) = 0.0D0
        FY(M) = 0.0D0
        FZ(M) = 0.0D0
        DO 30 I = 1, NELEC
          DX = X(M) - COORD(1,I)
          DY = Y(M) - COORD(2,I)
          DZ = Z(M) - COORD(3,I)
          R = SQRT(DX*DX + DY*DY + DZ*DZ)
          GP = -1.0D0/(R*R)
          IF (ISCR .EQ. 1) THEN
            E = EXP(-SB(M)*R*R)
            GP = -(1.0D0 - SA(M)*E)/(R*R) + 2.0D0*SA(M)*SB(M)*E
          END IF
          IF (ISCR .EQ. 2) GP = 2.0D0*EXP(-(R/SA(M))**2)/(SPI*SA(M)*R)
     &         - ERF(R/SA(M))/(R*R)
          FX(M) = FX(M) + Q(M)*GP*DX/R
          FY(M) = FY(M) + Q(M)*GP*DY/R
          FZ(M) = FZ(M) + Q(M)*GP*DZ/R
   30   CONTINUE
   40 CONTINUE
      END
C
C     The same through qmmm-accel: the field of the electrons at every
C     charge (weights -1), then force = charge times field, into the
C     caller's arrays. The field exists once EFQMMM has run.
      SUBROUTINE FFQMMM(NELEC, COORD, FX, FY, FZ, STATUS)
      INTEGER NELEC, STATUS
      DOUBLE PRECISION COORD(3,*), FX(*), FY(*), FZ(*)
      INCLUDE 'qmmm_accel_f77.fi'
      INTEGER MAXCHG, MAXEL
      PARAMETER (MAXCHG = 5000, MAXEL = 1000)
      INTEGER NCHG, ISCR
      DOUBLE PRECISION X(MAXCHG), Y(MAXCHG), Z(MAXCHG), Q(MAXCHG)
      DOUBLE PRECISION SA(MAXCHG), SB(MAXCHG)
      COMMON /MMCHG/ X, Y, Z, Q, SA, SB, NCHG, ISCR
      INTEGER*8 HFIELD
      COMMON /QMMMH/ HFIELD
      DOUBLE PRECISION W(MAXEL), PHI(MAXCHG), EF(3,MAXCHG)
      INTEGER I, M
      STATUS = QMMM_ERR_INVALID_ARG
      IF (HFIELD .EQ. 0 .OR. NELEC .GT. MAXEL) RETURN
      DO 50 I = 1, NELEC
        W(I) = -1.0D0
   50 CONTINUE
      CALL QMMM_F77_FIELD_SITE_FIELD(HFIELD, NELEC, COORD, W, PHI, EF,
     &     STATUS)
      IF (STATUS .NE. QMMM_SUCCESS) RETURN
      DO 60 M = 1, NCHG
        FX(M) = Q(M)*EF(1,M)
        FY(M) = Q(M)*EF(2,M)
        FZ(M) = Q(M)*EF(3,M)
   60 CONTINUE
      END
