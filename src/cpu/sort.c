/*
 * sort.c — pp_sort (LSD radix sort) and pp_merge (merge path) on the CPU, with OpenMP, and
 * the backend's out-of-place sort and merge of pairs built on them.
 *
 * Order. Every key is mapped to an unsigned "order key" whose unsigned order is the one
 * API.md asks for: unsigned integers as they are, signed integers with the sign bit
 * flipped, floats with the usual sign-magnitude flip after two canonicalisations: -0.0
 * takes +0.0's order key (they are equal, so they keep their input order), and every NaN
 * takes the all-ones order key, above +inf's (all NaNs are equal and last). The order key
 * is recomputed from an element's bits whenever it is needed; elements themselves are
 * only ever copied, so a -0.0 stays -0.0 and a NaN keeps its sign and payload.
 *
 * Descending is ascending on the complemented order key: complementing reverses distinct
 * keys and leaves equal keys equal, so a stable ascending sort of it is the stable
 * descending sort (equal keys in input order), which reversing an ascending result is not.
 *
 * Radix sort, one pass per 8-bit digit from the least significant: each thread counts the
 * digits of its contiguous part of the array, takes as its offset for digit d the number
 * of keys with a smaller digit plus those with digit d in the parts before its own, and
 * scatters its part in order. Equal digits from a lower part land before those of a higher
 * one and a thread writes in input order, so every pass is stable and the whole is a
 * stable sort. Digits whose bits are the same in every key (found in one OR pass over the
 * keys first) are skipped: such a pass would copy the array unchanged. Passes ping-pong
 * between the array and one scratch buffer (values move beside keys), with a copy back
 * when their count is odd. With one thread (under 2^16 keys), the counts of every digit
 * come from one read, since they do not depend on the order of the keys.
 *
 * Below SORT_SMALL keys the passes' fixed cost (a 256-entry prefix sum per digit)
 * dominates, so the serial merge sort of sort_serial.h (insertion-sorted runs merged
 * bottom up) runs instead. u8 keys without values are counted, not sorted: the counts are the result.
 *
 * Element bits are read and written through memcpy: the arrays are the caller's floats or
 * integers, read here only as unsigned words of their width.
 */
#include "sort_serial.h"

#include <omp.h>

/* Below this many keys of KT, a serial merge sort: a radix pass costs a 256-entry prefix
 * sum per digit, as much as the keys themselves for a few hundred keys. Measured: one
 * thread's radix sort overtakes the merge sort near 256 32-bit and 512 64-bit keys. */
#define SORT_SMALL(KT) (64 * sizeof(KT))
/* Fewest keys a thread of the radix sort gets: each thread sums every thread's histogram
 * in every pass, which must stay small beside its part of the keys. */
#define SORT_MIN_PART 16384

/* Digit width. 11-bit digits would make 32-bit keys three passes instead of four but
 * scatter to 2048 places at once; measured on 2^24 u32 (2-core Xeon), keys alone went 9%
 * faster and key-value pairs 34% slower, so every key width uses 8 bits. */
#define RADIX_BITS 8
#define RADIX_MAX (1u << RADIX_BITS)
/* Histograms allocated: one per thread, and at least one per digit of a 64-bit key for the
 * one-thread sort, which counts every digit in one read. */
#define HIST_MIN_SLOTS 8

/* ---- the work of one call ------------------------------------------------------------ */

typedef struct sort_job {
  void *keys, *vals; /* the caller's arrays (vals NULL: keys only) */
  void *kbuf, *vbuf; /* scratch of the same sizes */
  size_t *hist;      /* (threads * (1 + HIST_MIN_SLOTS) + HIST_MIN_SLOTS) * RADIX_MAX counts */
  size_t n;
  int threads;
  bool desc;
} sort_job;

/* Scratch is laid out as histograms, key buffer, value buffer, each starting on its own
 * cache line so that threads writing the ends of two regions do not share a line. */

/* ---- one key type, one value width --------------------------------------------------- *
 * W: the unsigned word of the key (u8, u32, u64); KT its C type; OKEY its order key;
 * BITS the digit width; VW the value word (u32 or u64; for keys only, u32 and HAS_V 0, so
 * every value line is dead code). */
