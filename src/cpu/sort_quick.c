/*
 * sort_quick.c — pp_sort with PP_SORT_QUICK on the CPU: the stable quicksort of the CUDA
 * backend (sort_quick.cu), with OpenMP tasks, so that `algo` means the same on both.
 *
 * Order keys as in sort.c (cpu.h: pp_cpu_okey_*; descending is ascending on the
 * complemented key, which keeps ties as ties). Elements are only copied, never rebuilt.
 *
 * A segment [lo, hi) lies in one of two buffers: the caller's (0) or a scratch copy (1).
 * It is split around a pivot (the median of three medians of three keys spread over the
 * segment) by a stable three-way partition into the other buffer: counts of keys below and
 * equal to the pivot, then each key written to its part in input order. The run equal to
 * the pivot is final (copied to the caller's buffer if it landed in scratch); the parts
 * below and above recurse, as OpenMP tasks when they are large. Segments of at least
 * PAR_MIN keys are counted and scattered by several tasks over contiguous chunks, each
 * chunk's offsets the prefix of the chunks before it, so stability holds across chunks.
 * Segments of QK_CPU_SMALL keys or fewer are insertion-sorted into the caller's buffer; a
 * segment past the depth limit is merge-sorted (stable, O(n log n)), so no input makes the
 * sort quadratic.
 *
 * Element bits are read and written through memcpy: the arrays are the caller's floats or
 * integers, read here only as unsigned words of their width.
 */
#include "sort_serial.h"

#include <omp.h>

#define QK_CPU_SMALL 32         /* insertion sort at or below this many keys */
#define QK_CPU_TASK_MIN 8192    /* a part this large is sorted by its own task */
#define QK_CPU_PAR_MIN 262144   /* a segment this large is partitioned by several tasks */
#define QK_CPU_CHUNK 65536      /* keys per partition task */
#define QK_CPU_MAX_CHUNKS 256

typedef struct qk_job {
  void *k[2], *v[2]; /* buffer 0: the caller's arrays; 1: scratch (v NULL: keys only) */
  bool desc;
  int max_depth;
} qk_job;


