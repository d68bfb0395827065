/**
 * @file qmmm_accel.h
 * @brief C API of qmmm-accel, all of it: includes the core header and every family header (field, cube, dcs,
 * rdf, mpi, pol), nothing else. A program may include only the family headers it uses instead; each is self-contained.
 *
 * Units: atomic units throughout (positions in bohr, charges in e, energies in hartree).
 */
#ifndef QMMM_ACCEL_H
#define QMMM_ACCEL_H

#include "qmmm_accel_core.h"
#include "qmmm_accel_field.h"
#include "qmmm_accel_cube.h"
#include "qmmm_accel_dcs.h"
#include "qmmm_accel_rdf.h"
#include "qmmm_accel_mpi.h"
#include "qmmm_accel_pol.h"

#endif /* QMMM_ACCEL_H */
