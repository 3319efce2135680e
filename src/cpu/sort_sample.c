/* sort_sample.c — pp_sort with PP_SORT_SAMPLE on the CPU: a stable sample sort with
 * OpenMP, the same algorithm as the GPU's (sort_sample.cu), in the layout of the sample
 * sort of CUDA Programming: A Developer's Guide (Cook), ch. 6:
 *
 *  1. samples: one from each of S strata of the array (S = 32 per bucket), at a
 *     pseudo-random place in its stratum; sorted; B-1 splitters at regular quantiles;
 *  2. buckets: a key goes to interval bucket 2i when s_i < key < s_(i+1), or to equality
 *     bucket 2i-1 when key == s_i (order keys compared), so a value frequent enough to be
 *     picked as a splitter gets a bucket of its own that needs no sorting, and the interval
 *     buckets stay small on few-distinct or skewed inputs;
 *  3. count: each thread counts the buckets of its contiguous part of the array;
 *  4. prefix sum in bucket-major, part-minor order: where each part's keys of each bucket
 *     go (this order makes the scatter stable);
 *  5. scatter: each thread moves its part, in order, into a scratch copy;
 *  6. sort each bucket (threads take buckets as they come): interval buckets with the
 *     stable serial merge sort of sort_serial.h, ending in the caller's arrays; equality
 *     buckets are copied back as they are.
 * Fewer than SSC_MIN keys are one bucket: the serial merge sort.
 */
#include "sort_serial.h"

#include <omp.h>
#include <stdlib.h>

#define SSC_MIN 256            /* fewer keys: one bucket */
#define SSC_MAX_SPLITTERS 255  /* up to 511 buckets */
#define SSC_BUCKET_KEYS 2048   /* aimed-for keys per bucket (fits in L2 with its scratch) */
#define SSC_OVERSAMPLE 32      /* samples per bucket */
#define SSC_MIN_PART 16384     /* fewest keys a thread counts and scatters */

static inline uint64_t ssc_hash(uint64_t x) {
  x += UINT64_C(0x9e3779b97f4a7c15);
  x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
  return x ^ (x >> 31);
}

#define SSC_CMP(KT)                                                                            \
  static int ssc_cmp_##KT(const void *a, const void *b) {                                      \
    const KT x = *(const KT *)a, y = *(const KT *)b;                                           \
    return (x > y) - (x < y);                                                                  \
  }
SSC_CMP(uint8_t)
SSC_CMP(uint32_t)
SSC_CMP(uint64_t)

/* What one call needs besides the arrays. */
typedef struct ssc_job {
  void *k, *v, *kb, *vb; /* the caller's arrays, scratch copies of the same sizes */
  size_t n;
  int threads;
  bool desc;
  size_t buckets;   /* B: B - 1 splitters, 2B - 1 bucket ids */
  size_t samples;   /* S */
  void *sample_buf; /* S order keys */
  size_t *counts;   /* threads x (2B - 1) */
  size_t *starts;   /* 2B bucket starts */
} ssc_job;

