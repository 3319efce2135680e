/* dist_algos.c — placeholder until the distributed algorithms land: no context is
 * distributed yet, so src/core never calls these. */
#include "../core/check.h"

#define PP_DIST_UNREACHABLE(fn) \
  return pp_fail(ctx, PP_ERR_UNSUPPORTED, "%s: distributed contexts are not built", fn)

void pp_dist_destroy(pp_context *ctx) { (void)ctx; }
pp_status pp_dist_reduce(pp_context *ctx, pp_status checked, pp_op op, pp_dtype t,
                         const void *in, size_t n, void *out) {
  (void)checked; (void)op; (void)t; (void)in; (void)n; (void)out;
  PP_DIST_UNREACHABLE("pp_reduce");
}
pp_status pp_dist_argreduce(pp_context *ctx, pp_status checked, pp_op op, pp_dtype t,
                            const void *in, size_t n, void *value_out, uint64_t *index_out) {
  (void)checked; (void)op; (void)t; (void)in; (void)n; (void)value_out; (void)index_out;
  PP_DIST_UNREACHABLE("pp_argreduce");
}
pp_status pp_dist_scan(pp_context *ctx, pp_status checked, pp_op op, pp_dtype t,
                       const void *in, void *out, size_t n, bool inclusive) {
  (void)checked; (void)op; (void)t; (void)in; (void)out; (void)n; (void)inclusive;
  PP_DIST_UNREACHABLE("pp_scan");
}
pp_status pp_dist_sort(pp_context *ctx, pp_status checked, pp_dtype key_t, void *keys,
                       void *values, size_t value_size, size_t n, pp_sort_opts opts) {
  (void)checked; (void)key_t; (void)keys; (void)values; (void)value_size; (void)n; (void)opts;
  PP_DIST_UNREACHABLE("pp_sort");
}
pp_status pp_dist_topk(pp_context *ctx, pp_status checked, pp_dtype t, const void *in,
                       size_t n, size_t k, bool largest, void *values_out,
                       uint64_t *indices_out) {
  (void)checked; (void)t; (void)in; (void)n; (void)k; (void)largest; (void)values_out;
  (void)indices_out;
  PP_DIST_UNREACHABLE("pp_topk");
}
pp_status pp_dist_histogram_even(pp_context *ctx, pp_status checked, pp_dtype t,
                                 const void *in, size_t n, size_t bins, double lo, double hi,
                                 uint64_t *counts) {
  (void)checked; (void)t; (void)in; (void)n; (void)bins; (void)lo; (void)hi; (void)counts;
  PP_DIST_UNREACHABLE("pp_histogram_even");
}
pp_status pp_dist_histogram_range(pp_context *ctx, pp_status checked, pp_dtype t,
                                  const void *in, size_t n, const double *edges, size_t bins,
                                  uint64_t *counts) {
  (void)checked; (void)t; (void)in; (void)n; (void)edges; (void)bins; (void)counts;
  PP_DIST_UNREACHABLE("pp_histogram_range");
}
pp_status pp_dist_histogram_image(pp_context *ctx, pp_status checked, const uint8_t *pixels,
                                  size_t width, size_t height, size_t pitch_bytes,
                                  int channels, uint64_t *counts) {
  (void)checked; (void)pixels; (void)width; (void)height; (void)pitch_bytes; (void)channels;
  (void)counts;
  PP_DIST_UNREACHABLE("pp_histogram_image");
}
pp_status pp_dist_nbody_accel(pp_context *ctx, pp_status checked, const pp_bodies *b,
                              float softening, float *ax, float *ay, float *az) {
  (void)checked; (void)b; (void)softening; (void)ax; (void)ay; (void)az;
  PP_DIST_UNREACHABLE("pp_nbody_accel");
}
pp_status pp_dist_nbody_step(pp_context *ctx, pp_status checked, pp_bodies *b, float dt,
                             float softening, size_t steps) {
  (void)checked; (void)b; (void)dt; (void)softening; (void)steps;
  PP_DIST_UNREACHABLE("pp_nbody_step");
}
pp_status pp_dist_nbody_energy(pp_context *ctx, pp_status checked, const pp_bodies *b,
                               float softening, double *kinetic, double *potential) {
  (void)checked; (void)b; (void)softening; (void)kinetic; (void)potential;
  PP_DIST_UNREACHABLE("pp_nbody_energy");
}
