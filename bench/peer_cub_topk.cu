/* peer_cub_topk.cu — cub::DeviceTopK as a top-k peer of `parprim bench` (see
 * peer_topk.h).
 *
 * This translation unit is compiled with newer CCCL headers than the rest of the program
 * (cmake/bench_peers.cmake puts PP_CCCL_NEW_INCLUDE on its include path, ahead of the
 * toolkit's CCCL that nvcc adds last as a system directory, and defines
 * PP_HAVE_CUB_TOPK). Two CCCL versions in one program do not collide in CUB itself: CUB
 * opens every namespace with CUB_NAMESPACE_BEGIN, which (cub/util_namespace.cuh, unless
 * CUB_DISABLE_NAMESPACE_MAGIC is defined) adds an inline namespace named after
 * CUB_VERSION and the target architectures, so cub::DeviceRadixSort of the toolkit's CCCL
 * and cub::DeviceTopK of the newer one have different mangled names, kernels included.
 * libcu++ (cuda::, cuda::std::) is versioned only by its ABI number
 * (_LIBCUDACXX_ABI_NAMESPACE, __4 in both), so what both versions define out of line there
 * is merged by the linker: in this file that is only empty tag and customisation-point
 * objects (cuda::std::__4::__cpo::begin, cuda::execution::__4::determinism::...), whose
 * copies are interchangeable, and NVTX's init hooks, which NVTX names per version of its
 * own (_v3). Device code is compiled whole-program (no relocatable device code), so kernels
 * and device functions never meet across translation units. docs/benchmarks/peers.md shows
 * how this was checked (nm on the object). peer_common.cuh brings only the CUDA runtime
 * API, no CCCL header, so it is safe to include here.
 */
#include "peer_topk.h"

#include <stdio.h>

static char g_err[256];

extern "C" const char *bench_cub_topk_error(void) { return g_err; }

#ifndef PP_HAVE_CUB_TOPK

extern "C" const char *bench_cub_topk_name(void) {
  snprintf(g_err, sizeof g_err,
           "built without CCCL >= 3.3 headers (cmake -DPP_CCCL_NEW_INCLUDE=..., or "
           "scripts/bench_wheels.sh)");
  return NULL;
}
extern "C" int bench_cub_topk_prepare(pp_dtype, size_t, size_t, bool, bool, void *) {
  bench_cub_topk_name();
  return -1;
}
extern "C" int bench_cub_topk(pp_dtype, const void *, size_t, size_t, bool, void *, uint64_t *,
                              void *) {
  bench_cub_topk_name();
  return -1;
}
extern "C" void bench_cub_topk_release(void) {}

#else /* PP_HAVE_CUB_TOPK */

#include "peer_common.cuh"

#include <cub/device/device_topk.cuh>
#include <cub/version.cuh>
#include <cuda/iterator>
#include <cuda/std/execution>
#include <cuda/stream_ref>

/* DeviceTopK's Max/MinPairs and Max/MinKeys are documented as added in CCCL 3.3.0
 * (cub/device/device_topk.cuh, "versionadded"). */
#if CUB_VERSION < 300300
#error "cub::DeviceTopK needs CCCL 3.3 or later: point PP_CCCL_NEW_INCLUDE at newer headers"
#endif
#ifdef CUB_DISABLE_NAMESPACE_MAGIC
#error "the versioned CUB namespace keeps this CCCL apart from the toolkit's: leave it on"
#endif

static peer_temp g_temp; /* DeviceTopK's temporary storage */

static int fail(const char *what, cudaError_t e) { return peer_fail(g_err, sizeof g_err, what, e); }

extern "C" const char *bench_cub_topk_name(void) {
  static char name[64];
  snprintf(name, sizeof name, "CUB DeviceTopK (CCCL %d.%d.%d)", CUB_MAJOR_VERSION,
           CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION);
  return name;
}

/* The only configuration this CCCL implements, asked for explicitly (device_topk.cuh:
 * "Any other combination (including an empty, no-requirement environment) is rejected at
 * compile time"), with the bench's stream. */