/* Per key type: the sample sort over the three value variants. */
#define SSC_TYPE(NAME, W, KT, OKEY)                                                            \
  PP_CPU_SORT_SERIALS(NAME, W, KT, OKEY)                                                       \
  /* bucket of order key x (xor flip) among sorted splitters sp[0, ns) */                     \
  static inline size_t ssc_bucket_##NAME(KT x, const KT *sp, size_t ns) {                      \
    size_t lo = 0, hi = ns; /* count of splitters <= x */                                      \
    while (lo < hi) {                                                                          \
      const size_t m = lo + (hi - lo) / 2;                                                     \
      if (sp[m] <= x)                                                                          \
        lo = m + 1;                                                                            \
      else                                                                                     \
        hi = m;                                                                                \
    }                                                                                          \
    return lo && sp[lo - 1] == x ? 2 * lo - 1 : 2 * lo;                                        \
  }                                                                                            \
  /* samples and splitters: sp gets B - 1 splitters */                                        \
  static void ssc_splitters_##NAME(const ssc_job *j, KT flip, KT *sp) {                        \
    KT *smp = j->sample_buf;                                                                   \
    const size_t n = j->n, s = j->samples;                                                     \
    for (size_t i = 0; i < s; i++) {                                                           \
      const size_t lo = pp_cpu_part_begin(n, i, s), hi = pp_cpu_part_begin(n, i + 1, s);      \
      smp[i] = (KT)(OKEY(pp_cpu_ld_##W(j->k, lo + ssc_hash(i) % (hi - lo))) ^ flip);               \
    }                                                                                          \
    qsort(smp, s, sizeof(KT), ssc_cmp_##KT);                                                   \
    for (size_t i = 0; i + 1 < j->buckets; i++) sp[i] = smp[(i + 1) * s / j->buckets];         \
  }

#define SSC_DRIVER(NAME, W, KT, OKEY, SUF, VW, VT, HAS_V)                                      \
  static void ssc_sort_##NAME##_##SUF(const ssc_job *j) {                                      \
    const KT flip = j->desc ? (KT)~(KT)0 : (KT)0;                                              \
    const size_t n = j->n;                                                                     \
    if (j->buckets < 2) {                                                                      \
      ss_sort_##NAME##_##SUF(j->k, j->v, j->kb, j->vb, 0, n, 0, flip);                         \
      return;                                                                                  \
    }                                                                                          \
    KT sp[SSC_MAX_SPLITTERS];                                                                  \
    ssc_splitters_##NAME(j, flip, sp);                                                         \
    const size_t ns = j->buckets - 1, nb = 2 * ns + 1;                                         \
    _Pragma("omp parallel num_threads(j->threads)")                                            \
    {                                                                                          \
      const size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();      \
      const size_t lo = pp_cpu_part_begin(n, t, nt), hi = pp_cpu_part_begin(n, t + 1, nt);     \
      size_t *cnt = j->counts + t * nb;                                                        \
      memset(cnt, 0, nb * sizeof *cnt);                                                        \
      for (size_t i = lo; i < hi; i++)                                                         \
        cnt[ssc_bucket_##NAME((KT)(OKEY(pp_cpu_ld_##W(j->k, i)) ^ flip), sp, ns)]++;               \
      _Pragma("omp barrier")                                                                   \
      /* this part's first place in bucket b */                                                \
      size_t off[2 * SSC_MAX_SPLITTERS + 1];                                                   \
      ss_part_offsets(j->counts, nb, t, nt, off, t == 0 ? j->starts : NULL);                   \
      if (t == 0) j->starts[nb] = n;                                                           \
      for (size_t i = lo; i < hi; i++) {                                                       \
        const KT key = pp_cpu_ld_##W(j->k, i);                                                     \
        const size_t o = off[ssc_bucket_##NAME((KT)(OKEY(key) ^ flip), sp, ns)]++;             \
        pp_cpu_st_##W(j->kb, o, key);                                                              \
        if (HAS_V) pp_cpu_st_##VW(j->vb, o, pp_cpu_ld_##VW(j->v, i));                                  \
      }                                                                                        \
      _Pragma("omp barrier")                                                                   \
      _Pragma("omp for schedule(dynamic, 1)")                                                  \
      for (size_t b = 0; b < nb; b++) {                                                        \
        const size_t s = j->starts[b], e = j->starts[b + 1];                                   \
        if (e == s) continue;                                                                  \
        if (b & 1) { /* all keys equal: in input order already */                             \
          memcpy((unsigned char *)j->k + s * sizeof(KT),                                       \
                 (const unsigned char *)j->kb + s * sizeof(KT), (e - s) * sizeof(KT));         \
          if (HAS_V)                                                                           \
            memcpy((unsigned char *)j->v + s * sizeof(VT),                                     \
                   (const unsigned char *)j->vb + s * sizeof(VT), (e - s) * sizeof(VT));       \
        } else {                                                                               \
          ss_sort_##NAME##_##SUF(j->kb, j->vb, j->k, j->v, s, e, 1, flip);                     \
        }                                                                                      \
      }                                                                                        \
    }                                                                                          \
  }

#define SSC_ALL(NAME, W, KT, OKEY)                                                             \
  SSC_TYPE(NAME, W, KT, OKEY)                                                                  \
  PP_CPU_SORT_VALUES(SSC_DRIVER, NAME, W, KT, OKEY)

PP_CPU_SORT_KEY_TYPES(SSC_ALL)

typedef void (*ssc_fn)(const ssc_job *j);

/* [dtype][keys only, 4-byte values, 8-byte values], in pp_dtype order */
#define SSC_ROW(NAME, W, KT, OKEY) {ssc_sort_##NAME##_k, ssc_sort_##NAME##_v4, ssc_sort_##NAME##_v8},
static const ssc_fn ssc_table[][3] = {PP_CPU_SORT_KEY_TYPES(SSC_ROW)};

pp_status pp_cpu_sort_sample(pp_context *ctx, pp_dtype key_t, void *keys, void *values,
                             size_t value_size, size_t n, pp_order order) {
  const size_t ks = pp_dtype_size(key_t), vs = values ? value_size : 0;
  ssc_job j = {keys, values, NULL, NULL, n, 1, order == PP_DESCENDING, 1, 0, NULL, NULL, NULL};
  if (n >= SSC_MIN) {
    size_t b = n / SSC_BUCKET_KEYS;
    j.buckets = b < 2 ? 2 : b > SSC_MAX_SPLITTERS + 1 ? SSC_MAX_SPLITTERS + 1 : b;
    j.samples = j.buckets * SSC_OVERSAMPLE < n ? j.buckets * SSC_OVERSAMPLE : n;
  }
  j.threads = pp_cpu_threads_for(n, SSC_MIN_PART);
  /* scratch: keys, values, samples, counts, starts (n * ks and n * vs were checked by
     core; small terms cannot overflow once the first two fit) */
  const size_t nb = 2 * j.buckets - 1;
  const size_t kb = PP_CPU_ALIGN64(n * ks);
  const size_t vb = PP_CPU_ALIGN64(n * vs);
  const size_t small = PP_CPU_ALIGN64(j.samples * 8) + PP_CPU_ALIGN64((size_t)j.threads * nb * sizeof(size_t)) +
                       (nb + 1) * sizeof(size_t);
  if (kb < n * ks || vb < n * vs || vb > SIZE_MAX - kb || small > SIZE_MAX - kb - vb)
    return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "pp_sort: scratch for %zu elements does not fit in size_t", n);
  void *scratch = NULL;
  if (ctx->ops->temp_alloc(ctx, &scratch, kb + vb + small) != PP_OK)
    return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "pp_sort: cannot allocate %zu bytes of scratch",
                   kb + vb + small);
  unsigned char *p = scratch;
  j.kb = p;
  j.vb = vs ? p + kb : NULL;
  j.sample_buf = p + kb + vb;
  j.counts = (size_t *)(p + kb + vb + PP_CPU_ALIGN64(j.samples * 8));
  j.starts = j.counts + PP_CPU_ALIGN64((size_t)j.threads * nb * sizeof(size_t)) / sizeof(size_t);
  ssc_table[key_t][vs == 0 ? 0 : vs == 4 ? 1 : 2](&j);
  ctx->ops->temp_free(ctx, scratch);
  return PP_OK;
}
