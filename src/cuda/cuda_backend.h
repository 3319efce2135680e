/* cuda_backend.h — what the CUDA backend's .cu files share: the context state, error
 * mapping and launch helpers. Included only from .cu files. */
#ifndef PP_CUDA_BACKEND_H
#define PP_CUDA_BACKEND_H

#include <cuda_runtime.h>

extern "C" {
#include "../core/internal.h"
}

/* Bytes of persistent device scratch a context keeps for single-pass kernels (per-block
 * partials, a done-counter), so small calls neither allocate nor launch twice. */
#define PP_CUDA_SCRATCH_BYTES (64 * 1024)

struct pp_cuda_state {
  int device;
  int sm_count;
  int max_threads_per_sm;
  cudaStream_t own_stream; /* created with the context */
  cudaStream_t stream;     /* where work is queued: own_stream or the caller's */
  cudaMemPool_t pool;      /* stream-ordered temp storage; NULL: plain cudaMalloc */
  void *scratch;           /* PP_CUDA_SCRATCH_BYTES, zeroed at creation; counters in it
                              are returned to zero by the kernels that use them */
  /* Two pinned host buffers through which copies from and to pageable memory are
   * pipelined: the CPU fills or drains one while the copy engine works on the other.
   * Allocated on the first large pageable copy. */
  void *pinned[2];
  cudaEvent_t pinned_free[2];
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

#endif /* PP_CUDA_BACKEND_H */
