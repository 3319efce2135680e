/*
 * peer_sgemm.h — cuBLAS as the SGEMM peer of `parprim bench sgemm` and the sgemm ladder,
 * behind a C interface (bench/peer_sgemm.cu; built only with CUDA, call it under
 * #ifdef PP_HAVE_CUDA).
 *
 * The handle is created on first use with CUBLAS_PEDANTIC_MATH: plain FP32 arithmetic,
 * no TF32 tensor cores, the same arithmetic pp_sgemm does. Every call runs on the stream
 * it is given. Arguments follow pp_sgemm (CBLAS): row-major calls are passed to cuBLAS,
 * which is column-major, as C^T = op(B)^T op(A)^T. Returns 0, or -1 with the reason in
 * bench_cublas_error() (also for sizes beyond cuBLAS's int arguments).
 */
#ifndef PP_BENCH_PEER_SGEMM_H
#define PP_BENCH_PEER_SGEMM_H

#include "parprim.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

int bench_cublas_sgemm(pp_layout layout, pp_trans ta, pp_trans tb, size_t m, size_t n,
                       size_t k, float alpha, const float *A, size_t lda, const float *B,
                       size_t ldb, float beta, float *C, size_t ldc, void *stream);
const char *bench_cublas_error(void);
/* Destroys the handle (a later call creates a new one). */
void bench_cublas_release(void);

#ifdef __cplusplus
}
#endif

#endif /* PP_BENCH_PEER_SGEMM_H */
