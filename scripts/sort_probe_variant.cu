/* sort_probe_variant.cu — one variant for sort_probe.cu: the library's sort.cu (without
 * its final dispatch function) or merge.cu, compiled inside namespace PROBE_NS with the
 * tuning macros given on the command line, registered under the name PROBE_NAME.
 * Built by scripts/sort_probe.sh:
 *   -DPROBE_NS=v1 -DPROBE_NAME='"early"' -DPROBE_SORT_SRC='"path/sort_body.cu"' -DPP_SORT_...
 *   -DPROBE_NS=m1 -DPROBE_NAME='"m256"' -DPROBE_MERGE_SRC='"src/cuda/merge.cu"' -DPP_MERGE_...
 *   -DPROBE_NS=s1 -DPROBE_NAME='"c2"' -DPROBE_MSORT_SRC='"path/sort_merge_body.cu"'
 *     -DPROBE_SSORT_SRC='"path/sort_sample_body.cu"' -DPP_MSORT_...
 */
#include "sort.cuh" /* at file scope: the included source's own #include is then empty */
#include "sort_probe.h"

#include <stdint.h>

#include <cstdio>
#include <type_traits>
#include <utility>

#ifdef PROBE_SORT_SRC
namespace PROBE_NS {
#include PROBE_SORT_SRC
}

static pp_status probe_sort_kind(pp_context *ctx, int kind, void *keys, uint32_t *values, size_t n) {
  using namespace PROBE_NS;
  switch (kind) {
  case 0:
  case 4:
    return sort_onesweep<uint32_t, uint32_t, false>(ctx, (uint32_t *)keys, (uint32_t *)nullptr, n,
                                                    pp_make_key_order<uint32_t>(PP_U32, PP_ASCENDING));
  case 1:
    return sort_onesweep<uint32_t, uint32_t, false>(ctx, (uint32_t *)keys, (uint32_t *)nullptr, n,
                                                    pp_make_key_order<uint32_t>(PP_F32, PP_ASCENDING));
  case 2:
    return sort_onesweep<uint64_t, uint32_t, false>(ctx, (uint64_t *)keys, (uint32_t *)nullptr, n,
                                                    pp_make_key_order<uint64_t>(PP_U64, PP_ASCENDING));
  default:
    return sort_onesweep<uint32_t, uint32_t, true>(ctx, (uint32_t *)keys, values, n,
                                                   pp_make_key_order<uint32_t>(PP_U32, PP_ASCENDING));
  }
}

/* With PP_SORT_PHASES: after each sort, the cycles thread 0 of the onesweep blocks spent
 * per tile in each phase (sort.cu), averaged over the tiles of all passes. */
static pp_status probe_sort(pp_context *ctx, int kind, void *keys, uint32_t *values, size_t n) {
  const pp_status s = probe_sort_kind(ctx, kind, keys, values, n);
#ifdef PP_SORT_PHASES
  unsigned long long c[8] = {0};
  cudaDeviceSynchronize();
  cudaMemcpyFromSymbol(c, PROBE_NS::pp_sort_phase_cycles, sizeof c);
  const unsigned long long zero[8] = {0};
  cudaMemcpyToSymbol(PROBE_NS::pp_sort_phase_cycles, zero, sizeof zero);
  if (c[7]) {
    printf("  phases %s kind %d, cycles per tile: claim %.0f rank %.0f place %.0f lookback %.0f scatter %.0f "
           "rest %.0f (%llu tiles)\n", PROBE_NAME, kind, (double)c[0] / c[7], (double)c[1] / c[7], (double)c[2] / c[7],
           (double)c[3] / c[7], (double)c[4] / c[7], (double)c[5] / c[7], c[7]);
  }
#endif
  return s;
}

/* The histogram kernel as sort_onesweep launches it (the same grid and the same status
 * buffer to zero), into scratch of its own. items: the onesweep tile's items per thread. */