static auto topk_env(cudaStream_t s) {
  auto req = cuda::execution::require(cuda::execution::determinism::not_guaranteed,
                                      cuda::execution::output_ordering::unsorted);
  return cuda::std::execution::env{cuda::stream_ref{s}, req};
}

/* temp == NULL: size query. Counts below 2^32 go in as 32-bit, as CUB picks its offset
 * type from them. */
template <typename K, typename N>
static cudaError_t run_n(void *temp, size_t &bytes, const void *in, N n, N k, bool largest,
                         void *values, uint64_t *indices, cudaStream_t s) {
  const K *kin = (const K *)in;
  K *kout = (K *)values;
  auto env = topk_env(s);
  if (indices) {
    cuda::counting_iterator<uint64_t> pos(0);
    return largest ? cub::DeviceTopK::MaxPairs(temp, bytes, kin, kout, pos, indices, n, k, env)
                   : cub::DeviceTopK::MinPairs(temp, bytes, kin, kout, pos, indices, n, k, env);
  }
  return largest ? cub::DeviceTopK::MaxKeys(temp, bytes, kin, kout, n, k, env)
                 : cub::DeviceTopK::MinKeys(temp, bytes, kin, kout, n, k, env);
}

template <typename K>
static cudaError_t run(void *temp, size_t &bytes, const void *in, size_t n, size_t k,
                       bool largest, void *values, uint64_t *indices, cudaStream_t s) {
  if (n <= (size_t)UINT32_MAX)
    return run_n<K, uint32_t>(temp, bytes, in, (uint32_t)n, (uint32_t)k, largest, values, indices,
                              s);
  return run_n<K, uint64_t>(temp, bytes, in, (uint64_t)n, (uint64_t)k, largest, values, indices, s);
}

static cudaError_t run_t(pp_dtype t, void *temp, size_t &bytes, const void *in, size_t n, size_t k,
                         bool largest, void *values, uint64_t *indices, cudaStream_t s) {
  switch (t) {
  case PP_U8: return run<uint8_t>(temp, bytes, in, n, k, largest, values, indices, s);
  case PP_I32: return run<int32_t>(temp, bytes, in, n, k, largest, values, indices, s);
  case PP_U32: return run<uint32_t>(temp, bytes, in, n, k, largest, values, indices, s);
  case PP_I64: return run<int64_t>(temp, bytes, in, n, k, largest, values, indices, s);
  case PP_U64: return run<uint64_t>(temp, bytes, in, n, k, largest, values, indices, s);
  case PP_F32: return run<float>(temp, bytes, in, n, k, largest, values, indices, s);
  case PP_F64: return run<double>(temp, bytes, in, n, k, largest, values, indices, s);
  }
  return cudaErrorInvalidValue;
}

extern "C" int bench_cub_topk_prepare(pp_dtype t, size_t n, size_t k, bool largest, bool indices,
                                      void *stream) {
  if (k == 0 || k > n) {
    snprintf(g_err, sizeof g_err, "DeviceTopK: k = %zu is not in 1..n = %zu", k, n);
    return -1;
  }
  size_t bytes = 0;
  /* a size query dereferences nothing; only whether there is an index output matters */
  static uint64_t no_indices;
  cudaError_t e = run_t(t, NULL, bytes, NULL, n, k, largest, NULL, indices ? &no_indices : NULL,
                        (cudaStream_t)stream);
  if (e != cudaSuccess) return fail("DeviceTopK (size query)", e);
  return peer_temp_grow(&g_temp, bytes, g_err, sizeof g_err);
}

extern "C" int bench_cub_topk(pp_dtype t, const void *d_in, size_t n, size_t k, bool largest,
                              void *d_values, uint64_t *d_indices, void *stream) {
  size_t bytes = g_temp.bytes;
  cudaError_t e = run_t(t, g_temp.p, bytes, d_in, n, k, largest, d_values, d_indices,
                        (cudaStream_t)stream);
  if (e != cudaSuccess) return fail("cub::DeviceTopK", e);
  return 0;
}

extern "C" void bench_cub_topk_release(void) { peer_temp_release(&g_temp); }

#endif /* PP_HAVE_CUB_TOPK */