#define PP_CPU_SORT_VARIANT(NAME, W, KT, OKEY, BITS, SUF, VW, VT, HAS_V)                      \
  /* One thread: a digit's counts do not depend on where the keys are, so one read counts   \
   * every digit at once, and a digit whose count for one value is n is a pass to skip. */ \
  static void radix_serial_##NAME##_##SUF(const sort_job *job, KT flip) {                   \
    enum { RADIX = 1 << (BITS), DIGITS = (8 * (int)sizeof(KT) + (BITS) - 1) / (BITS) };      \
    _Static_assert(DIGITS * RADIX <= HIST_MIN_SLOTS * RADIX_MAX, "histograms fit");         \
    const size_t n = job->n;                                                                \
    size_t *const h = job->hist;                                                            \
    memset(h, 0, DIGITS * RADIX * sizeof *h);                                               \
    for (size_t i = 0; i < n; i++) {                                                        \
      KT o = (KT)(OKEY(pp_cpu_ld_##W(job->keys, i)) ^ flip);                                       \
      for (int q = 0; q < DIGITS; q++) h[q * RADIX + ((o >> (q * (BITS))) & (RADIX - 1))]++; \
    }                                                                                       \
    const KT o0 = (KT)(OKEY(pp_cpu_ld_##W(job->keys, 0)) ^ flip);                                  \
    void *ks = job->keys, *vs = job->vals, *kd = job->kbuf, *vd = job->vbuf;                \
    for (int q = 0; q < DIGITS; q++) {                                                      \
      const int s = q * (BITS);                                                             \
      size_t *const c = h + q * RADIX;                                                      \
      if (c[(o0 >> s) & (RADIX - 1)] == n) continue;                                        \
      size_t sum = 0;                                                                       \
      for (size_t d = 0; d < RADIX; d++) {                                                  \
        size_t x = c[d];                                                                    \
        c[d] = sum;                                                                         \
        sum += x;                                                                           \
      }                                                                                     \
      for (size_t i = 0; i < n; i++) {                                                      \
        KT k = pp_cpu_ld_##W(ks, i);                                                               \
        size_t o = c[((KT)(OKEY(k) ^ flip) >> s) & (RADIX - 1)]++;                          \
        pp_cpu_st_##W(kd, o, k);                                                                   \
        if (HAS_V) pp_cpu_st_##VW(vd, o, pp_cpu_ld_##VW(vs, i));                                          \
      }                                                                                     \
      ss_swap_buffers(&ks, &kd, &vs, &vd);                                                    \
    }                                                                                       \
    if (ks != job->keys) {                                                                  \
      memcpy(job->keys, ks, n * sizeof(KT));                                                \
      if (HAS_V) memcpy(job->vals, vs, n * sizeof(VT));                                     \
    }                                                                                       \
  }                                                                                         \
                                                                                            \
  static void radix_sort_##NAME##_##SUF(const sort_job *job, KT flip) {                     \
    enum { RADIX = 1 << (BITS), KEY_BITS = 8 * (int)sizeof(KT) };                           \
    const size_t n = job->n;                                                                \
    void *const keys = job->keys, *const vals = job->vals;                                  \
    KT first = OKEY(pp_cpu_ld_##W(keys, 0)), diff = 0;                                             \
    _Pragma("omp parallel for reduction(| : diff) schedule(static) num_threads(job->threads)") \
    for (size_t i = 0; i < n; i++) diff |= (KT)(OKEY(pp_cpu_ld_##W(keys, i)) ^ first);             \
    int shift[KEY_BITS], passes = 0;                                                        \
    for (int s = 0; s < KEY_BITS; s += (BITS))                                              \
      if ((diff >> s) & (RADIX - 1)) shift[passes++] = s;                                   \
    if (passes == 0) return; /* all keys equal: already sorted, and stably */               \
    _Pragma("omp parallel num_threads(job->threads)")                                       \
    {                                                                                       \
      const size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();    \
      const size_t lo = pp_cpu_part_begin(n, t, nt), hi = pp_cpu_part_begin(n, t + 1, nt);  \
      size_t *const h = job->hist + t * RADIX, off[RADIX];                                  \
      void *ks = keys, *vs = vals, *kd = job->kbuf, *vd = job->vbuf;                        \
      for (int p = 0; p < passes; p++) {                                                    \
        const int s = shift[p];                                                             \
        memset(h, 0, RADIX * sizeof *h);                                                    \
        for (size_t i = lo; i < hi; i++)                                                    \
          h[((KT)(OKEY(pp_cpu_ld_##W(ks, i)) ^ flip) >> s) & (RADIX - 1)]++;                      \
        _Pragma("omp barrier")                                                              \
        /* this thread's offset for digit d: every key with a smaller digit, then digit d  \
         * in the parts before it */                                                        \
        ss_part_offsets(job->hist, RADIX, t, nt, off, NULL);                                \
        for (size_t i = lo; i < hi; i++) {                                                  \
          KT k = pp_cpu_ld_##W(ks, i);                                                             \
          size_t o = off[((KT)(OKEY(k) ^ flip) >> s) & (RADIX - 1)]++;                      \
          pp_cpu_st_##W(kd, o, k);                                                                 \
          if (HAS_V) pp_cpu_st_##VW(vd, o, pp_cpu_ld_##VW(vs, i));                                        \
        }                                                                                   \
        /* the next pass reads what every thread wrote, and rewrites the histograms the     \
         * others have read */                                                              \
        _Pragma("omp barrier")                                                              \
        ss_swap_buffers(&ks, &kd, &vs, &vd);                                                  \
      }                                                                                     \
      if (passes & 1) {                                                                     \
        memcpy((unsigned char *)keys + lo * sizeof(KT),                                     \
               (const unsigned char *)ks + lo * sizeof(KT), (hi - lo) * sizeof(KT));        \
        if (HAS_V)                                                                          \
          memcpy((unsigned char *)vals + lo * sizeof(VT),                                   \
                 (const unsigned char *)vs + lo * sizeof(VT), (hi - lo) * sizeof(VT));      \
      }                                                                                     \
    }                                                                                       \
  }                                                                                         \
                                                                                            \
  /* 64-bit keys on several threads: one parallel pass on the top digit (shift 56) splits    \
   * the keys into RADIX buckets in the scratch, then the threads take the buckets one at a  \
   * time and finish each with the one-thread sort above while it sits in their cache (it     \
   * skips the top digit, constant in a bucket): about two passes over memory instead of two \
   * per digit. Stable: the split pass is, and so is each bucket's sort. The counts come     \
   * first, and when one bucket would hold more than a thread's share (keys that share their \
   * top digit) it returns false before moving anything, and the LSD sort runs instead. */   \
  static bool radix_msd_##NAME##_##SUF(const sort_job *job, KT flip) {                      \
    enum { RADIX = 1 << (BITS), TOP = 8 * (int)sizeof(KT) - (BITS) };                        \
    const size_t n = job->n;                                                                \
    bool split = true;                                                                      \
    _Pragma("omp parallel num_threads(job->threads)")                                       \
    {                                                                                       \
      const size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();    \
      const size_t lo = pp_cpu_part_begin(n, t, nt), hi = pp_cpu_part_begin(n, t + 1, nt);  \
      size_t *const h = job->hist + t * RADIX, off[RADIX], start[RADIX + 1];                \
      memset(h, 0, RADIX * sizeof *h);                                                      \
      for (size_t i = lo; i < hi; i++)                                                      \
        h[(KT)(OKEY(pp_cpu_ld_##W(job->keys, i)) ^ flip) >> TOP]++;                         \
      _Pragma("omp barrier")                                                                \
      const size_t most = ss_part_offsets(job->hist, RADIX, t, nt, off, start);              \
      start[RADIX] = n;                                                                     \
      if (most <= n / (2 * nt)) { /* every thread reaches the same decision */             \
        for (size_t i = lo; i < hi; i++) {                                                  \
          KT k = pp_cpu_ld_##W(job->keys, i);                                               \
          size_t o = off[(KT)(OKEY(k) ^ flip) >> TOP]++;                                    \
          pp_cpu_st_##W(job->kbuf, o, k);                                                   \
          if (HAS_V) pp_cpu_st_##VW(job->vbuf, o, pp_cpu_ld_##VW(job->vals, i));            \
        }                                                                                   \
        _Pragma("omp barrier")                                                              \
        size_t *const mine = job->hist + (nt + t * HIST_MIN_SLOTS) * RADIX_MAX;             \
        _Pragma("omp for schedule(dynamic, 1)")                                             \
        for (size_t d = 0; d < RADIX; d++) {                                                \
          const size_t b0 = start[d], m = start[d + 1] - b0;                                \
          unsigned char *kb = (unsigned char *)job->kbuf + b0 * sizeof(KT);                 \
          unsigned char *kk = (unsigned char *)job->keys + b0 * sizeof(KT);                 \
          unsigned char *vb = HAS_V ? (unsigned char *)job->vbuf + b0 * sizeof(VT) : NULL;  \
          unsigned char *vv = HAS_V ? (unsigned char *)job->vals + b0 * sizeof(VT) : NULL;  \
          if (m >= SORT_SMALL(KT)) {                                                        \
            const sort_job sub = {kb, vb, kk, vv, mine, m, 1, job->desc};                   \
            radix_serial_##NAME##_##SUF(&sub, flip);                                        \
          } else if (m > 1) {                                                               \
            ss_sort_##NAME##_##SUF(kb, vb, kk, vv, 0, m, 0, flip);                          \
          }                                                                                 \
          memcpy(kk, kb, m * sizeof(KT));                                                   \
          if (HAS_V) memcpy(vv, vb, m * sizeof(VT));                                        \
        }                                                                                   \
      } else if (t == 0) {                                                                  \
        split = false;                                                                      \
      }                                                                                     \
    }                                                                                       \
    return split;                                                                           \
  }                                                                                         \
                                                                                            \
  static void sort_##NAME##_##SUF(const sort_job *job) {                                    \
    KT flip = job->desc ? (KT)~(KT)0 : (KT)0;                                               \
    if (job->n < SORT_SMALL(KT))                                                            \
      ss_sort_##NAME##_##SUF(job->keys, job->vals, job->kbuf, job->vbuf, 0, job->n, 0, flip); \
    else if (job->threads == 1)                                                             \
      radix_serial_##NAME##_##SUF(job, flip);                                               \
    else if (sizeof(KT) < 8 || !radix_msd_##NAME##_##SUF(job, flip))                        \
      radix_sort_##NAME##_##SUF(job, flip);                                                 \
  }

/* pp_merge for one key type: merge path. Output position d of the stable merge is
 * preceded by exactly split(d) elements of a; threads take equal output ranges and find
 * where their inputs start by binary search, then merge serially. The split depends on the
 * keys alone; the variants with values (merge_pairs) move each key's value beside it. */
#define PP_CPU_MERGE_SPLIT(NAME, W, KT, OKEY)                                               \
  static size_t merge_split_##NAME(const void *a, size_t na, const void *b, size_t nb,      \
                                   size_t d, KT flip) {                                     \
    /* the smallest i with a[i] after b[d-1-i]; a[i] <= b[d-1-i] puts a[i] first (ties) */  \
    size_t lo = d > nb ? d - nb : 0, hi = d < na ? d : na;                                  \
    while (lo < hi) {                                                                       \
      size_t mid = lo + (hi - lo) / 2;                                                      \
      if ((KT)(OKEY(pp_cpu_ld_##W(a, mid)) ^ flip) <= (KT)(OKEY(pp_cpu_ld_##W(b, d - 1 - mid)) ^ flip))   \
        lo = mid + 1;                                                                       \
      else                                                                                  \
        hi = mid;                                                                           \
    }                                                                                       \
    return lo;                                                                              \
  }

/* The tail of one input from index i to its part's end i1, keys (and values) copied. */
static void merge_tail(void *out, void *vout, size_t o, const void *src, const void *vsrc,
                       size_t i, size_t i1, size_t ks, size_t vs) {
  if (i >= i1) return; /* the input may be NULL when empty */
  memcpy((unsigned char *)out + o * ks, (const unsigned char *)src + i * ks, (i1 - i) * ks);
  if (vs)
    memcpy((unsigned char *)vout + o * vs, (const unsigned char *)vsrc + i * vs, (i1 - i) * vs);
}

#define PP_CPU_MERGE_VARIANT(NAME, W, KT, OKEY, SUF, VW, VT, HAS_V)                          \
  static void merge_##NAME##_##SUF(const void *a, const void *va, size_t na, const void *b,  \
                                   const void *vb, size_t nb, void *out, void *vout,         \
                                   bool desc) {                                             \
    const KT flip = desc ? (KT)~(KT)0 : (KT)0;                                              \
    const size_t n = na + nb;                                                               \
    const int parts = n >= PP_CPU_PARALLEL_MIN ? pp_cpu_threads() : 1;                      \
    _Pragma("omp parallel num_threads(parts)")                                              \
    {                                                                                       \
      const size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();    \
      const size_t d0 = pp_cpu_part_begin(n, t, nt), d1 = pp_cpu_part_begin(n, t + 1, nt);  \
      const size_t i0 = merge_split_##NAME(a, na, b, nb, d0, flip);                         \
      const size_t i1 = merge_split_##NAME(a, na, b, nb, d1, flip);                         \
      size_t i = i0, j = d0 - i0, o = d0;                                                   \
      const size_t j1 = d1 - i1;                                                            \
      while (i < i1 && j < j1) {                                                            \
        KT x = pp_cpu_ld_##W(a, i), y = pp_cpu_ld_##W(b, j);                                \
        bool take_b = (KT)(OKEY(y) ^ flip) < (KT)(OKEY(x) ^ flip);                          \
        if (HAS_V)                                                                          \
          pp_cpu_st_##VW(vout, o, take_b ? pp_cpu_ld_##VW(vb, j) : pp_cpu_ld_##VW(va, i));  \
        pp_cpu_st_##W(out, o++, take_b ? y : x);                                            \
        i += !take_b;                                                                       \
        j += take_b;                                                                        \
      }                                                                                     \
      merge_tail(out, vout, o, a, va, i, i1, sizeof(KT), HAS_V ? sizeof(VT) : 0);           \
      o += i1 - i;                                                                          \
      merge_tail(out, vout, o, b, vb, j, j1, sizeof(KT), HAS_V ? sizeof(VT) : 0);           \
    }                                                                                       \
  }

#define PP_CPU_RADIX_VARIANT(NAME, W, KT, OKEY, SUF, VW, VT, HAS_V)                          \
  PP_CPU_SORT_VARIANT(NAME, W, KT, OKEY, RADIX_BITS, SUF, VW, VT, HAS_V)
#define PP_CPU_SORT_TYPE(NAME, W, KT, OKEY)                                                 \
  PP_CPU_SORT_SERIALS(NAME, W, KT, OKEY)                                                    \
  PP_CPU_SORT_VALUES(PP_CPU_RADIX_VARIANT, NAME, W, KT, OKEY)                               \
  PP_CPU_MERGE_SPLIT(NAME, W, KT, OKEY)                                                     \
  PP_CPU_SORT_VALUES(PP_CPU_MERGE_VARIANT, NAME, W, KT, OKEY)

PP_CPU_SORT_KEY_TYPES(PP_CPU_SORT_TYPE)

typedef void (*sort_fn)(const sort_job *job);
typedef void (*merge_fn)(const void *a, const void *va, size_t na, const void *b,
                         const void *vb, size_t nb, void *out, void *vout, bool desc);

/* [dtype][keys only, 4-byte values, 8-byte values], in pp_dtype order */
#define SORT_ROW(NAME, W, KT, OKEY) {sort_##NAME##_k, sort_##NAME##_v4, sort_##NAME##_v8},
#define MERGE_ROW(NAME, W, KT, OKEY) {merge_##NAME##_k, merge_##NAME##_v4, merge_##NAME##_v8},
static const sort_fn sort_table[][3] = {PP_CPU_SORT_KEY_TYPES(SORT_ROW)};
static const merge_fn merge_table[][3] = {PP_CPU_SORT_KEY_TYPES(MERGE_ROW)};

/* u8 keys alone: the sorted array is each byte value repeated as often as it occurs, so
 * one counting pass and one filling pass replace the sort (and its scratch). */
static void count_sort_u8(uint8_t *keys, size_t n, bool desc, size_t *hist, int threads) {
  uint64_t total[256] = {0};
#pragma omp parallel num_threads(threads)
  {
    const size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
    const size_t lo = pp_cpu_part_begin(n, t, nt), hi = pp_cpu_part_begin(n, t + 1, nt);
    size_t *const h = hist + t * 256;
    memset(h, 0, 256 * sizeof *h);
    for (size_t i = lo; i < hi; i++) h[keys[i]]++;
#pragma omp barrier
#pragma omp single
    for (size_t v = 0; v < 256; v++)
      for (size_t u = 0; u < nt; u++) total[v] += hist[u * 256 + v];
    /* each thread fills its own output range [lo, hi) from the runs that overlap it */
    size_t start = 0;
    for (size_t r = 0; r < 256 && start < hi; r++) {
      uint8_t v = (uint8_t)(desc ? 255 - r : r);
      size_t end = start + total[v];
      size_t a = start > lo ? start : lo, b = end < hi ? end : hi;
      if (a < b) memset(keys + a, v, b - a);
      start = end;
    }
  }
}

pp_status pp_cpu_sort(pp_context *ctx, pp_dtype key_t, void *keys, void *values,
                      size_t value_size, size_t n, pp_order order, pp_sort_algo algo) {
  /* the other algorithms by pp_sort_algo; AUTO and RADIX run the radix sort below */
  static pp_cpu_sort_algo_fn *const other[] = {[PP_SORT_MERGE] = pp_cpu_sort_merge,
                                               [PP_SORT_SAMPLE] = pp_cpu_sort_sample,
                                               [PP_SORT_QUICK] = pp_cpu_sort_quick};
  if (n < 2) return PP_OK;
  if ((size_t)algo < sizeof other / sizeof other[0] && other[algo])
    return other[algo](ctx, key_t, keys, values, value_size, n, order);
  const bool desc = order == PP_DESCENDING;
  const int threads = pp_cpu_threads_for(n, SORT_MIN_PART);
  const size_t ks = pp_dtype_size(key_t), vs = values ? value_size : 0;
  /* a histogram per thread, then (the split sort of 64-bit keys) the one-thread sort's
   * histograms per thread */
  const size_t slots = (size_t)threads * (1 + HIST_MIN_SLOTS) + HIST_MIN_SLOTS;
  const size_t hist_bytes = slots * RADIX_MAX * sizeof(size_t);

  /* core has checked that n * ks and n * vs fit; their sum with the histograms may not */
  const bool counting = key_t == PP_U8 && !values;
  const size_t kneed = counting ? 0 : n * ks;
  size_t kb = PP_CPU_ALIGN64(kneed), vb = PP_CPU_ALIGN64(n * vs), total = hist_bytes;
  if (kb < kneed || vb < n * vs || kb > SIZE_MAX - total || vb > SIZE_MAX - total - kb)
    return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY,
                   "pp_sort: scratch for %zu elements does not fit in size_t", n);
  total += kb + vb;
  void *scratch = NULL;
  if (ctx->ops->temp_alloc(ctx, &scratch, total) != PP_OK)
    return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "pp_sort: cannot allocate %zu bytes of scratch",
                   total);

  unsigned char *base = scratch;
  if (counting) {
    count_sort_u8(keys, n, desc, (size_t *)base, threads);
  } else {
    sort_job job = {keys, values, base + hist_bytes, values ? base + hist_bytes + kb : NULL,
                    (size_t *)base, n, threads, desc};
    sort_table[key_t][vs == 0 ? 0 : vs == 4 ? 1 : 2](&job);
  }
  ctx->ops->temp_free(ctx, scratch);
  return PP_OK;
}

pp_status pp_cpu_merge(pp_context *ctx, pp_dtype key_t, const void *a, size_t na,
                       const void *b, size_t nb, void *out, pp_order order) {
  (void)ctx;
  if (na + nb == 0) return PP_OK;
  merge_table[key_t][0](a, NULL, na, b, NULL, nb, out, NULL, order == PP_DESCENDING);
  return PP_OK;
}

pp_status pp_cpu_merge_pairs(pp_context *ctx, pp_dtype key_t, const void *ka, const void *va,
                             size_t na, const void *kb, const void *vb, size_t nb, void *kout,
                             void *vout, size_t value_size, pp_order order) {
  (void)ctx;
  if (na + nb == 0) return PP_OK;
  merge_table[key_t][value_size == 4 ? 1 : 2](ka, va, na, kb, vb, nb, kout, vout,
                                              order == PP_DESCENDING);
  return PP_OK;
}

/* values[i] = i as a value_size-byte unsigned integer (4 or 8), i < n. */
static void fill_positions(void *values, size_t value_size, size_t n) {
  const int threads = n >= PP_CPU_PARALLEL_MIN ? pp_cpu_threads() : 1;
  if (value_size == 4) {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (size_t i = 0; i < n; i++) pp_cpu_st_u32(values, i, (uint32_t)i);
  } else {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (size_t i = 0; i < n; i++) pp_cpu_st_u64(values, i, (uint64_t)i);
  }
}

/* Out of place: the keys (and the values, or the positions) go to the outputs, which are
 * then sorted in place by pp_cpu_sort; the first radix pass could read the inputs instead,
 * but a copy runs at memory speed beside a pass that scatters. */
pp_status pp_cpu_sort_copy(pp_context *ctx, pp_dtype key_t, const void *keys_in, void *keys_out,
                           const void *values_in, void *values_out, size_t value_size, size_t n,
                           pp_order order, pp_sort_algo algo) {
  if (n == 0) return PP_OK;
  pp_host_memcpy(keys_out, keys_in, n * pp_dtype_size(key_t));
  if (values_out && values_in)
    pp_host_memcpy(values_out, values_in, n * value_size);
  else if (values_out)
    fill_positions(values_out, value_size, n);
  return pp_cpu_sort(ctx, key_t, keys_out, values_out, values_out ? value_size : 0, n, order,
                     algo);
}