template <typename U>
static pp_status probe_hist_t(pp_context *ctx, const U *keys, size_t n, int items, pp_key_order<U> order) {
  using namespace PROBE_NS;
  pp_cuda_state *st = pp_cuda(ctx);
  const size_t tile = (size_t)PP_SORT_THREADS * items, tiles = (n + tile - 1) / tile;
  const size_t status_bytes = tiles * RADIX * 4;
  static char *scratch = nullptr;
  static size_t have = 0;
  const size_t need = align_up(sizeof(sort_header)) + status_bytes;
  if (need > have) {
    cudaFree(scratch);
    if (cudaMalloc((void **)&scratch, need) != cudaSuccess) return PP_ERR_OUT_OF_MEMORY;
    have = need;
  }
  sort_header *hdr = (sort_header *)scratch;
  cudaMemsetAsync(hdr, 0, sizeof(sort_header), st->stream);
#if defined(PROBE_OLD) && defined(HIST_UNROLL) /* a revision from before launch_histogram (5854b20 .. ba2a04f) */
  auto hist = radix_histogram_kernel<U, HIST_THREADS, HIST_UNROLL>;
  static int cache = 0;
  const size_t wave = (size_t)st->sm_count * (size_t)blocks_per_sm(hist, HIST_THREADS, &cache);
  const size_t vec = 16 / sizeof(U);
  size_t g = (n / vec + (size_t)HIST_THREADS * HIST_UNROLL - 1) / ((size_t)HIST_THREADS * HIST_UNROLL);
  g = g < wave ? g : wave;
  hist<<<(unsigned)g, HIST_THREADS, 0, st->stream>>>(keys, n, hdr, (uint4 *)(scratch + align_up(sizeof(sort_header))),
                                                     status_bytes / sizeof(uint4), order);
#else
  launch_histogram<U>(st, keys, n, hdr, scratch + align_up(sizeof(sort_header)), status_bytes, order);
#endif
  return cudaGetLastError() == cudaSuccess ? PP_OK : PP_ERR_DEVICE;
}

static pp_status probe_hist(pp_context *ctx, int kind, const void *keys, size_t n) {
  using namespace PROBE_NS;
  if (kind == 2)
    return probe_hist_t<uint64_t>(ctx, (const uint64_t *)keys, n, onesweep_items(8, 0),
                                  pp_make_key_order<uint64_t>(PP_U64, PP_ASCENDING));
  const pp_key_order<uint32_t> o = pp_make_key_order<uint32_t>(kind == 1 ? PP_F32 : PP_U32, PP_ASCENDING);
  if (kind == 3) return probe_hist_t<uint32_t>(ctx, (const uint32_t *)keys, n, onesweep_items(4, 4), o);
#if defined(PP_SORT_ITEMS_K32_LARGE) && !defined(PROBE_OLD)
  if (n >= (size_t)PP_SORT_K32_LARGE_FROM)
    return probe_hist_t<uint32_t>(ctx, (const uint32_t *)keys, n, PP_SORT_ITEMS_K32_LARGE, o);
#endif
  return probe_hist_t<uint32_t>(ctx, (const uint32_t *)keys, n, onesweep_items(4, 0), o);
}

static int registered = probe_register({PROBE_NAME, probe_sort, probe_hist, nullptr});
#endif

#ifdef PROBE_MERGE_SRC
namespace PROBE_NS {
#include PROBE_MERGE_SRC
}

static pp_status probe_merge(pp_context *ctx, const float *a, size_t na, const float *b, size_t nb, float *out) {
  return PROBE_NS::pp_cuda_merge(ctx, PP_F32, a, na, b, nb, out, PP_ASCENDING);
}

static int registered = probe_register({PROBE_NAME, nullptr, nullptr, probe_merge});
#endif

#ifdef PROBE_MSORT_SRC
namespace PROBE_NS {
#include PROBE_MSORT_SRC
#include PROBE_SSORT_SRC
}

static pp_status probe_msort(pp_context *ctx, int algo, int kind, void *keys, size_t n) {
  using namespace PROBE_NS;
  const pp_key_order<uint32_t> o = pp_make_key_order<uint32_t>(kind == 1 ? PP_F32 : PP_U32, PP_ASCENDING);
  if (algo == 0) return msort_sort<uint32_t, uint32_t, false>(ctx, (uint32_t *)keys, nullptr, n, o);
  return ssort_sort<uint32_t, uint32_t, false>(ctx, (uint32_t *)keys, nullptr, n, o);
}

static int registered = probe_register({PROBE_NAME, nullptr, nullptr, nullptr, probe_msort});
#endif