static inline uint64_t qk_mix(uint64_t z) {
  z += UINT64_C(0x9E3779B97F4A7C15);
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* Copy [lo, hi) of keys (and values) from buffer 1 to buffer 0. */
static void qk_copy_back(const qk_job *job, size_t lo, size_t hi, size_t ks, size_t vs) {
  if (hi <= lo) return;
  memcpy((unsigned char *)job->k[0] + lo * ks, (const unsigned char *)job->k[1] + lo * ks, (hi - lo) * ks);
  if (job->v[0])
    memcpy((unsigned char *)job->v[0] + lo * vs, (const unsigned char *)job->v[1] + lo * vs, (hi - lo) * vs);
}

/* ---- one key type, one value width ---------------------------------------------------- *
 * W: the unsigned word of the key; KT its C type; OKEY its order key; VW/VT the value word
 * (u32 and HAS_V 0 for keys only, so every value line is dead code). */
#define PP_CPU_QUICK_VARIANT(NAME, W, KT, OKEY, SUF, VW, VT, HAS_V)                           \
  static inline KT qk_key_##NAME##_##SUF(const void *k, size_t i, KT flip) {                \
    return (KT)(OKEY(pp_cpu_ld_##W(k, i)) ^ flip);                                              \
  }                                                                                         \
                                                                                            \
  static inline KT qk_median3_##NAME##_##SUF(KT a, KT b, KT c) {                            \
    return a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));          \
  }                                                                                         \
                                                                                            \
  /* Counts of keys below / equal to the pivot in [a, b) of buffer src. */                  \
  static void qk_count_##NAME##_##SUF(const void *k, size_t a, size_t b, KT piv, KT flip,   \
                                      size_t *lt, size_t *eq) {                             \
    size_t l = 0, e = 0;                                                                    \
    for (size_t i = a; i < b; i++) {                                                        \
      const KT o = qk_key_##NAME##_##SUF(k, i, flip);                                       \
      l += o < piv;                                                                         \
      e += o == piv;                                                                        \
    }                                                                                       \
    *lt = l;                                                                                \
    *eq = e;                                                                                \
  }                                                                                         \
                                                                                            \
  /* Writes [a, b) of the source buffer to its parts, starting at the given positions. */   \
  static void qk_scatter_##NAME##_##SUF(const void *sk, const void *sv, void *dk, void *dv, \
                                        size_t a, size_t b, KT piv, KT flip, size_t at_lt,  \
                                        size_t at_eq, size_t at_gt) {                       \
    for (size_t i = a; i < b; i++) {                                                        \
      const KT x = pp_cpu_ld_##W(sk, i);                                                        \
      const KT o = (KT)(OKEY(x) ^ flip);                                                    \
      const size_t to = o < piv ? at_lt++ : o == piv ? at_eq++ : at_gt++;                   \
      pp_cpu_st_##W(dk, to, x);                                                                 \
      if (HAS_V) pp_cpu_st_##VW(dv, to, pp_cpu_ld_##VW(sv, i));                                     \
    }                                                                                       \
  }                                                                                         \
                                                                                            \
  /* Sorts [lo, hi), whose keys are in buffer b, into the caller's buffer. */               \
  static void qk_sort_##NAME##_##SUF(const qk_job *job, int b, size_t lo, size_t hi,        \
                                     int depth) {                                           \
    const KT flip = job->desc ? (KT)~(KT)0 : (KT)0;                                         \
    const size_t n = hi - lo;                                                               \
    if (n <= QK_CPU_SMALL || depth >= job->max_depth) {                                     \
      if (b) qk_copy_back(job, lo, hi, sizeof(KT), sizeof(VT));                             \
      if (n <= QK_CPU_SMALL)                                                                \
        ss_insertion_##NAME##_##SUF(job->k[0], job->v[0], lo, hi, flip);                    \
      else /* sort_serial.h's stable merge sort, ending in the caller's buffer */           \
        ss_sort_##NAME##_##SUF(job->k[0], job->v[0], job->k[1], job->v[1], lo, hi, 0, flip);  \
      return;                                                                               \
    }                                                                                       \
    const void *sk = job->k[b], *sv = job->v[b];                                            \
    void *dk = job->k[b ^ 1], *dv = job->v[b ^ 1];                                          \
    /* median of three medians of three, one key from each ninth at a random place in it */ \
    KT s[9];                                                                                \
    for (int i = 0; i < 9; i++) {                                                           \
      const size_t r = (size_t)(qk_mix((uint64_t)lo ^ ((uint64_t)n << 20) ^ (uint64_t)i) % n); \
      s[i] = qk_key_##NAME##_##SUF(sk, lo + ((size_t)i * (n / 9) + r / 9), flip);           \
    }                                                                                       \
    const KT piv = qk_median3_##NAME##_##SUF(qk_median3_##NAME##_##SUF(s[0], s[1], s[2]),   \
                                             qk_median3_##NAME##_##SUF(s[3], s[4], s[5]),   \
                                             qk_median3_##NAME##_##SUF(s[6], s[7], s[8]));  \
    size_t nlt = 0, neq = 0;                                                                \
    if (n >= QK_CPU_PAR_MIN) {                                                              \
      size_t chunks = (n + QK_CPU_CHUNK - 1) / QK_CPU_CHUNK;                                \
      if (chunks > QK_CPU_MAX_CHUNKS) chunks = QK_CPU_MAX_CHUNKS;                           \
      size_t clt[QK_CPU_MAX_CHUNKS], ceq[QK_CPU_MAX_CHUNKS];                                \
      _Pragma("omp taskloop grainsize(1) shared(clt, ceq)")                                 \
      for (size_t c = 0; c < chunks; c++)                                                   \
        qk_count_##NAME##_##SUF(sk, lo + pp_cpu_part_begin(n, c, chunks),                   \
                                lo + pp_cpu_part_begin(n, c + 1, chunks), piv, flip, &clt[c], \
                                &ceq[c]);                                                   \
      for (size_t c = 0; c < chunks; c++) {                                                 \
        nlt += clt[c];                                                                      \
        neq += ceq[c];                                                                      \
      }                                                                                     \
      /* each chunk's start in each part: the chunks before it, in order */                 \
      size_t blt = 0, beq = 0, bgt = 0;                                                     \
      size_t at_lt[QK_CPU_MAX_CHUNKS], at_eq[QK_CPU_MAX_CHUNKS], at_gt[QK_CPU_MAX_CHUNKS];  \
      for (size_t c = 0; c < chunks; c++) {                                                 \
        const size_t len = pp_cpu_part_begin(n, c + 1, chunks) - pp_cpu_part_begin(n, c, chunks); \
        at_lt[c] = lo + blt;                                                                \
        at_eq[c] = lo + nlt + beq;                                                          \
        at_gt[c] = lo + nlt + neq + bgt;                                                    \
        blt += clt[c];                                                                      \
        beq += ceq[c];                                                                      \
        bgt += len - clt[c] - ceq[c];                                                       \
      }                                                                                     \
      _Pragma("omp taskloop grainsize(1) shared(at_lt, at_eq, at_gt)")                      \
      for (size_t c = 0; c < chunks; c++)                                                   \
        qk_scatter_##NAME##_##SUF(sk, sv, dk, dv, lo + pp_cpu_part_begin(n, c, chunks),     \
                                  lo + pp_cpu_part_begin(n, c + 1, chunks), piv, flip,      \
                                  at_lt[c], at_eq[c], at_gt[c]);                            \
    } else {                                                                                \
      qk_count_##NAME##_##SUF(sk, lo, hi, piv, flip, &nlt, &neq);                           \
      qk_scatter_##NAME##_##SUF(sk, sv, dk, dv, lo, hi, piv, flip, lo, lo + nlt, lo + nlt + neq); \
    }                                                                                       \
    /* the run equal to the pivot is in its final place; in the caller's buffer at last */  \
    if (b == 0) qk_copy_back(job, lo + nlt, lo + nlt + neq, sizeof(KT), sizeof(VT));        \
    const size_t lo2 = lo + nlt + neq;                                                      \
    if (nlt >= QK_CPU_TASK_MIN) {                                                           \
      _Pragma("omp task")                                                                   \
      qk_sort_##NAME##_##SUF(job, b ^ 1, lo, lo + nlt, depth + 1);                          \
    } else if (nlt) {                                                                       \
      qk_sort_##NAME##_##SUF(job, b ^ 1, lo, lo + nlt, depth + 1);                          \
    }                                                                                       \
    if (hi > lo2) qk_sort_##NAME##_##SUF(job, b ^ 1, lo2, hi, depth + 1);                   \
  }                                                                                         \
                                                                                            \
  static void quick_##NAME##_##SUF(const qk_job *job, size_t n, int threads) {              \
    if (threads > 1) {                                                                      \
      _Pragma("omp parallel num_threads(threads)")                                          \
      _Pragma("omp single")                                                                 \
      qk_sort_##NAME##_##SUF(job, 0, 0, n, 0);                                              \
    } else {                                                                                \
      qk_sort_##NAME##_##SUF(job, 0, 0, n, 0);                                              \
    }                                                                                       \
  }

