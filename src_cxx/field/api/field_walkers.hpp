// field_walkers.hpp -- what the crowd calls (field_walkers.cpp: many walkers a call, device-resident points) use of a
// field's handle, lent by field_api.cpp for the length of one call.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "backend/field_backend.hpp"
#include "qmmm_accel_field.h"

namespace qmmm {

struct FieldAccess {
    FieldBackend &impl;
    bool &pending;                              // an asynchronous evaluation is pending (qmmm_field_wait ends it)
    int64_t &pending_n;                         // its points, their copy and where its values go: wait checks them
    double *&pending_u;
    std::vector<double> &pending_xyz;
    std::function<void()> &pending_walkers;     // what wait does last (the walkers' sums)
    std::function<double *(int64_t)> scratch;   // the handle's buffer of n values (grows, never shrinks)
    // QMMM_ERR_SINGULAR (or NONFINITE) naming the first point of n whose value is not finite, and what it is on.
    std::function<void(int64_t, const double *, double *)> check_values;  // may redo a value in place (SINGLE near a site)
};

// Runs body on f's handle (QMMM_ERR_BAD_HANDLE if f is not live), counted as a call inside f (a destroy meanwhile is
// QMMM_ERR_BUSY).
int field_access_call(qmmm_field f, const std::function<int(FieldAccess &)> &body);

}  // namespace qmmm
