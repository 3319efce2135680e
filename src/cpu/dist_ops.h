/* dist_ops.h — the CPU backend's building blocks of the distributed algorithms (src/dist),
 * and the one line of the backend table that installs them. */
#ifndef PP_CPU_DIST_OPS_H
#define PP_CPU_DIST_OPS_H

#include "cpu.h"

pp_status pp_cpu_dist_sum_f32(pp_context *ctx, const float *in, size_t n, double *sum);
pp_status pp_cpu_dist_scan_from(pp_context *ctx, pp_op op, pp_dtype t, const void *in,
                                void *out, size_t n, bool inclusive, const void *carry);
pp_status pp_cpu_dist_index_map(pp_context *ctx, const uint64_t *table, const uint64_t *idx,
                                size_t n, uint64_t add, uint64_t *out);
pp_status pp_cpu_dist_nbody_accel(pp_context *ctx, const pp_bodies *targets,
                                  const pp_bodies *sources, float softening, float *ax,
                                  float *ay, float *az);
pp_status pp_cpu_dist_nbody_advance(pp_context *ctx, pp_bodies *b, const float *ax,
                                    const float *ay, const float *az, float h, float dt,
                                    bool close, bool open);
pp_status pp_cpu_dist_nbody_energy(pp_context *ctx, const pp_bodies *targets,
                                   const pp_bodies *sources, size_t self, float softening,
                                   double *kinetic, double *phi);

#define PP_CPU_DIST_CORE_OPS                                                                \
  .dist_stream = NULL, .dist_device = NULL, .dist_sum_f32 = pp_cpu_dist_sum_f32,            \
  .dist_scan_from = pp_cpu_dist_scan_from, .dist_index_map = pp_cpu_dist_index_map,         \
  .dist_nbody_accel = pp_cpu_dist_nbody_accel,                                              \
  .dist_nbody_advance = pp_cpu_dist_nbody_advance,                                          \
  .dist_nbody_energy = pp_cpu_dist_nbody_energy

#endif /* PP_CPU_DIST_OPS_H */
