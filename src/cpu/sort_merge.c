/* sort_merge.c — pp_sort with PP_SORT_MERGE on the CPU: a stable merge sort with OpenMP.
 *
 * The array is cut into one contiguous part per thread; each thread sorts its part with the
 * serial bottom-up merge sort of sort_serial.h (insertion-sorted runs of 16, then merge
 * passes). Then ceil(log2(parts)) rounds merge neighbouring sorted parts; in every round
 * each thread writes an equal share of the whole output, finding where its share starts
 * in the two runs it falls in by merge path (binary search), so all threads work even in
 * the last round, which is one merge. Keys (and values beside them) ping-pong between the
 * caller's arrays and one scratch copy; the parts are sorted into the one that makes the
 * last round end in the caller's arrays. Below PP_CPU_PARALLEL_MIN keys, one thread sorts
 * the whole array.
 */
#include "sort_serial.h"

#include <omp.h>

/* Fewest keys a thread sorts: below this, the merge rounds cost more than they share. */
#define MS_MIN_PART 16384

#define MS_DRIVER(NAME, KT, SUF)                                                               \
  static void ms_sort_##NAME##_##SUF(void *k, void *v, void *kb, void *vb, size_t n,           \
                                     int threads, bool desc) {                                 \
    const KT flip = desc ? (KT)~(KT)0 : (KT)0;                                                 \
    if (threads <= 1) {                                                                        \
      ss_sort_##NAME##_##SUF(k, v, kb, vb, 0, n, 0, flip);                                     \
      return;                                                                                  \
    }                                                                                          \
    const size_t parts = (size_t)threads;                                                      \
    int rounds = 0;                                                                            \
    while (((size_t)1 << rounds) < parts) rounds++;                                            \
    _Pragma("omp parallel num_threads(threads)")                                               \
    {                                                                                          \
      const size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();      \
      /* a team smaller than asked for: the parts are still all sorted and merged */          \
      for (size_t p = t; p < parts; p += nt)                                                   \
        ss_sort_##NAME##_##SUF(k, v, kb, vb, pp_cpu_part_begin(n, p, parts),                   \
                               pp_cpu_part_begin(n, p + 1, parts), rounds & 1, flip);          \
      void *ks = (rounds & 1) ? kb : k, *vs = (rounds & 1) ? vb : v;                           \
      void *kd = (rounds & 1) ? k : kb, *vd = (rounds & 1) ? v : vb;                           \
      const size_t o0 = pp_cpu_part_begin(n, t, nt), o1 = pp_cpu_part_begin(n, t + 1, nt);     \
      for (int r = 0; r < rounds; r++) {                                                       \
        _Pragma("omp barrier")                                                                 \
        const size_t w = (size_t)1 << r;                                                       \
        for (size_t p = 0; p < parts; p += 2 * w) {                                            \
          const size_t lo = pp_cpu_part_begin(n, p, parts);                                    \
          const size_t mid = pp_cpu_part_begin(n, p + w < parts ? p + w : parts, parts);       \
          const size_t hi = pp_cpu_part_begin(n, p + 2 * w < parts ? p + 2 * w : parts, parts); \
          const size_t a = o0 > lo ? o0 : lo, b = o1 < hi ? o1 : hi;                           \
          if (a < b)                                                                           \
            ss_merge_slice_##NAME##_##SUF(ks, vs, kd, vd, lo, mid, hi, a - lo, b - lo, flip);  \
        }                                                                                      \
        ss_swap_buffers(&ks, &kd, &vs, &vd);                                                   \
      }                                                                                        \
    }                                                                                          \
  }

#define MS_TYPE(NAME, W, KT, OKEY)                                                             \
  PP_CPU_SORT_SERIALS(NAME, W, KT, OKEY)                                                       \
  MS_DRIVER(NAME, KT, k)                                                                       \
  MS_DRIVER(NAME, KT, v4)                                                                      \
  MS_DRIVER(NAME, KT, v8)

PP_CPU_SORT_KEY_TYPES(MS_TYPE)

typedef void (*ms_fn)(void *k, void *v, void *kb, void *vb, size_t n, int threads, bool desc);

/* [dtype][keys only, 4-byte values, 8-byte values], in pp_dtype order */
#define MS_ROW(NAME, W, KT, OKEY) {ms_sort_##NAME##_k, ms_sort_##NAME##_v4, ms_sort_##NAME##_v8},
static const ms_fn ms_table[][3] = {PP_CPU_SORT_KEY_TYPES(MS_ROW)};

pp_status pp_cpu_sort_merge(pp_context *ctx, pp_dtype key_t, void *keys, void *values,
                            size_t value_size, size_t n, pp_order order) {
  const size_t ks = pp_dtype_size(key_t), vs = values ? value_size : 0;
  const int threads = pp_cpu_threads_for(n, MS_MIN_PART);
  void *kbuf = NULL, *vbuf = NULL;
  const pp_status st = ss_scratch(ctx, n, ks, vs, &kbuf, &vbuf);
  if (st != PP_OK) return st;
  ms_table[key_t][vs == 0 ? 0 : vs == 4 ? 1 : 2](keys, values, kbuf, vbuf, n, threads,
                                                 order == PP_DESCENDING);
  ctx->ops->temp_free(ctx, kbuf);
  return PP_OK;
}
