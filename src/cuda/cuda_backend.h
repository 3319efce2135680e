/* cuda_backend.h — what the CUDA backend's .cu files share: the context state, error
 * mapping and launch helpers. Included only from .cu files. */
#ifndef PP_CUDA_BACKEND_H
#define PP_CUDA_BACKEND_H

#include <cuda_runtime.h>

extern "C" {
#include "../core/check.h" /* PP_TRY, and internal.h */
}

/* Bytes of persistent device scratch a context keeps for single-pass kernels (per-block
 * partials, a done-counter), so small calls neither allocate nor launch twice. */
#define PP_CUDA_SCRATCH_BYTES (64 * 1024)

/* Its layout: byte offsets of what the kernels keep there. Calls on one stream run one
 * after another, so users of one range must only never overlap within a call. */
enum pp_scratch_offset {
  PP_SCRATCH_COUNTER = 0,       /* [0, 8): last-block counter (reduce.cu, scan.cu's count) */
  PP_SCRATCH_HIST_SYNC = 128,   /* [128, 140): overwrite hand-over words (histogram.cu) */
  /* [256, end), each within one call: per-block partials (reduce.cu), partition's chunk
     counts and ends (scan.cu), the span of the windowed histogram's first pass
     (histogram.cu) */
  PP_SCRATCH_PARTIALS = 256
};

struct pp_cuda_state {
  int device;
  int sm_count;
  int max_threads_per_sm;
  cudaStream_t own_stream; /* created with the context */
  cudaStream_t stream;     /* where work is queued: own_stream or the caller's */
  cudaMemPool_t pool;      /* stream-ordered temp storage; NULL: plain cudaMalloc */
  void *scratch;           /* PP_CUDA_SCRATCH_BYTES, zeroed at creation, laid out as
                              pp_scratch_offset says; counters in it are returned to zero
                              by the kernels that use them */
  /* Decoupled look-back state of the single-pass kernels (scan.cu): a tile counter and
   * one status descriptor per tile, tagged with the call's epoch so that no launch has to
   * clear them first. Grown on demand, zeroed when (re)allocated. */
  void *lookback;
  size_t lookback_bytes;
  uint32_t lookback_epoch;
  /* Two pinned host buffers through which copies from and to pageable memory are
   * pipelined: the CPU fills or drains one while the copy engine works on the other.
   * Allocated on the first large pageable copy. */
  void *pinned[2];
  cudaEvent_t pinned_free[2];
  /* A small pinned buffer for short reads back to the host (a result, a few edges):
   * through it a read costs one event wait, where the driver's staging of pageable memory
   * costs a few microseconds more. read_dst / read_bytes: the read begun by read_begin
   * and not yet ended (read_bytes 0: none). Allocated on the first short read. */
  void *pinned_small;
  cudaEvent_t small_done;
  void *read_dst;
  size_t read_bytes;
};

static inline pp_cuda_state *pp_cuda(pp_context *ctx) { return (pp_cuda_state *)ctx->impl; }

/* Record a CUDA failure on ctx; allocation failures map to OUT_OF_MEMORY, the rest to
 * DEVICE. Non-sticky errors are cleared so the context stays usable. */
pp_status pp_cuda_fail(pp_context *ctx, cudaError_t e, const char *what, const char *file,
                       int line);

#define PP_CUDA_TRY(ctx, call, what)                                                        \
  do {                                                                                      \
    cudaError_t pp_cuda_e_ = (call);                                                        \
    if (pp_cuda_e_ != cudaSuccess) return pp_cuda_fail(ctx, pp_cuda_e_, what, __FILE__, __LINE__); \
  } while (0)

/* After a kernel launch: report a launch failure (bad configuration, ...). */
#define PP_CUDA_LAUNCHED(ctx, what) PP_CUDA_TRY(ctx, cudaGetLastError(), what)

/* ---- primitives (one .cu per family) ---- */
pp_status pp_cuda_reduce(pp_context *ctx, pp_op op, pp_dtype t, const void *in, size_t n,
                         void *out);
pp_status pp_cuda_argreduce(pp_context *ctx, pp_op op, pp_dtype t, const void *in, size_t n,
                            void *value_out, uint64_t *index_out);

/* scan.cu */
pp_status pp_cuda_scan(pp_context *ctx, pp_op op, pp_dtype t, const void *in, void *out,
                       size_t n, bool inclusive);
