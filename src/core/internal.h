/*
 * internal.h — what src/core shares with the backends.
 *
 * Layering (see DESIGN.md): the public entry points in src/core/api_*.c check every
 * argument, stage data the backend cannot touch directly, and then call one function
 * pointer of the context's backend table. Backends trust their input: pointers they get
 * are usable by their kernels, sizes are validated and overflow-free.
 *
 * This header is C and includes no CUDA header; the CUDA backend includes it from .cu
 * files inside extern "C".
 */
#ifndef PP_INTERNAL_H
#define PP_INTERNAL_H

#include "parprim.h"
#include "../dist/dist.h"
#include "testctl.h"

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PP_ERROR_TEXT 512

/* One table per backend. The memory and stream entries are required; a primitive entry
 * left NULL means "not implemented on this backend yet" (PP_ERR_UNSUPPORTED). */
typedef struct pp_backend_ops {
  const char *name;

  pp_status (*init)(pp_context *ctx); /* sets ctx->impl; NO_DEVICE when unusable */
  void (*fini)(pp_context *ctx);
  pp_status (*device_info)(pp_context *ctx, pp_device_info *info);
  pp_status (*set_stream)(pp_context *ctx, void *stream);
  pp_status (*synchronize)(pp_context *ctx);

  pp_status (*mem_alloc)(pp_context *ctx, void **ptr, size_t bytes); /* pp_malloc */
  pp_status (*mem_free)(pp_context *ctx, void *ptr);
  /* Copy in any direction, ordered on the context's stream; returns once dst is
   * written when dst is host memory. */
  pp_status (*copy)(pp_context *ctx, void *dst, const void *src, size_t bytes);
  /* Optional (NULL: use copy): a read of bytes from src into host memory dst that runs
   * while later work is queued. read_begin queues it on the stream, ahead of what follows;
   * dst holds the bytes once read_end has returned PP_OK. At most one read is open. */
  pp_status (*read_begin)(pp_context *ctx, void *dst, const void *src, size_t bytes);
  pp_status (*read_end)(pp_context *ctx);
  /* true when the backend's kernels may read and write p directly */
  bool (*accessible)(pp_context *ctx, const void *p);
  /* Scratch for the duration of one call, ordered on the stream (no device-wide sync). */
  pp_status (*temp_alloc)(pp_context *ctx, void **ptr, size_t bytes);
  void (*temp_free)(pp_context *ctx, void *ptr);

  /* --- primitives: every pointer is accessible and aligned to its element --- */
  pp_status (*reduce)(pp_context *ctx, pp_op op, pp_dtype t, const void *in, size_t n,
                      void *out);
  pp_status (*argreduce)(pp_context *ctx, pp_op op, pp_dtype t, const void *in, size_t n,
                         void *value_out, uint64_t *index_out);
  pp_status (*scan)(pp_context *ctx, pp_op op, pp_dtype t, const void *in, void *out,
                    size_t n, bool inclusive);
  pp_status (*select)(pp_context *ctx, pp_dtype t, const void *in, size_t n, pp_cmp cmp,
                      const void *value, void *out, uint64_t *count);
  pp_status (*select_flagged)(pp_context *ctx, size_t elem_size, const void *in,
                              const uint8_t *flags, size_t n, void *out, uint64_t *count);
  pp_status (*partition)(pp_context *ctx, pp_dtype t, const void *in, size_t n, pp_cmp cmp,
                         const void *value, void *out, uint64_t *count_true);
  pp_status (*sort)(pp_context *ctx, pp_dtype key_t, void *keys, void *values,
                    size_t value_size, size_t n, pp_order order, pp_sort_algo algo);
  pp_status (*merge)(pp_context *ctx, pp_dtype key_t, const void *a, size_t na,
                     const void *b, size_t nb, void *out, pp_order order);
  /* Stable sort out of place: keys_out (and values_out) receive the sort of n >= 2 keys
   * of keys_in (and values_in), which are not written; no two of the four overlap.
   * values_in NULL with values_out set: each value is its key's position in keys_in,
   * as a value_size-byte unsigned integer (4 needs n <= 2^32, else 8). value_size 0:
   * keys alone. NULL in a backend: pp_argsort is unsupported, and the distributed sort
   * copies the keys and sorts them in place. */
  pp_status (*sort_copy)(pp_context *ctx, pp_dtype key_t, const void *keys_in, void *keys_out,
                         const void *values_in, void *values_out, size_t value_size, size_t n,
                         pp_order order, pp_sort_algo algo);
  /* merge of two sorted runs of pairs: out as merge's, and vout[i] the value
   * (value_size bytes: 4 or 8) that came with kout[i]; stable (a's pairs first on ties).
   * Neither output overlaps an input. NULL in a backend: no distributed sort. */
  pp_status (*merge_pairs)(pp_context *ctx, pp_dtype key_t, const void *ka, const void *va,
                           size_t na, const void *kb, const void *vb, size_t nb, void *kout,
                           void *vout, size_t value_size, pp_order order);
  pp_status (*topk)(pp_context *ctx, pp_dtype t, const void *in, size_t n, size_t k,
                    bool largest, void *values_out, uint64_t *indices_out);
  pp_status (*topk_rows)(pp_context *ctx, pp_dtype t, const void *in, size_t rows,
                         size_t cols, size_t k, bool largest, void *values_out,
                         uint64_t *indices_out);
  pp_status (*histogram_even)(pp_context *ctx, pp_dtype t, const void *in, size_t n,
                              size_t bins, double lo, double hi, uint64_t *counts);
  pp_status (*histogram_range)(pp_context *ctx, pp_dtype t, const void *in, size_t n,
                               const double *edges, size_t bins, uint64_t *counts);
  pp_status (*histogram_image)(pp_context *ctx, const uint8_t *pixels, size_t width,
                               size_t height, size_t pitch_bytes, int channels,
                               uint64_t *counts);
  pp_status (*sgemm)(pp_context *ctx, pp_layout layout, pp_trans ta, pp_trans tb, size_t m,
                     size_t n, size_t k, float alpha, const float *A, size_t lda,
                     const float *B, size_t ldb, float beta, float *C, size_t ldc);
  pp_status (*conv2d)(pp_context *ctx, const float *src, size_t width, size_t height,
                      size_t src_pitch, const float *filter, size_t fw, size_t fh,
                      pp_border border, float *dst, size_t dst_pitch);
  pp_status (*conv2d_separable)(pp_context *ctx, const float *src, size_t width,
                                size_t height, size_t src_pitch, const float *row_filter,
                                size_t row_len, const float *col_filter, size_t col_len,
                                pp_border border, float *dst, size_t dst_pitch);
  pp_status (*nbody_accel)(pp_context *ctx, const pp_bodies *b, float softening, float *ax,
                           float *ay, float *az);
  pp_status (*nbody_step)(pp_context *ctx, pp_bodies *b, float dt, float softening,
                          size_t steps);
  pp_status (*nbody_energy)(pp_context *ctx, const pp_bodies *b, float softening,
                            double *kinetic, double *potential);

  /* --- building blocks of the distributed algorithms (src/dist); a backend may leave
   *     them NULL, and the distributed call then returns UNSUPPORTED --- */
  /* dist-core entries: (src/cpu/dist_ops.c, src/cuda/dist_ops.cu; pointers accessible) */
  /* the cudaStream_t work is queued on and the device (CUDA); NULL on the CPU */
  void *(*dist_stream)(pp_context *ctx);
  int (*dist_device)(pp_context *ctx);
  /* *sum (one double) = the sum of in[0, n) accumulated in double */
  pp_status (*dist_sum_f32)(pp_context *ctx, const float *in, size_t n, double *sum);
  /* pp_scan continuing the scan of the elements before in: carry (host memory, one value:
   * a double for f32 SUM, else of type t; NULL when nothing comes before) is combined in
   * front of every output, and an exclusive scan's out[0] is the carry */
  pp_status (*dist_scan_from)(pp_context *ctx, pp_op op, pp_dtype t, const void *in, void *out,
                              size_t n, bool inclusive, const void *carry);
  /* out[i] = (table ? table[idx[i]] : idx[i]) + add for i < n (out == idx allowed) */
  pp_status (*dist_index_map)(pp_context *ctx, const uint64_t *table, const uint64_t *idx,
                              size_t n, uint64_t add, uint64_t *out);
  /* N-body (physics of pp_nbody_*): accelerations of the targets (x, y, z) from the sources
   * (x, y, z, mass); kick and drift of pp_nbody_step (v += h a when close; v += h a then
   * x += dt v when open); and, in host doubles, the targets' kinetic energy and
   * sum_i m_i sum_{j != self + i} m_j / sqrt(r_ij^2 + eps^2) (target i is source self + i;
   * pairs at distance 0 left out) */
  pp_status (*dist_nbody_accel)(pp_context *ctx, const pp_bodies *targets,
                                const pp_bodies *sources, float softening, float *ax, float *ay,
                                float *az);
  pp_status (*dist_nbody_advance)(pp_context *ctx, pp_bodies *b, const float *ax,
                                  const float *ay, const float *az, float h, float dt,
                                  bool close, bool open);
  pp_status (*dist_nbody_energy)(pp_context *ctx, const pp_bodies *targets,
                                 const pp_bodies *sources, size_t self, float softening,
                                 double *kinetic, double *phi);

  /* dist-sort entry (src/dist/dist_sort.c's exact split): counts[i] = how many of the n
   * keys, sorted in `order` by this backend's sort, have an order image below query[i],
   * i < q. The image is the one the local sort orders by (descending folded in), widened
   * to 64 bits; query and counts are memory the backend computes on. */
  pp_status (*dsort_rank)(pp_context *ctx, pp_dtype key_t, pp_order order, const void *sorted,
                          size_t n, const uint64_t *query, size_t q, uint64_t *counts);
} pp_backend_ops;

struct pp_context {
  pp_backend backend;
  const pp_backend_ops *ops;
  void *impl; /* the backend's own state */
  pp_dist *dist; /* NULL for a plain context; see src/dist/dist.h */
  char error[PP_ERROR_TEXT];
};

extern const pp_backend_ops pp_cpu_ops;
#ifdef PP_HAVE_CUDA
extern const pp_backend_ops pp_cuda_ops;
#endif

/* Record a failure on ctx (printf-style text, conventionally "pp_fn: what (value)") and
 * return s, so a check reads `return pp_fail(ctx, PP_ERR_..., "...")`. */
pp_status pp_fail(pp_context *ctx, pp_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* memcpy between host buffers, on several threads when large (src/core/stage.c). */
void pp_host_memcpy(void *dst, const void *src, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* PP_INTERNAL_H */
