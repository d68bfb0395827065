/* qmmm_accel_rdf.h -- the rdf family of the qmmm-accel C API (included by qmmm_accel.h). */
#ifndef QMMM_ACCEL_RDF_H
#define QMMM_ACCEL_RDF_H
#include "qmmm_accel.h"
#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