pp_status pp_cuda_select(pp_context *ctx, pp_dtype t, const void *in, size_t n, pp_cmp cmp,
                         const void *value, void *out, uint64_t *count);
pp_status pp_cuda_select_flagged(pp_context *ctx, size_t elem_size, const void *in,
                                 const uint8_t *flags, size_t n, void *out, uint64_t *count);
pp_status pp_cuda_partition(pp_context *ctx, pp_dtype t, const void *in, size_t n, pp_cmp cmp,
                            const void *value, void *out, uint64_t *count_true);

/* sort.cu */
pp_status pp_cuda_sort(pp_context *ctx, pp_dtype key_t, void *keys, void *values,
                       size_t value_size, size_t n, pp_order order, pp_sort_algo algo);
pp_status pp_cuda_merge(pp_context *ctx, pp_dtype key_t, const void *a, size_t na,
                        const void *b, size_t nb, void *out, pp_order order);
pp_status pp_cuda_sort_copy(pp_context *ctx, pp_dtype key_t, const void *keys_in, void *keys_out,
                            const void *values_in, void *values_out, size_t value_size, size_t n,
                            pp_order order, pp_sort_algo algo);
/* merge.cu */
pp_status pp_cuda_merge_pairs(pp_context *ctx, pp_dtype key_t, const void *ka, const void *va,
                              size_t na, const void *kb, const void *vb, size_t nb, void *kout,
                              void *vout, size_t value_size, pp_order order);
/* sort_merge.cu, sort_sample.cu, sort_quick.cu: the other algorithms of pp_sort, called by
   pp_cuda_sort for n >= 2 with device pointers; same contract as the radix sort */
pp_status pp_cuda_sort_merge(pp_context *ctx, pp_dtype key_t, void *keys, void *values,
                             size_t value_size, size_t n, pp_order order);
pp_status pp_cuda_sort_sample(pp_context *ctx, pp_dtype key_t, void *keys, void *values,
                              size_t value_size, size_t n, pp_order order);
pp_status pp_cuda_sort_quick(pp_context *ctx, pp_dtype key_t, void *keys, void *values,
                             size_t value_size, size_t n, pp_order order);

/* histogram.cu */
pp_status pp_cuda_histogram_even(pp_context *ctx, pp_dtype t, const void *in, size_t n,
                                 size_t bins, double lo, double hi, uint64_t *counts);
pp_status pp_cuda_histogram_range(pp_context *ctx, pp_dtype t, const void *in, size_t n,
                                  const double *edges, size_t bins, uint64_t *counts);
pp_status pp_cuda_histogram_image(pp_context *ctx, const uint8_t *pixels, size_t width,
                                  size_t height, size_t pitch_bytes, int channels,
                                  uint64_t *counts);
/* topk.cu */
pp_status pp_cuda_topk(pp_context *ctx, pp_dtype t, const void *in, size_t n, size_t k,
                       bool largest, void *values_out, uint64_t *indices_out);
pp_status pp_cuda_topk_rows(pp_context *ctx, pp_dtype t, const void *in, size_t rows,
                            size_t cols, size_t k, bool largest, void *values_out,
                            uint64_t *indices_out);
/* sgemm.cu */
pp_status pp_cuda_sgemm(pp_context *ctx, pp_layout layout, pp_trans ta, pp_trans tb, size_t m,
                        size_t n, size_t k, float alpha, const float *A, size_t lda,
                        const float *B, size_t ldb, float beta, float *C, size_t ldc);
/* conv.cu */
pp_status pp_cuda_conv2d(pp_context *ctx, const float *src, size_t width, size_t height,
                         size_t src_pitch, const float *filter, size_t fw, size_t fh,
                         pp_border border, float *dst, size_t dst_pitch);
pp_status pp_cuda_conv2d_separable(pp_context *ctx, const float *src, size_t width,
                                   size_t height, size_t src_pitch, const float *row_filter,
                                   size_t row_len, const float *col_filter, size_t col_len,
                                   pp_border border, float *dst, size_t dst_pitch);
/* nbody.cu */
pp_status pp_cuda_nbody_accel(pp_context *ctx, const pp_bodies *b, float softening, float *ax,
                              float *ay, float *az);
pp_status pp_cuda_nbody_step(pp_context *ctx, pp_bodies *b, float dt, float softening,
                             size_t steps);
pp_status pp_cuda_nbody_energy(pp_context *ctx, const pp_bodies *b, float softening,
                               double *kinetic, double *potential);

#endif /* PP_CUDA_BACKEND_H */
