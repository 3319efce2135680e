/*
 * peer_cpu_blas.cpp — the CPU peer of `parprim bench sgemm`: OpenBLAS's cblas_sgemm, the
 * BLAS a CPU user of C is most likely to link (Debian's libopenblas-dev). Built with it
 * when cmake/cpu_peers.cmake finds it (PP_PEER_OPENBLAS); otherwise every call fails and
 * bench_cpu_blas_name() is NULL, so the bench names the peer as missing.
 *
 * When the library itself calls OpenBLAS (cmake/cpu_blas.cmake) this row measures the
 * wrapper's overhead; a build with -DPP_ENABLE_CBLAS=OFF measures parprim's own kernel.
 */
#include "gpu.h"

#ifdef PP_PEER_OPENBLAS
#include <cblas.h>

#include <climits>
#include <cstdio>
#include <cstring>

extern "C" const char *bench_cpu_blas_name(void) {
  static char name[64];
  if (!name[0]) {
    /* openblas_get_config(): "OpenBLAS 0.3.21 DYNAMIC_ARCH ... Zen MAX_THREADS=64"; keep
     * the name, the version and the core OpenBLAS picked at load time */
    std::snprintf(name, sizeof name, "%s (%s)", OPENBLAS_VERSION + (OPENBLAS_VERSION[0] == ' '),
                  openblas_get_corename());
    size_t len = std::strlen(name);
    for (size_t i = 0; i + 1 < len; i++)
      if (name[i] == ' ' && name[i + 1] == ' ') std::memmove(name + i, name + i + 1, len - i);
  }
  return name;
}

extern "C" int bench_cblas_sgemm(pp_layout layout, pp_trans ta, pp_trans tb, size_t m, size_t n,
                                 size_t k, float alpha, const float *A, size_t lda,
                                 const float *B, size_t ldb, float beta, float *C, size_t ldc,
                                 int threads) {
  const size_t most = INT_MAX;
  if (m > most || n > most || k > most || lda > most || ldb > most || ldc > most) return -1;
  openblas_set_num_threads(threads);
  cblas_sgemm(layout == PP_COL_MAJOR ? CblasColMajor : CblasRowMajor,
              ta == PP_TRANS ? CblasTrans : CblasNoTrans,
              tb == PP_TRANS ? CblasTrans : CblasNoTrans, (blasint)m, (blasint)n, (blasint)k,
              alpha, A, (blasint)lda, B, (blasint)ldb, beta, C, (blasint)ldc);
  return 0;
}

#else

extern "C" const char *bench_cpu_blas_name(void) { return nullptr; }

extern "C" int bench_cblas_sgemm(pp_layout, pp_trans, pp_trans, size_t, size_t, size_t, float,
                                 const float *, size_t, const float *, size_t, float, float *,
                                 size_t, int) {
  return -1;
}

#endif
