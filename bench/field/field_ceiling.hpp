// field_ceiling.hpp -- the hardware limits beside the field's rows in bench/field/field_bench:
// - the 1/r ceiling: a micro-kernel that does nothing but MUFU.RSQ and one FFMA per "pair" on values in
//   registers (no loads, no distances), on every SM: the most 1/r terms per second this GPU can sum;
// - the transport floors of one synchronous call: a launch of an empty kernel that writes a result and a flag
//   into mapped host memory which the host polls (what the latency path cannot go below), and a persistent
//   kernel that answers a request written into mapped host memory (the low-latency mode's floor).
#pragma once

// G 1/r terms per second (1e9), measured over about `seconds`.
double ceiling_rsqrt_gps(double seconds);
// Median microseconds of one round trip, over `reps` calls.
double floor_launch_us(int reps);
double floor_persistent_us(int reps);
