/*
 * dist.h — what src/core asks of the distributed layer (src/dist).
 *
 * A distributed context is a plain context (its backend table, stream and scratch) with a
 * pp_dist attached: the rank, the rank count and a communicator (comm.h). src/core checks
 * every argument on every rank exactly as for a plain context; for the primitives whose
 * result is global it then hands the call, with the status its checks produced, to the
 * pp_dist_* function below instead of running it locally. Each of those first agrees on
 * that status across the ranks (one failing rank fails the call on all of them, with its
 * message), so no rank is left waiting in a collective the others never enter.
 *
 * The per-rank primitives (select, partition, topk_rows, sgemm, conv2d, ...) never come
 * here: on a distributed context they run on the rank's own data as on a plain context.
 */
#ifndef PP_DIST_H
#define PP_DIST_H

#include "parprim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_dist pp_dist;

/* Release the distributed part of a context (its communicator unless adopted). */
void pp_dist_destroy(pp_context *ctx);

/* `checked` is the status of this rank's argument checks (PP_OK, or the failure already
 * recorded on ctx). Each function fails on every rank when any rank's check failed. */
pp_status pp_dist_reduce(pp_context *ctx, pp_status checked, pp_op op, pp_dtype t,
                         const void *in, size_t n, void *out);
pp_status pp_dist_argreduce(pp_context *ctx, pp_status checked, pp_op op, pp_dtype t,
                            const void *in, size_t n, void *value_out, uint64_t *index_out);
pp_status pp_dist_scan(pp_context *ctx, pp_status checked, pp_op op, pp_dtype t,
                       const void *in, void *out, size_t n, bool inclusive);
pp_status pp_dist_sort(pp_context *ctx, pp_status checked, pp_dtype key_t, void *keys,
                       void *values, size_t value_size, size_t n, pp_sort_opts opts);
/* k is checked against the global n here (src/core cannot know it). */
pp_status pp_dist_topk(pp_context *ctx, pp_status checked, pp_dtype t, const void *in,
                       size_t n, size_t k, bool largest, void *values_out,
                       uint64_t *indices_out);
pp_status pp_dist_histogram_even(pp_context *ctx, pp_status checked, pp_dtype t,
                                 const void *in, size_t n, size_t bins, double lo, double hi,
                                 uint64_t *counts);
pp_status pp_dist_histogram_range(pp_context *ctx, pp_status checked, pp_dtype t,
                                  const void *in, size_t n, const double *edges, size_t bins,
                                  uint64_t *counts);
pp_status pp_dist_histogram_image(pp_context *ctx, pp_status checked, const uint8_t *pixels,
                                  size_t width, size_t height, size_t pitch_bytes,
                                  int channels, uint64_t *counts);
pp_status pp_dist_nbody_accel(pp_context *ctx, pp_status checked, const pp_bodies *b,
                              float softening, float *ax, float *ay, float *az);
pp_status pp_dist_nbody_step(pp_context *ctx, pp_status checked, pp_bodies *b, float dt,
                             float softening, size_t steps);
pp_status pp_dist_nbody_energy(pp_context *ctx, pp_status checked, const pp_bodies *b,
                               float softening, double *kinetic, double *potential);

#ifdef __cplusplus
}
#endif

#endif /* PP_DIST_H */