#define PP_CPU_QUICK_TYPE(NAME, W, KT, OKEY)                                                \
  PP_CPU_SORT_SERIALS(NAME, W, KT, OKEY)                                                    \
  PP_CPU_SORT_VALUES(PP_CPU_QUICK_VARIANT, NAME, W, KT, OKEY)

PP_CPU_SORT_KEY_TYPES(PP_CPU_QUICK_TYPE)

typedef void (*quick_fn)(const qk_job *job, size_t n, int threads);

/* [dtype][keys only, 4-byte values, 8-byte values], in pp_dtype order */
#define QUICK_ROW(NAME, W, KT, OKEY) {quick_##NAME##_k, quick_##NAME##_v4, quick_##NAME##_v8},
static const quick_fn quick_table[][3] = {PP_CPU_SORT_KEY_TYPES(QUICK_ROW)};

pp_status pp_cpu_sort_quick(pp_context *ctx, pp_dtype key_t, void *keys, void *values,
                            size_t value_size, size_t n, pp_order order) {
  const size_t ks = pp_dtype_size(key_t), vs = values ? value_size : 0;
  void *kbuf = NULL, *vbuf = NULL;
  const pp_status st = ss_scratch(ctx, n, ks, vs, &kbuf, &vbuf);
  if (st != PP_OK) return st;
  /* a depth that balanced splits never reach: 2 log2(n) + 8 */
  int lg = 0;
  while (lg < 64 && ((size_t)1 << lg) < n) lg++;
  qk_job job = {{keys, kbuf}, {values, vbuf}, order == PP_DESCENDING, 2 * lg + 8};
  const int threads = n >= PP_CPU_PARALLEL_MIN ? pp_cpu_threads() : 1;
  quick_table[key_t][vs == 0 ? 0 : vs == 4 ? 1 : 2](&job, n, threads);
  ctx->ops->temp_free(ctx, kbuf);
  return PP_OK;
}
