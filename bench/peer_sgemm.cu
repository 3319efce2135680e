/* peer_sgemm.cu — cuBLAS SGEMM in pedantic FP32 for the bench and the ladder; see
 * peer_sgemm.h. */
#include "peer_sgemm.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <limits.h>
#include <stdio.h>

static cublasHandle_t g_handle;
static char g_error[256];

static int fail(const char *what, int code) {
  snprintf(g_error, sizeof g_error, "%s failed (cuBLAS status %d)", what, code);
  return -1;
}

extern "C" const char *bench_cublas_error(void) { return g_error; }

extern "C" void bench_cublas_release(void) {
  if (g_handle) cublasDestroy(g_handle);
  g_handle = NULL;
}

static cublasOperation_t op_of(pp_trans t) { return t == PP_TRANS ? CUBLAS_OP_T : CUBLAS_OP_N; }

extern "C" int bench_cublas_sgemm(pp_layout layout, pp_trans ta, pp_trans tb, size_t m,
                                  size_t n, size_t k, float alpha, const float *A, size_t lda,
                                  const float *B, size_t ldb, float beta, float *C, size_t ldc,
                                  void *stream) {
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX ||
      ldc > INT_MAX) {
    snprintf(g_error, sizeof g_error, "cublasSgemm: sizes beyond INT_MAX");
    return -1;
  }
  cublasStatus_t s;
  if (!g_handle) {
    if ((s = cublasCreate(&g_handle)) != CUBLAS_STATUS_SUCCESS) {
      g_handle = NULL;
      return fail("cublasCreate", (int)s);
    }
    /* real FP32: no TF32 or other reduced-precision shortcut */
    if ((s = cublasSetMathMode(g_handle, CUBLAS_PEDANTIC_MATH)) != CUBLAS_STATUS_SUCCESS)
      return fail("cublasSetMathMode(PEDANTIC)", (int)s);
  }
  if ((s = cublasSetStream(g_handle, (cudaStream_t)stream)) != CUBLAS_STATUS_SUCCESS)
    return fail("cublasSetStream", (int)s);
  if (layout == PP_COL_MAJOR)
    s = cublasSgemm(g_handle, op_of(ta), op_of(tb), (int)m, (int)n, (int)k, &alpha, A, (int)lda,
                    B, (int)ldb, &beta, C, (int)ldc);
  else /* row-major C is column-major C^T = op(B)^T op(A)^T */
    s = cublasSgemm(g_handle, op_of(tb), op_of(ta), (int)n, (int)m, (int)k, &alpha, B, (int)ldb,
                    A, (int)lda, &beta, C, (int)ldc);
  return s == CUBLAS_STATUS_SUCCESS ? 0 : fail("cublasSgemm", (int)s);
}
