/* scan.c — pp_scan, pp_select, pp_select_flagged and pp_partition on the CPU (OpenMP).
 *
 * One pass over memory, cache-blocked and chained. The input is cut into chunks of
 * CHUNK_BYTES (a fraction of a core's L2), handed out in index order by an atomic counter
 * to whichever thread is free. A thread reduces (or counts) its chunk, which brings it into
 * its cache; then waits until the chunk before has published its carry (running total, or
 * output offset), publishes its own carry (the one before, merged with its chunk's total)
 * and only then scans (or compacts) the chunk, now read from cache. The wait is the short
 * time between the previous chunk's reduce and its publish, not its scan, so the threads
 * overlap: the chained scan of Yan, Long and Zhang ("StreamScan", PPoPP 2013) on CPU
 * threads. A thread whose predecessor stalls (descheduled on a busy machine) does the
 * predecessor's reduce itself instead of waiting (chain_enter). The carries always merge in
 * chunk order, so a float result does not depend on the thread count or the timing.
 *
 * The output goes through a small per-thread staging buffer and is written in whole
 * 64-byte lines with non-temporal stores when the output is far larger than the caches
 * (STREAM_MIN_BYTES): a plain store first reads the line it writes, a third memory stream
 * that a copy does not pay. Compaction (select) writes every element into the staging
 * buffer and advances the write index by the predicate, so it has no branch per element;
 * the buffer has room for the one slot past its end that this may write, and only
 * out[0, count) is ever written.
 *
 * pp_partition needs the total count before it can place the rejected elements, so it
 * counts all of its input once (a read-only pass) before the chained pass.
 *
 * Semantics (API.md):
 *  - inclusive out[i] is pp_reduce(in[0..i]); exclusive out[0] is pp_reduce's n == 0
 *    identity and out[i] the inclusive result at i - 1;
 *  - integer SUM wraps: it runs in the unsigned type of the same width;
 *  - f32 SUM runs in double (chunk totals, carries and running sums) and each output is
 *    rounded once, so the error stays near one f32 rounding for any n below ~2^29;
 *  - f64 SUM is compensated (Neumaier), which keeps the error near one rounding of the
 *    result where a plain running sum would grow with i;
 *  - float MIN/MAX order -0.0 below +0.0 and ignore NaN, as pp_reduce does;
 *  - select keeps x when the C comparison (x cmp value) holds: that is exactly "NaN
 *    compares false except under PP_NE" and -0.0 == +0.0.
 * Indices and counts are size_t throughout, so inputs beyond 2^32 elements work.
 */
#define _POSIX_C_SOURCE 200809L /* sched_yield */
#include "cpu.h"

#include <math.h>
#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <emmintrin.h>
#define SCAN_HAVE_STREAM 1
#else
#define SCAN_HAVE_STREAM 0
#endif

#define CHUNK_BYTES ((size_t)128 << 10)
#define STAGE_BYTES ((size_t)4096)
#define STREAM_MIN_BYTES ((size_t)32 << 20)

/* ---- the chain ------------------------------------------------------------------------ */

#define CARRY_MAX 16 /* bytes of the largest carry: a compensated sum, two counts */

typedef struct chain {
  _Alignas(64) atomic_size_t next; /* next chunk to hand out */
  _Alignas(64) atomic_size_t done; /* chunks whose inclusive carry is published */
  size_t n, chunk, chunks;         /* elements, elements per chunk, chunks */
  bool stream;                     /* write the output with non-temporal stores */
  /* carries: cs bytes each, the one before chunk 0 (zero), each chunk's inclusive one
   * (incl, written once, under state 1; state 2 once readable) */
  size_t cs;
  unsigned char zero[CARRY_MAX], one_incl[CARRY_MAX], *incl;
  atomic_uchar one_state, *state;
  /* a chunk's total (from memory) and acc = acc merged with a total */
  void (*total)(const void *arg, size_t lo, size_t hi, void *agg);
  void (*merge)(void *acc, const void *agg);
  const void *arg;
} chain;

/* The per-chunk carries come from the heap; without it, one chunk of all n elements. */
static void chain_init(chain *ch, size_t n, size_t chunk_elems, const void *out,
                       size_t out_bytes, size_t es, size_t cs, const void *zero) {
  atomic_init(&ch->next, 0);
  atomic_init(&ch->done, 0);
  ch->n = n;
  ch->chunk = chunk_elems;
  ch->chunks = (n + chunk_elems - 1) / chunk_elems;
  ch->stream = SCAN_HAVE_STREAM && out_bytes >= STREAM_MIN_BYTES && 64 % es == 0 &&
               (uintptr_t)out % es == 0;
  ch->cs = cs;
  memcpy(ch->zero, zero, cs);
  ch->incl = ch->chunks > 1 ? malloc(ch->chunks * (cs + 1)) : NULL;
  if (!ch->incl) {
    ch->chunk = n > 0 ? n : 1;
    ch->chunks = n > 0;
    ch->incl = ch->one_incl;
    ch->state = &ch->one_state;
  } else {
    ch->state = (atomic_uchar *)(ch->incl + ch->chunks * cs);
  }
  for (size_t c = 0; c < ch->chunks; c++) atomic_init(&ch->state[c], 0);
}

static void chain_free(chain *ch) {
  if (ch->incl != ch->one_incl) free(ch->incl);
}

/* Threads for the chained pass: one below PP_CPU_PARALLEL_MIN, never more than chunks. */
static int chain_threads(const chain *ch) {
  if (ch->n < PP_CPU_PARALLEL_MIN) return 1;
  const int t = pp_cpu_threads();
  return (size_t)t > ch->chunks ? (int)ch->chunks : t;
}

/* The next chunk's [lo, hi), or false when none is left. The passes that stream their
 * output take their next chunk before they write the current one's output: the atomic add
 * is a locked instruction, and on x86 a locked instruction is ordered after every earlier
 * store, non-temporal ones included, so it waits until the write-combining buffers holding
 * them are written out (Intel SDM vol. 3A, "Memory Ordering in P6 and More Recent Processor
 * Families" and "Buffering of Write Combining Memory Locations"). Taken after the output,
 * it held the thread for the drain of its last lines; taken before, they drain while the
 * thread reads its next chunk. */
static bool chain_take(chain *ch, size_t *c, size_t *lo, size_t *hi) {
  *c = atomic_fetch_add_explicit(&ch->next, 1, memory_order_relaxed);
  if (*c >= ch->chunks) return false;
  *lo = *c * ch->chunk;
  *hi = ch->n - *lo < ch->chunk ? ch->n : *lo + ch->chunk;
  return true;
}

/* Chunk c, whose total is agg_c, enters the chain: its start carry (the inclusive carry
 * of chunk c - 1) goes to start, and its own inclusive carry is published. The carries
 * are published in chunk order, each as merge(carry before, chunk total), so their values
 * do not depend on who publishes them. A thread whose predecessor has not published
 * within `patience` seconds (its holder may have lost its core to another process)
 * computes that chunk's total itself, from memory, and publishes for it: no thread ever
 * waits on one that is not running. This is the decoupled look-back of Merrill and
 * Garland ("Single-pass Parallel Prefix Scan with Decoupled Look-back", NVIDIA, 2016),
 * reduced to a chain that any thread may advance. */
static void chain_enter(chain *ch, size_t c, const void *agg_c, void *start, double patience) {
  unsigned char agg[CARRY_MAX], next[CARRY_MAX];
  const size_t cs = ch->cs;
  double since = -1.0;
  for (;;) {
    const size_t d = atomic_load_explicit(&ch->done, memory_order_acquire);
    if (d > c) break;
    if (d < c) {
      if (since < 0) since = omp_get_wtime();
      if (omp_get_wtime() - since < patience) continue;
      const size_t lo = d * ch->chunk, hi = ch->n - lo < ch->chunk ? ch->n : lo + ch->chunk;
      ch->total(ch->arg, lo, hi, agg);
    } else {
      memcpy(agg, agg_c, cs);
    }
    memcpy(next, d > 0 ? ch->incl + (d - 1) * cs : ch->zero, cs);
    ch->merge(next, agg);
    unsigned char open = 0;
    if (atomic_compare_exchange_strong(&ch->state[d], &open, 1)) {
      memcpy(ch->incl + d * cs, next, cs);
      atomic_store_explicit(&ch->state[d], 2, memory_order_release);
    } else {
      while (atomic_load_explicit(&ch->state[d], memory_order_acquire) != 2) sched_yield();
    }
    size_t expect = d;
    atomic_compare_exchange_strong(&ch->done, &expect, d + 1);
    since = -1.0;
  }
  memcpy(start, c > 0 ? ch->incl + (c - 1) * cs : ch->zero, cs);
}

/* How long a thread waits for its predecessor before doing its work: a few times what its
 * own chunk's total took. */
static double chain_patience(double t0) { return 4.0 * (omp_get_wtime() - t0) + 2e-6; }

/* ---- staged output ---------------------------------------------------------------------- */

/* Output bytes collected in buf and written to dst, in whole aligned 64-byte lines with
 * non-temporal stores when streaming; the few bytes before the first whole line and after
 * the last are plain stores. */
typedef struct stage {
  unsigned char *dst; /* where buf[0] goes */
  size_t held;        /* bytes in buf */
  bool stream;
  _Alignas(64) unsigned char buf[STAGE_BYTES + 256];
} stage;

static void stage_begin(stage *s, void *dst, bool stream) {
  s->dst = dst;
  s->held = 0;
  s->stream = stream;
}

/* Writes bytes of src to dst: with stream, dst's whole aligned 64-byte lines with
 * non-temporal stores and the bytes around them with plain ones. With partial (more bytes
 * will follow these), nothing after the last whole line is written, nor anything when no
 * whole line is there yet. Returns how many bytes it wrote, from the start. */
static size_t put_bytes(unsigned char *dst, const unsigned char *src, size_t bytes, bool stream,
                        bool partial) {
#if SCAN_HAVE_STREAM
  const size_t head = (64 - ((uintptr_t)dst & 63)) & 63;
  if (stream && bytes >= head + 64) {
    const size_t body = (bytes - head) & ~(size_t)63;
    memcpy(dst, src, head);
    for (size_t o = head; o < head + body; o += 16)
      _mm_stream_si128((__m128i *)(void *)(dst + o), _mm_loadu_si128((const __m128i *)(const void *)(src + o)));
    if (partial) return head + body;
    memcpy(dst + head + body, src + head + body, bytes - head - body);
    return bytes;
  }
#endif
  if (stream && partial) return 0;
  memcpy(dst, src, bytes);
  return bytes;
}

static void stage_flush(stage *s, bool last) {
  const size_t done = put_bytes(s->dst, s->buf, s->held, s->stream, !last);
  memmove(s->buf, s->buf + done, s->held - done);
  s->dst += done;
  s->held -= done;
}

/* Non-temporal stores are weakly ordered: each thread fences its own before the region
 * ends, so that the caller sees them. */
static void stage_fence(const chain *ch) {
#if SCAN_HAVE_STREAM
  if (ch->stream) _mm_sfence();
#else
  (void)ch;
#endif
}

/* ---- accumulators --------------------------------------------------------------------- */

#define ACC_ADD(a, x) ((a) + (x)) /* integer sums: a is unsigned, so this wraps */
#define ACC_MIN(a, x) ((x) < (a) ? (x) : (a))
#define ACC_MAX(a, x) ((x) > (a) ? (x) : (a))
#define ACC_WIDEN(a, x) ((a) + (double)(x))
#define ACC_SELF(a) (a)

/* acc is NaN until a number was seen, so an all-NaN prefix scans to NaN. */
#define PP_FLOAT_ORDER(NAME, T)                                                             \
  static inline T min_##NAME(T acc, T x) {                                                  \
    if (isnan(x)) return acc;                                                               \
    return isnan(acc) || x < acc || (x == acc && signbit(x)) ? x : acc;                     \
  }                                                                                         \
  static inline T max_##NAME(T acc, T x) {                                                  \
    if (isnan(x)) return acc;                                                               \
    return isnan(acc) || x > acc || (x == acc && !signbit(x)) ? x : acc;                    \
  }

PP_FLOAT_ORDER(f32, float)
PP_FLOAT_ORDER(f64, double)

/* Neumaier's compensated sum: c gathers what each addition rounds away, also when the
 * addend is larger than the running sum. */
typedef struct kahan {
  double s, c;
} kahan;
static const kahan kahan_zero = {0.0, 0.0};

static inline kahan kahan_add(kahan a, double x) {
  double t = a.s + x;
  a.c += fabs(a.s) >= fabs(x) ? (a.s - t) + x : (x - t) + a.s;
  a.s = t;
  return a;
}

/* Once s is infinite or NaN (an inf or NaN input, or overflow) it stays so and c holds
 * inf - inf garbage: s alone is the answer. */
static inline double kahan_value(kahan a) { return isfinite(a.s) ? a.s + a.c : a.s; }

static inline kahan kahan_merge(kahan a, kahan b) {
  return kahan_add(kahan_add(a, b.s), isfinite(b.s) ? b.c : 0.0);
}

/* ---- scan ----------------------------------------------------------------------------- */

/* One scan per (dtype, op): ACC is the running state, ZERO its start (the identity, or
 * NaN for float MIN/MAX), ADD folds in an element, MERGE folds in a chunk's total, TOTAL
 * computes a chunk's total, OUT turns the state into an element, EMPTY is the exclusive
 * scan's out[0]. Elements are loaded before their output is stored, so in == out works. */
#define PP_CPU_SCAN(NAME, T, ACC, ZERO, EMPTY, ADD, MERGE, TOTAL, TILE, DIRECT, OUT)        \
  static inline ACC fold_##NAME(const T *in, size_t lo, size_t hi) {                        \
    ACC a = ZERO;                                                                           \
    for (size_t i = lo; i < hi; i++) a = ADD(a, in[i]);                                     \
    return a;                                                                               \
  }                                                                                         \
  static inline ACC tile_##NAME(const T *in, T *o, size_t m, ACC acc, bool inclusive,      \
                                bool stream) {                                              \
    (void)stream;                                                                           \
    if (inclusive) {                                                                        \
      for (size_t i = 0; i < m; i++) {                                                      \
        acc = ADD(acc, in[i]);                                                              \
        o[i] = (T)OUT(acc);                                                                 \
      }                                                                                     \
    } else {                                                                                \
      for (size_t i = 0; i < m; i++) {                                                      \
        T x = in[i];                                                                        \
        o[i] = (T)OUT(acc);                                                                 \
        acc = ADD(acc, x);                                                                  \
      }                                                                                     \
    }                                                                                       \
    return acc;                                                                             \
  }                                                                                         \
  static void total_##NAME(const void *in, size_t lo, size_t hi, void *agg) {              \
    const ACC a = TOTAL((const T *)in, lo, hi);                                             \
    memcpy(agg, &a, sizeof a);                                                              \
  }                                                                                         \
  static void merge_##NAME(void *acc, const void *agg) {                                    \
    ACC a, b;                                                                               \
    memcpy(&a, acc, sizeof a);                                                              \
    memcpy(&b, agg, sizeof b);                                                              \
    a = MERGE(a, b);                                                                        \
    memcpy(acc, &a, sizeof a);                                                              \
  }                                                                                         \
  static void scan_##NAME(const void *in_, void *out_, size_t n, bool inclusive) {          \
    const T *in = in_;                                                                      \
    T *out = out_;                                                                          \
    const ACC zero = ZERO;                                                                  \
    chain ch;                                                                               \
    _Static_assert(sizeof(ACC) <= CARRY_MAX, "carry fits");                                 \
    chain_init(&ch, n, CHUNK_BYTES / sizeof(T), out, n * sizeof(T), sizeof(T), sizeof(ACC), \
               &zero);                                                                      \
    ch.total = total_##NAME;                                                                \
    ch.merge = merge_##NAME;                                                                \
    ch.arg = in;                                                                            \
    int threads = chain_threads(&ch);                                                       \
    _Pragma("omp parallel num_threads(threads) if (threads > 1)")                           \
    {                                                                                       \
      stage st;                                                                             \
      T *buf = (T *)(void *)st.buf;                                                         \
      size_t c, lo, hi, next[3];                                                            \
      for (bool more = chain_take(&ch, &c, &lo, &hi); more;                                 \
           c = next[0], lo = next[1], hi = next[2]) {                                       \
        const double t0 = omp_get_wtime();                                                  \
        const ACC total = TOTAL(in, lo, hi);                                                \
        ACC acc;                                                                            \
        chain_enter(&ch, c, &total, &acc, chain_patience(t0));                              \
        more = chain_take(&ch, &next[0], &next[1], &next[2]); /* before the output */       \
        if (DIRECT && ch.stream) { /* the tile streams its own whole lines */               \
          TILE(in + lo, out + lo, hi - lo, acc, inclusive, true);                           \
          continue;                                                                         \
        }                                                                                   \
        stage_begin(&st, out + lo, ch.stream);                                              \
        for (size_t t0 = lo; t0 < hi; t0 += STAGE_BYTES / sizeof(T)) {                      \
          const size_t t1 = hi - t0 < STAGE_BYTES / sizeof(T) ? hi : t0 + STAGE_BYTES / sizeof(T); \
          acc = TILE(in + t0, buf + st.held / sizeof(T), t1 - t0, acc, inclusive, false);   \
          st.held += (t1 - t0) * sizeof(T);                                                 \
          stage_flush(&st, false);                                                          \
        }                                                                                   \
        stage_flush(&st, true);                                                             \
      }                                                                                     \
      stage_fence(&ch);                                                                     \
    }                                                                                       \
    chain_free(&ch);                                                                        \
    if (!inclusive && n > 0) out[0] = (T)(EMPTY);                                           \
  }

/* Sums of integers and f32: independent lanes, so the chunk total vectorises (the lanes'
 * order is fixed, so the total is too). */
#define SUM_LANES 16
#define PP_CPU_LANE_SUM(NAME, T, ACC, ADD)                                                  \
  static inline ACC lanesum_##NAME(const T *x, size_t lo, size_t hi) {                      \
    ACC lane[SUM_LANES] = {0};                                                              \
    size_t i = lo;                                                                          \
    for (; i + SUM_LANES <= hi; i += SUM_LANES)                                             \
      for (int j = 0; j < SUM_LANES; j++) lane[j] = ADD(lane[j], x[i + j]);                 \
    ACC s = 0;                                                                              \
    for (; i < hi; i++) s = ADD(s, x[i]);                                                   \
    for (int j = 0; j < SUM_LANES; j++) s += lane[j];                                       \
    return s;                                                                               \
  }

/* Integer sums of 4- and 8-byte elements scan four (two) lanes per SSE2 register: the
 * in-register inclusive sum is two (one) shifted adds (the step-doubling scan of Hillis
 * and Steele, CACM 29(12), 1986, within one vector), plus the running carry broadcast to
 * every lane; the exclusive result is that minus the element, exact in wrapping
 * arithmetic. Elsewhere the scalar tile loop runs. */
#if SCAN_HAVE_STREAM
#define VEC_TILE(W, UT, LANES, ADDV, SUBV, SET1, LAST)                                      \
  static inline __m128i vprefix_##W(__m128i x) {                                            \
    x = ADDV(x, _mm_slli_si128(x, 16 / LANES));                                             \
    return LANES == 4 ? ADDV(x, _mm_slli_si128(x, 8)) : x;                                  \
  }                                                                                         \
  static inline void vstore_##W(UT *o, __m128i v, bool stream) {                            \
    if (stream)                                                                             \
      _mm_stream_si128((__m128i *)(void *)o, v);                                            \
    else                                                                                    \
      _mm_storeu_si128((__m128i *)(void *)o, v);                                            \
  }                                                                                         \
  static inline UT vtile_##W(const void *in_, void *o_, size_t m, UT acc, bool inclusive,   \
                             bool stream) {                                                 \
    const UT *in = in_;                                                                     \
    UT *o = o_;                                                                             \
    size_t i = 0;                                                                           \
    for (; i < m && stream && ((uintptr_t)(o + i) & 15) != 0; i++) {                        \
      const UT x = in[i];                                                                   \
      o[i] = inclusive ? (UT)(acc + x) : acc;                                               \
      acc = (UT)(acc + x);                                                                  \
    }                                                                                       \
    __m128i carry = SET1(acc);                                                              \
    /* two vectors a step: the carry's add-and-broadcast chain is paid once per two */      \
    for (; i + 2 * LANES <= m; i += 2 * LANES) {                                            \
      const __m128i x0 = _mm_loadu_si128((const __m128i *)(const void *)(in + i));          \
      const __m128i x1 = _mm_loadu_si128((const __m128i *)(const void *)(in + i + LANES));  \
      const __m128i p0 = vprefix_##W(x0);                                                   \
      const __m128i p1 = ADDV(vprefix_##W(x1), LAST(p0));                                   \
      const __m128i q0 = ADDV(p0, carry), q1 = ADDV(p1, carry);                             \
      vstore_##W(o + i, inclusive ? q0 : SUBV(q0, x0), stream);                             \
      vstore_##W(o + i + LANES, inclusive ? q1 : SUBV(q1, x1), stream);                     \
      carry = LAST(q1);                                                                     \
    }                                                                                       \
    acc = (UT)_mm_cvtsi128_si64(carry);                                                     \
    for (; i < m; i++) {                                                                    \
      const UT x = in[i];                                                                   \
      o[i] = inclusive ? (UT)(acc + x) : acc;                                               \
      acc = (UT)(acc + x);                                                                  \
    }                                                                                       \
    return acc;                                                                             \
  }
#define SET1_32(a) _mm_set1_epi32((int)(a))
#define SET1_64(a) _mm_set1_epi64x((long long)(a))
#define LAST_32(p) _mm_shuffle_epi32(p, 0xFF)
#define LAST_64(p) _mm_unpackhi_epi64(p, p)
VEC_TILE(32, uint32_t, 4, _mm_add_epi32, _mm_sub_epi32, SET1_32, LAST_32)
VEC_TILE(64, uint64_t, 2, _mm_add_epi64, _mm_sub_epi64, SET1_64, LAST_64)
#define SUM_TILE_u8 tile_u8_sum, false
#define SUM_TILE_i32 vtile_32, true
#define SUM_TILE_u32 vtile_32, true
#define SUM_TILE_i64 vtile_64, true
#define SUM_TILE_u64 vtile_64, true
#else
#define SUM_TILE_u8 tile_u8_sum, false
#define SUM_TILE_i32 tile_i32_sum, false
#define SUM_TILE_u32 tile_u32_sum, false
#define SUM_TILE_i64 tile_i64_sum, false
#define SUM_TILE_u64 tile_u64_sum, false
#endif

/* SUM_TILE_* stands for two arguments (TILE, DIRECT): expanded before PP_CPU_SCAN sees them */
#define PP_CPU_SCAN_X(...) PP_CPU_SCAN(__VA_ARGS__)
#define PP_CPU_SCAN_INT(NAME, T, UT, T_LOWEST, T_HIGHEST)                                   \
  PP_CPU_LANE_SUM(NAME, T, UT, ACC_ADD)                                                     \
  PP_CPU_SCAN_X(NAME##_sum, T, UT, 0, 0, ACC_ADD, ACC_ADD, lanesum_##NAME, SUM_TILE_##NAME, \
                ACC_SELF)                                                                   \
  PP_CPU_SCAN(NAME##_min, T, T, T_HIGHEST, T_HIGHEST, ACC_MIN, ACC_MIN, fold_##NAME##_min,  \
              tile_##NAME##_min, false, ACC_SELF)                                                  \
  PP_CPU_SCAN(NAME##_max, T, T, T_LOWEST, T_LOWEST, ACC_MAX, ACC_MAX, fold_##NAME##_max,    \
              tile_##NAME##_max, false, ACC_SELF)

PP_CPU_SCAN_INT(u8, uint8_t, uint8_t, 0, UINT8_MAX)
PP_CPU_SCAN_INT(i32, int32_t, uint32_t, INT32_MIN, INT32_MAX)
PP_CPU_SCAN_INT(u32, uint32_t, uint32_t, 0, UINT32_MAX)
PP_CPU_SCAN_INT(i64, int64_t, uint64_t, INT64_MIN, INT64_MAX)
PP_CPU_SCAN_INT(u64, uint64_t, uint64_t, 0, UINT64_MAX)

PP_CPU_LANE_SUM(f32, float, double, ACC_WIDEN)
PP_CPU_SCAN(f32_sum, float, double, 0.0, 0.0, ACC_WIDEN, ACC_ADD, lanesum_f32, tile_f32_sum, false,
            ACC_SELF)
PP_CPU_SCAN(f32_min, float, float, NAN, INFINITY, min_f32, min_f32, fold_f32_min, tile_f32_min, false,
            ACC_SELF)
PP_CPU_SCAN(f32_max, float, float, NAN, -INFINITY, max_f32, max_f32, fold_f32_max, tile_f32_max, false,
            ACC_SELF)
PP_CPU_SCAN(f64_sum, double, kahan, kahan_zero, 0.0, kahan_add, kahan_merge, fold_f64_sum,
            tile_f64_sum, false, kahan_value)
PP_CPU_SCAN(f64_min, double, double, NAN, INFINITY, min_f64, min_f64, fold_f64_min, tile_f64_min, false,
            ACC_SELF)
PP_CPU_SCAN(f64_max, double, double, NAN, -INFINITY, max_f64, max_f64, fold_f64_max, tile_f64_max, false,
            ACC_SELF)

typedef void (*scan_fn)(const void *in, void *out, size_t n, bool inclusive);

/* [dtype][op] */
#define SCAN_ROW(NAME) {scan_##NAME##_sum, scan_##NAME##_min, scan_##NAME##_max}

pp_status pp_cpu_scan(pp_context *ctx, pp_op op, pp_dtype t, const void *in, void *out,
                      size_t n, bool inclusive) {
  static const scan_fn table[PP_CPU_DTYPES][3] = {
      [PP_U8] = SCAN_ROW(u8),   [PP_I32] = SCAN_ROW(i32), [PP_U32] = SCAN_ROW(u32),
      [PP_I64] = SCAN_ROW(i64), [PP_U64] = SCAN_ROW(u64), [PP_F32] = SCAN_ROW(f32),
      [PP_F64] = SCAN_ROW(f64)};
  if (!pp_cpu_dtype_ok(t)) return pp_fail(ctx, PP_ERR_UNSUPPORTED, "pp_scan: dtype (%d)", (int)t);
  table[t][op == PP_SUM ? 0 : op == PP_MIN ? 1 : 2](in, out, n, inclusive);
  return PP_OK;
}

/* ---- select, partition and select_flagged ---------------------------------------------- */

/* The per-type work of a compaction, behind pointers so that one chained loop serves every
 * type and comparison: count(lo, hi) is how many of [lo, hi) are kept; keep(lo, hi, yes)
 * stores the kept ones to yes and returns how many; split(lo, hi, yes, no) also stores the
 * others to no. Both store every element and advance by the predicate (no branch), so yes
 * and no need one slot past what they receive. quad, where there is one, is keep (no ==
 * NULL) or split read as QUAD streams at once (see quad_len): stream q's kept elements go
 * to yes + q * stride (the others to no + q * stride), kept[q] receives their count. */
typedef struct compactor compactor;
#define QUAD 4
typedef struct compact_fns {
  size_t (*count)(const compactor *c, size_t lo, size_t hi);
  size_t (*keep)(const compactor *c, size_t lo, size_t hi, unsigned char *yes);
  size_t (*split)(const compactor *c, size_t lo, size_t hi, unsigned char *yes,
                  unsigned char *no);
  void (*quad)(const compactor *c, size_t lo, size_t hi, unsigned char *yes, unsigned char *no,
               size_t stride, size_t kept[QUAD]);
} compact_fns;

/* A chunk of n elements of es bytes read as QUAD streams: streams 0 .. QUAD - 2 take
 * quad_len(n, es) elements each, a whole number of 64-byte lines, and the last one the
 * rest. One core's hardware prefetchers keep more lines in flight for several sequential
 * streams than for one, as in reduce.c's RD_STREAMS (one stream per core left about a
 * quarter of the two cores' read bandwidth unused). */
static inline size_t quad_len(size_t n, size_t es) { return n * es / (QUAD * 64) * 64 / es; }
struct compactor {
  const void *in, *flags;
  unsigned char value[16]; /* the compared value (select, partition) */
  size_t es;
  compact_fns f;
  _Alignas(16) unsigned char shuffle[16][16]; /* the vector keep's byte shuffles, by mask */
};

/* Elements of es bytes, copied as one load and one store when es is a constant. */
#define COMPACT_FNS(NAME, T, KEEP)                                                          \
  static size_t count_##NAME(const compactor *c, size_t lo, size_t hi) {                    \
    const T *in = c->in;                                                                    \
    T v;                                                                                    \
    memcpy(&v, c->value, sizeof v);                                                         \
    (void)v, (void)in;                                                                      \
    uint32_t kept = 0; /* lanes as wide as the elements vectorise best; hi - lo < 2^32 */  \
    for (size_t i = lo; i < hi; i++) kept += KEEP;                                          \
    return kept;                                                                            \
  }                                                                                         \
  static size_t keep_##NAME(const compactor *c, size_t lo, size_t hi, unsigned char *yes) { \
    const T *in = c->in;                                                                    \
    T v;                                                                                    \
    memcpy(&v, c->value, sizeof v);                                                         \
    (void)v;                                                                                \
    size_t w = 0;                                                                           \
    for (size_t i = lo; i < hi; i++) {                                                      \
      memcpy(yes + w * sizeof(T), &in[i], sizeof(T));                                       \
      w += KEEP;                                                                            \
    }                                                                                       \
    return w;                                                                               \
  }                                                                                         \
  static size_t split_##NAME(const compactor *c, size_t lo, size_t hi, unsigned char *yes,  \
                             unsigned char *no) {                                           \
    const T *in = c->in;                                                                    \
    T v;                                                                                    \
    memcpy(&v, c->value, sizeof v);                                                         \
    (void)v;                                                                                \
    size_t w = 0, r = 0;                                                                    \
    for (size_t i = lo; i < hi; i++) {                                                      \
      const size_t k = KEEP;                                                                \
      memcpy(yes + w * sizeof(T), &in[i], sizeof(T));                                       \
      memcpy(no + r * sizeof(T), &in[i], sizeof(T));                                        \
      w += k;                                                                               \
      r += 1 - k;                                                                           \
    }                                                                                       \
    return w;                                                                               \
  }

/* One set per (type, comparison); KEEP reads in[i] and v. */
#define COMPACT_CMPS(NAME, T)                                                               \
  COMPACT_FNS(NAME##_gt, T, (in[i] > v))                                                    \
  COMPACT_FNS(NAME##_ge, T, (in[i] >= v))                                                   \
  COMPACT_FNS(NAME##_lt, T, (in[i] < v))                                                    \
  COMPACT_FNS(NAME##_le, T, (in[i] <= v))                                                   \
  COMPACT_FNS(NAME##_eq, T, (in[i] == v))                                                   \
  COMPACT_FNS(NAME##_ne, T, (in[i] != v))

COMPACT_CMPS(u8, uint8_t)
COMPACT_CMPS(i32, int32_t)
COMPACT_CMPS(u32, uint32_t)
COMPACT_CMPS(i64, int64_t)
COMPACT_CMPS(u64, uint64_t)
COMPACT_CMPS(f32, float)
COMPACT_CMPS(f64, double)

/* select_flagged: records of the common sizes, kept where flags[i] != 0 */
typedef struct rec16 {
  unsigned char b[16];
} rec16;
#define FLAG_KEEP (((const uint8_t *)c->flags)[i] != 0)
COMPACT_FNS(flag1, uint8_t, FLAG_KEEP)
COMPACT_FNS(flag2, uint16_t, FLAG_KEEP)
COMPACT_FNS(flag4, uint32_t, FLAG_KEEP)
COMPACT_FNS(flag8, uint64_t, FLAG_KEEP)
COMPACT_FNS(flag16, rec16, FLAG_KEEP)

#define COMPACTOR(NAME) count_##NAME, keep_##NAME, split_##NAME, NULL

/* Vector keep for 4-byte elements (SSSE3, chosen at run time): four elements a step; the
 * comparison gives a 4-bit mask, a byte shuffle picked by the mask moves the kept lanes to
 * the front, one unaligned 16-byte store writes them (the lanes past the kept ones land in
 * the slack the staging buffer keeps), and the write index advances by the mask's bit
 * count. No branch depends on the data. */
#if SCAN_HAVE_STREAM && defined(__GNUC__)
#define SCAN_HAVE_VKEEP 1
#include <immintrin.h> /* the AVX2 keep: compiled for its own target, chosen at run time */
#include <tmmintrin.h>

/* shuffle[m]: the bytes of the lanes set in m, in order */
static void vkeep_shuffles(unsigned char shuffle[16][16]) {
  for (int m = 0; m < 16; m++) {
    int b = 0;
    for (int lane = 0; lane < 4; lane++)
      for (int j = 0; j < 4 && (m >> lane & 1); j++) shuffle[m][b++] = (unsigned char)(4 * lane + j);
    while (b < 16) shuffle[m][b++] = 0x80;
  }
}

/* the compared value of a 4- or 8-byte compaction */
static inline uint32_t value32(const compactor *c) {
  uint32_t v;
  memcpy(&v, c->value, sizeof v);
  return v;
}
static inline uint64_t value64(const compactor *c) {
  uint64_t v;
  memcpy(&v, c->value, sizeof v);
  return v;
}

#define VKEEP(NAME, MASK, FLIP)                                                             \
  __attribute__((target("ssse3"))) static size_t vkeep_##NAME(                              \
      const compactor *c, size_t lo, size_t hi, unsigned char *yes) {                       \
    const uint32_t *in = c->in;                                                             \
    const __m128i v = FLIP(_mm_set1_epi32((int)value32(c)));                                \
    const int bits[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};                 \
    size_t w = 0, i = lo;                                                                   \
    for (; i + 4 <= hi; i += 4) {                                                           \
      const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(in + i));           \
      const int m = MASK(FLIP(x), v);                                                       \
      const __m128i sh = _mm_load_si128((const __m128i *)(const void *)c->shuffle[m]);      \
      _mm_storeu_si128((__m128i *)(void *)(yes + 4 * w), _mm_shuffle_epi8(x, sh));          \
      w += (size_t)bits[m];                                                                 \
    }                                                                                       \
    return w + keep_##NAME(c, i, hi, yes + 4 * w);                                          \
  }

/* 4-bit masks of (x cmp v): floats compare as C does (NEQ is the unordered one, true for
 * NaN); signed integers by cmpgt/cmpeq and their complements; unsigned ones the same
 * after flipping both sign bits. */
#define MF(x) _mm_movemask_ps(_mm_castsi128_ps(x))
#define FCMP(OP, x, v) _mm_movemask_ps(OP(_mm_castsi128_ps(x), _mm_castsi128_ps(v)))
#define F_GT(x, v) FCMP(_mm_cmpgt_ps, x, v)
#define F_GE(x, v) FCMP(_mm_cmpge_ps, x, v)
#define F_LT(x, v) FCMP(_mm_cmplt_ps, x, v)
#define F_LE(x, v) FCMP(_mm_cmple_ps, x, v)
#define F_EQ(x, v) FCMP(_mm_cmpeq_ps, x, v)
#define F_NE(x, v) FCMP(_mm_cmpneq_ps, x, v)
#define I_GT(x, v) MF(_mm_cmpgt_epi32(x, v))
#define I_LT(x, v) MF(_mm_cmpgt_epi32(v, x))
#define I_GE(x, v) (15 & ~I_LT(x, v))
#define I_LE(x, v) (15 & ~I_GT(x, v))
#define I_EQ(x, v) MF(_mm_cmpeq_epi32(x, v))
#define I_NE(x, v) (15 & ~I_EQ(x, v))
#define UFLIP(x) _mm_xor_si128(x, _mm_set1_epi32(INT32_MIN))
#define NOFLIP(x) (x)

/* the six comparisons of one type, for the keep KEEP with masks P_* after FLIP */
#define VKEEP_CMPS(KEEP, NAME, P, FLIP)                                                     \
  KEEP(NAME##_gt, P##_GT, FLIP) KEEP(NAME##_ge, P##_GE, FLIP) KEEP(NAME##_lt, P##_LT, FLIP) \
  KEEP(NAME##_le, P##_LE, FLIP) KEEP(NAME##_eq, P##_EQ, FLIP) KEEP(NAME##_ne, P##_NE, FLIP)
VKEEP_CMPS(VKEEP, f32, F, NOFLIP)
VKEEP_CMPS(VKEEP, i32, I, NOFLIP)
VKEEP_CMPS(VKEEP, u32, I, UFLIP)

/* The AVX2 keep: eight elements a step, the same scheme with a lane permutation
 * (vpermd) for the byte shuffle: the 8-bit mask picks eight 3-bit lane indices from
 * keep_lanes (packed one per byte, widened to 32 bits by vpmovzxbd), and popcnt counts
 * the kept lanes. Two steps an iteration, so the loop's own instructions are paid once per
 * sixteen elements; per element it issues about half the instructions of the SSSE3 keep,
 * which on two cores had made the compaction compute-bound. */
#define KL_POP(m)                                                                           \
  (((m) & 1) + ((m) >> 1 & 1) + ((m) >> 2 & 1) + ((m) >> 3 & 1) + ((m) >> 4 & 1) +          \
   ((m) >> 5 & 1) + ((m) >> 6 & 1) + ((m) >> 7 & 1))
/* lane l of mask m goes to position popcount(m below l), as byte l there */
#define KL_LANE(m, l) ((m) >> (l) & 1 ? (uint64_t)(l) << (8 * KL_POP((m) & ((1u << (l)) - 1))) : 0)
#define KL(m)                                                                               \
  (KL_LANE(m, 0) | KL_LANE(m, 1) | KL_LANE(m, 2) | KL_LANE(m, 3) | KL_LANE(m, 4) |          \
   KL_LANE(m, 5) | KL_LANE(m, 6) | KL_LANE(m, 7))
#define KL4(m) KL(m), KL(m + 1), KL(m + 2), KL(m + 3)
#define KL16(m) KL4(m), KL4(m + 4), KL4(m + 8), KL4(m + 12)
#define KL64(m) KL16(m), KL16(m + 16), KL16(m + 32), KL16(m + 48)
static const uint64_t keep_lanes[256] = {KL64(0u), KL64(64u), KL64(128u), KL64(192u)};

/* Kept lanes of x (mask m) to dst + w, a whole 32-byte store (the lanes past the kept ones
 * land in the buffer's slack); returns w advanced by the kept bytes. */
__attribute__((target("avx2,popcnt"))) static inline size_t vput8(unsigned char *dst, size_t w,
                                                                  __m256i x, unsigned m) {
  const __m256i l = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const void *)&keep_lanes[m]));
  _mm256_storeu_si256((__m256i *)(void *)(dst + w), _mm256_permutevar8x32_epi32(x, l));
  return w + 4 * (size_t)__builtin_popcount(m);
}

/* W-bit elements (32 or 64), walked in bytes: an 8-byte element is a pair of 32-bit lanes
 * whose mask bits are both set or both clear (movmskps of a 64-bit compare), so the same
 * lane table moves it as one. MASK_AT(A, B, W, x, e) is the 8-bit mask of the 32 bytes x,
 * whose first element is e, after SETUP. The body reads ns streams (1, or QUAD as
 * quad_len cuts them), 64 bytes of each a step; stream s stores to yes + s * stride (and
 * no + s * stride) and its count goes to kept[s]; the scalar keep_NAME / split_NAME /
 * count_NAME take the last stream's last few. vcount8_NAME counts the kept elements (a
 * partition's first pass); vkeep8_NAME stores them to yes; vsplit8_NAME also the others,
 * by the complement mask, to no (a partition's split, the same loop); vquad8_NAME is
 * either, as QUAD streams. */
#define VSPLIT8(NAME, W, SETUP, MASK_AT, A, B)                                              \
  __attribute__((target("avx2,popcnt"), always_inline)) static inline size_t                \
      vbody8_##NAME(const compactor *c, size_t lo, size_t hi, unsigned char *yes,           \
                    unsigned char *no, const bool store, const bool split, const int ns,    \
                    size_t stride, size_t *kept) {                                          \
    SETUP;                                                                                  \
    enum { E = W / 8 };                                                                     \
    const unsigned char *in = (const unsigned char *)c->in + lo * E;                        \
    const size_t len = ns == 1 ? hi - lo : quad_len(hi - lo, E); /* elements a stream */    \
    const size_t body = len * E & ~(size_t)63; /* bytes a stream in whole steps */          \
    size_t w[QUAD] = {0}, r[QUAD] = {0}; /* bytes kept, bytes rejected, per stream */       \
    for (size_t i = 0; i < body; i += 64)                                                   \
      for (int s = 0; s < ns; s++) {                                                        \
        const size_t o = (size_t)s * len * E + i;                                           \
        const __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)(in + o));     \
        const __m256i x1 = _mm256_loadu_si256((const __m256i *)(const void *)(in + o + 32)); \
        const unsigned m0 = (unsigned)MASK_AT(A, B, W, x0, lo + o / E);                     \
        const unsigned m1 = (unsigned)MASK_AT(A, B, W, x1, lo + (o + 32) / E);              \
        unsigned char *y = store ? yes + (size_t)s * stride : NULL;                         \
        unsigned char *f = split ? no + (size_t)s * stride : NULL;                          \
        if (!store) w[s] += 4 * (size_t)(__builtin_popcount(m0) + __builtin_popcount(m1));  \
        if (store) w[s] = vput8(y, vput8(y, w[s], x0, m0), x1, m1);                         \
        if (split) r[s] = vput8(f, vput8(f, r[s], x0, 255 & ~m0), x1, 255 & ~m1);           \
      }                                                                                     \
    const int t = ns - 1; /* the last stream, and its last few elements from e on */        \
    const size_t e = lo + (size_t)t * len + body / E;                                       \
    unsigned char *yt = store ? yes + (size_t)t * stride + w[t] : NULL;                     \
    unsigned char *nt = split ? no + (size_t)t * stride + r[t] : NULL;                      \
    const size_t rest = split   ? split_##NAME(c, e, hi, yt, nt)                            \
                        : store ? keep_##NAME(c, e, hi, yt)                                 \
                                : count_##NAME(c, e, hi);                                   \
    size_t total = 0;                                                                       \
    for (int s = 0; s < ns; s++) {                                                          \
      const size_t k = w[s] / E + (s == t ? rest : 0);                                      \
      if (kept) kept[s] = k;                                                                \
      total += k;                                                                           \
    }                                                                                       \
    return total;                                                                           \
  }                                                                                         \
  __attribute__((target("avx2,popcnt"))) static size_t vcount8_##NAME(const compactor *c,   \
                                                                      size_t lo, size_t hi) { \
    return vbody8_##NAME(c, lo, hi, NULL, NULL, false, false, QUAD, 0, NULL);               \
  }                                                                                         \
  __attribute__((target("avx2,popcnt"))) static size_t vkeep8_##NAME(                       \
      const compactor *c, size_t lo, size_t hi, unsigned char *yes) {                       \
    return vbody8_##NAME(c, lo, hi, yes, NULL, true, false, 1, 0, NULL);                    \
  }                                                                                         \
  __attribute__((target("avx2,popcnt"))) static size_t vsplit8_##NAME(                      \
      const compactor *c, size_t lo, size_t hi, unsigned char *yes, unsigned char *no) {    \
    return vbody8_##NAME(c, lo, hi, yes, no, true, true, 1, 0, NULL);                       \
  }                                                                                         \
  __attribute__((target("avx2,popcnt"))) static void vquad8_##NAME(                         \
      const compactor *c, size_t lo, size_t hi, unsigned char *yes, unsigned char *no,      \
      size_t stride, size_t kept[QUAD]) {                                                   \
    if (no)                                                                                 \
      vbody8_##NAME(c, lo, hi, yes, no, true, true, QUAD, stride, kept);                    \
    else                                                                                    \
      vbody8_##NAME(c, lo, hi, yes, NULL, true, false, QUAD, stride, kept);                 \
  }
/* x cmp v, the compared value broadcast */
#define CMP_SETUP(W, FLIP) const __m256i v = FLIP(W, VALUE8_##W(c))
#define CMP_AT(MASK, FLIP, W, x, e) MASK(W, FLIP(W, x), v)
#define VKEEP8(NAME, MASK, FLIP, W) VSPLIT8(NAME, W, CMP_SETUP(W, FLIP), CMP_AT, MASK, FLIP)
#define VKEEP8_32(NAME, MASK, FLIP) VKEEP8(NAME, MASK, FLIP, 32)
#define VKEEP8_64(NAME, MASK, FLIP) VKEEP8(NAME, MASK, FLIP, 64)
#define VALUE8_32(c) _mm256_set1_epi32((int)value32(c))
#define VALUE8_64(c) _mm256_set1_epi64x((long long)value64(c))

/* 8-bit masks of (x cmp v) for W-bit lanes, as the 4-bit ones above: floats by the
 * ordered predicates (NEQ unordered), integers by cmpgt/cmpeq, unsigned ones after
 * flipping the sign bits */
#define MF8(x) _mm256_movemask_ps(_mm256_castsi256_ps(x))
#define FCMP8_32(P, x, v) _mm256_movemask_ps(_mm256_cmp_ps(_mm256_castsi256_ps(x), _mm256_castsi256_ps(v), P))
#define FCMP8_64(P, x, v)                                                                   \
  _mm256_movemask_ps(_mm256_castpd_ps(_mm256_cmp_pd(_mm256_castsi256_pd(x), _mm256_castsi256_pd(v), P)))
#define F8_GT(W, x, v) FCMP8_##W(_CMP_GT_OQ, x, v)
#define F8_GE(W, x, v) FCMP8_##W(_CMP_GE_OQ, x, v)
#define F8_LT(W, x, v) FCMP8_##W(_CMP_LT_OQ, x, v)
#define F8_LE(W, x, v) FCMP8_##W(_CMP_LE_OQ, x, v)
#define F8_EQ(W, x, v) FCMP8_##W(_CMP_EQ_OQ, x, v)
#define F8_NE(W, x, v) FCMP8_##W(_CMP_NEQ_UQ, x, v)
#define I8_GT(W, x, v) MF8(_mm256_cmpgt_epi##W(x, v))
#define I8_LT(W, x, v) MF8(_mm256_cmpgt_epi##W(v, x))
#define I8_GE(W, x, v) (255 & ~I8_LT(W, x, v))
#define I8_LE(W, x, v) (255 & ~I8_GT(W, x, v))
#define I8_EQ(W, x, v) MF8(_mm256_cmpeq_epi##W(x, v))
#define I8_NE(W, x, v) (255 & ~I8_EQ(W, x, v))
#define NOFLIP8(W, x) (x)
#define UFLIP8(W, x) _mm256_xor_si256(x, _mm256_slli_epi##W(_mm256_set1_epi32(-1), W - 1))

VKEEP_CMPS(VKEEP8_32, f32, F8, NOFLIP8)
VKEEP_CMPS(VKEEP8_32, i32, I8, NOFLIP8)
VKEEP_CMPS(VKEEP8_32, u32, I8, UFLIP8)
VKEEP_CMPS(VKEEP8_64, f64, F8, NOFLIP8)
VKEEP_CMPS(VKEEP8_64, i64, I8, NOFLIP8)
VKEEP_CMPS(VKEEP8_64, u64, I8, UFLIP8)

/* select_flagged's records of 4 and 8 bytes: kept where their flags, widened to the
 * records' lanes, are nonzero */
static inline int flags4(const uint8_t *p) {
  uint32_t f;
  memcpy(&f, p, sizeof f);
  return (int)f;
}
#define FLAGS8_32(p) _mm256_cvtepu8_epi32(_mm_loadl_epi64((const void *)(p)))
#define FLAGS8_64(p) _mm256_cvtepu8_epi64(_mm_cvtsi32_si128(flags4(p)))
#define FLAG_SETUP                                                                          \
  const uint8_t *flags = c->flags;                                                          \
  const __m256i v = _mm256_setzero_si256()
#define FLAG_AT(A, B, W, x, e) I8_NE(W, FLAGS8_##W(flags + (e)), v)
VSPLIT8(flag4, 32, FLAG_SETUP, FLAG_AT, _, _)
VSPLIT8(flag8, 64, FLAG_SETUP, FLAG_AT, _, _)

#define VKEEP_ROW(PRE, NAME)                                                                \
  {[PP_GT] = PRE##_##NAME##_gt, [PP_GE] = PRE##_##NAME##_ge, [PP_LT] = PRE##_##NAME##_lt,   \
   [PP_LE] = PRE##_##NAME##_le, [PP_EQ] = PRE##_##NAME##_eq, [PP_NE] = PRE##_##NAME##_ne}
#define VKEEP_TABLE(PRE)                                                                    \
  {[PP_I32] = VKEEP_ROW(PRE, i32), [PP_U32] = VKEEP_ROW(PRE, u32), [PP_F32] = VKEEP_ROW(PRE, f32)}
#define VKEEP_TABLE8(PRE)                                                                   \
  {[PP_I32] = VKEEP_ROW(PRE, i32), [PP_U32] = VKEEP_ROW(PRE, u32), [PP_F32] = VKEEP_ROW(PRE, f32), \
   [PP_I64] = VKEEP_ROW(PRE, i64), [PP_U64] = VKEEP_ROW(PRE, u64), [PP_F64] = VKEEP_ROW(PRE, f64)}

typedef size_t (*count_fn)(const compactor *, size_t, size_t);
typedef size_t (*keep_fn)(const compactor *, size_t, size_t, unsigned char *);
typedef size_t (*split_fn)(const compactor *, size_t, size_t, unsigned char *, unsigned char *);
typedef void (*quad_fn)(const compactor *, size_t, size_t, unsigned char *, unsigned char *, size_t,
                        size_t *);

static bool have_avx2(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
}

/* The vector keep, and with AVX2 the vector count, split and quad, for dtype t and comparison cmp in
 * cp->f, where there are: types without them keep the scalar ones. */
static void vector_fns(pp_dtype t, pp_cmp cmp, compactor *cp) {
  static const count_fn avx2_count[PP_CPU_DTYPES][6] = VKEEP_TABLE8(vcount8);
  static const keep_fn avx2[PP_CPU_DTYPES][6] = VKEEP_TABLE8(vkeep8);
  static const split_fn avx2_split[PP_CPU_DTYPES][6] = VKEEP_TABLE8(vsplit8);
  static const quad_fn avx2_quad[PP_CPU_DTYPES][6] = VKEEP_TABLE8(vquad8);
  static const keep_fn ssse3[PP_CPU_DTYPES][6] = VKEEP_TABLE(vkeep);
  if (have_avx2()) {
    if (avx2[t][cmp]) {
      cp->f.count = avx2_count[t][cmp];
      cp->f.keep = avx2[t][cmp];
      cp->f.split = avx2_split[t][cmp];
      cp->f.quad = avx2_quad[t][cmp];
    }
  } else if (__builtin_cpu_supports("ssse3") && ssse3[t][cmp]) {
    vkeep_shuffles(cp->shuffle);
    cp->f.keep = ssse3[t][cmp];
  }
}
#else
#define SCAN_HAVE_VKEEP 0
#endif

/* Any other record size: plain copies with a branch, straight to the output. */
static size_t count_flag_any(const compactor *c, size_t lo, size_t hi) {
  const uint8_t *f = c->flags;
  size_t kept = 0;
  for (size_t i = lo; i < hi; i++) kept += f[i] != 0;
  return kept;
}

/* Chunks of the chained pass for records of es bytes (flags included for select_flagged). */
static size_t compact_chunk_elems(size_t es, bool flagged) {
  const size_t e = CHUNK_BYTES / (es + flagged);
  return e > 0 ? e : 1;
}

/* A chunk's (kept, rejected) counts, and their running sum: the compaction's carries. */
static void compact_total(const void *arg, size_t lo, size_t hi, void *agg) {
  const compactor *cp = arg;
  const size_t kept = cp->f.count(cp, lo, hi), counts[2] = {kept, (hi - lo) - kept};
  memcpy(agg, counts, sizeof counts);
}

static void compact_merge(void *acc, const void *agg) {
  size_t a[2], b[2];
  memcpy(a, acc, sizeof a);
  memcpy(b, agg, sizeof b);
  a[0] += b[0];
  a[1] += b[1];
  memcpy(acc, a, sizeof a);
}

/* The chained compaction: kept elements to out[0, count), and, when base_no is not
 * SIZE_MAX (a partition), the others to out[base_no, n). Staged stores need es to divide
 * 64 (and out aligned to it); other sizes copy straight to the output. */
static void compact_chain_init(chain *ch, const compactor *cp, size_t n, const void *out,
                               size_t out_bytes) {
  const size_t zero[2] = {0, 0};
  chain_init(ch, n, compact_chunk_elems(cp->es, cp->flags != NULL), out, out_bytes, cp->es,
             sizeof zero, zero);
  ch->stream = ch->stream && cp->f.keep != NULL;
  ch->total = compact_total;
  ch->merge = compact_merge;
  ch->arg = cp;
}

/* The kept count, from the last chunk's carry: every carry is published by then. */
static size_t compact_count(chain *ch) {
  size_t counts[2] = {0, 0};
  if (ch->chunks > 0) memcpy(counts, ch->incl + (ch->chunks - 1) * ch->cs, sizeof counts);
  chain_free(ch);
  return counts[0];
}

/* select, select_flagged and partition with a keep function: each thread compacts a whole
 * chunk into its own buffer as it reads it from memory (a partition splits it into two,
 * the kept and the others), which gives the chunk's counts, enters the chain with them and
 * copies the buffers (now in its cache) to the output, the others of a partition from
 * base_no on. The chunk is read once, and no separate counting pass over it runs: on two
 * cores the compaction is bound by the instructions it issues, not by memory, and a
 * counting pass was a third of them. With a quad function the chunk is read as QUAD
 * streams into as many parts of the buffers, copied out one after the other. Returns
 * false, having written nothing, when the buffers cannot be had. */
static bool compact_buffered(const compactor *cp, size_t n, void *out, size_t base_no,
                             size_t *count) {
  const size_t es = cp->es;
  const bool partition = base_no != SIZE_MAX;
  const int ns = cp->f.quad ? QUAD : 1;
  chain ch;
  compact_chain_init(&ch, cp, n, out, (partition ? n : n / 2) * es);
  const int threads = chain_threads(&ch);
  const size_t elems = ch.chunk < n ? ch.chunk : n;
  /* a stream's part of a buffer: its share of the chunk, the last stream's few more
   * elements (under 256 bytes) and the keeps' slack (256) */
  const size_t part = ns == 1 ? PP_CPU_ALIGN64(elems * es + 256)
                              : PP_CPU_ALIGN64(elems * es / QUAD + 512);
  const size_t stride = (size_t)ns * part;
  const size_t per_thread = (partition ? 2 : 1) * stride;
  unsigned char *const bufs = ch.chunks > 0 ? malloc((size_t)threads * per_thread + 64) : NULL;
  if (!bufs) {
    chain_free(&ch);
    return false;
  }
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    unsigned char *yes = bufs + PP_CPU_ALIGN64((uintptr_t)bufs) - (uintptr_t)bufs +
                         (size_t)omp_get_thread_num() * per_thread;
    unsigned char *no = yes + stride;
    size_t c, lo, hi, next[3];
    for (bool more = chain_take(&ch, &c, &lo, &hi); more; c = next[0], lo = next[1], hi = next[2]) {
      const double t0 = omp_get_wtime();
      size_t kept[QUAD] = {0};
      if (ns > 1)
        cp->f.quad(cp, lo, hi, yes, partition ? no : NULL, part, kept);
      else
        kept[0] = partition ? cp->f.split(cp, lo, hi, yes, no) : cp->f.keep(cp, lo, hi, yes);
      size_t total[2] = {0, 0};
      for (int s = 0; s < ns; s++) total[0] += kept[s];
      total[1] = (hi - lo) - total[0];
      size_t at[2];
      chain_enter(&ch, c, total, at, chain_patience(t0));
      more = chain_take(&ch, &next[0], &next[1], &next[2]); /* before the output */
      const size_t len = ns > 1 ? quad_len(hi - lo, es) : hi - lo; /* elements a stream */
      size_t to_yes = at[0], to_no = base_no + at[1];
      for (int s = 0; s < ns; s++) {
        const size_t read = s < ns - 1 ? len : (hi - lo) - (size_t)(ns - 1) * len;
        put_bytes((unsigned char *)out + to_yes * es, yes + (size_t)s * part, kept[s] * es,
                  ch.stream, false);
        to_yes += kept[s];
        if (partition) {
          put_bytes((unsigned char *)out + to_no * es, no + (size_t)s * part,
                    (read - kept[s]) * es, ch.stream, false);
          to_no += read - kept[s];
        }
      }
    }
    stage_fence(&ch);
  }
  free(bufs);
  *count = compact_count(&ch);
  return true;
}

static size_t compact_chained(const compactor *cp, size_t n, void *out, size_t base_no) {
  const size_t es = cp->es;
  const bool partition = base_no != SIZE_MAX;
  const bool staged = cp->f.keep != NULL;
  size_t count;
  if (staged && compact_buffered(cp, n, out, base_no, &count)) return count;
  chain ch;
  compact_chain_init(&ch, cp, n, out, (partition ? n : n / 2) * es);
  int threads = chain_threads(&ch);
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    stage yes, no;
    size_t c, lo, hi;
    while (chain_take(&ch, &c, &lo, &hi)) {
      const double t0 = omp_get_wtime();
      size_t total[2], at[2]; /* kept, rejected */
      compact_total(cp, lo, hi, total);
      chain_enter(&ch, c, total, at, chain_patience(t0));
      unsigned char *dst_yes = (unsigned char *)out + at[0] * es;
      unsigned char *dst_no = partition ? (unsigned char *)out + (base_no + at[1]) * es : NULL;
      if (!staged) { /* large records: memcpy each, branching on its flag */
        const unsigned char *src = cp->in;
        const uint8_t *f = cp->flags;
        for (size_t i = lo; i < hi; i++) {
          if (f[i]) {
            memcpy(dst_yes, src + i * es, es);
            dst_yes += es;
          }
        }
        continue;
      }
      stage_begin(&yes, dst_yes, ch.stream);
      stage_begin(&no, dst_no, ch.stream);
      const size_t tile = STAGE_BYTES / es;
      for (size_t t0 = lo; t0 < hi; t0 += tile) {
        const size_t t1 = hi - t0 < tile ? hi : t0 + tile;
        if (partition) {
          const size_t k = cp->f.split(cp, t0, t1, yes.buf + yes.held, no.buf + no.held);
          yes.held += k * es;
          no.held += ((t1 - t0) - k) * es;
          stage_flush(&no, false);
        } else {
          yes.held += cp->f.keep(cp, t0, t1, yes.buf + yes.held) * es;
        }
        stage_flush(&yes, false);
      }
      stage_flush(&yes, true);
      if (partition) stage_flush(&no, true);
    }
    stage_fence(&ch);
  }
  return compact_count(&ch);
}

/* [dtype][cmp] */
#define CMP_ROW(NAME)                                                                       \
  {[PP_GT] = {COMPACTOR(NAME##_gt)}, [PP_GE] = {COMPACTOR(NAME##_ge)},                      \
   [PP_LT] = {COMPACTOR(NAME##_lt)}, [PP_LE] = {COMPACTOR(NAME##_le)},                      \
   [PP_EQ] = {COMPACTOR(NAME##_eq)}, [PP_NE] = {COMPACTOR(NAME##_ne)}}

static pp_status select_like(pp_context *ctx, const char *fn, pp_dtype t, const void *in,
                             size_t n, pp_cmp cmp, const void *value, void *out,
                             uint64_t *count, bool partition) {
  static const compact_fns table[PP_CPU_DTYPES][6] = {
      [PP_U8] = CMP_ROW(u8),   [PP_I32] = CMP_ROW(i32), [PP_U32] = CMP_ROW(u32),
      [PP_I64] = CMP_ROW(i64), [PP_U64] = CMP_ROW(u64), [PP_F32] = CMP_ROW(f32),
      [PP_F64] = CMP_ROW(f64)};
  if (!pp_cpu_dtype_ok(t)) return pp_fail(ctx, PP_ERR_UNSUPPORTED, "%s: dtype (%d)", fn, (int)t);
  if ((unsigned)cmp >= 6) cmp = PP_NE;
  const compact_fns *f = &table[t][cmp];
  compactor cp = {in, NULL, {0}, pp_dtype_size(t), *f, {{0}}};
  memcpy(cp.value, value, cp.es);
#if SCAN_HAVE_VKEEP
  vector_fns(t, cmp, &cp);
#endif
  size_t base_no = SIZE_MAX;
  if (partition) { /* the kept elements' total first: the others start there */
    const size_t block = CHUNK_BYTES / cp.es;
    const int threads = n >= PP_CPU_PARALLEL_MIN ? pp_cpu_threads() : 1;
    base_no = 0;
#pragma omp parallel for reduction(+ : base_no) schedule(static) num_threads(threads) if (threads > 1)
    for (size_t b = 0; b < n; b += block) base_no += cp.f.count(&cp, b, n - b < block ? n : b + block);
  }
  *count = compact_chained(&cp, n, out, base_no);
  return PP_OK;
}

/* pp_cpu_select and pp_cpu_partition */
#define SELECT_ENTRY(NAME, PARTITION)                                                       \
  pp_status pp_cpu_##NAME(pp_context *ctx, pp_dtype t, const void *in, size_t n, pp_cmp cmp, \
                          const void *value, void *out, uint64_t *count) {                  \
    return select_like(ctx, "pp_" #NAME, t, in, n, cmp, value, out, count, PARTITION);      \
  }
SELECT_ENTRY(select, false)
SELECT_ENTRY(partition, true)

pp_status pp_cpu_select_flagged(pp_context *ctx, size_t elem_size, const void *in,
                                const uint8_t *flags, size_t n, void *out, uint64_t *count) {
  (void)ctx;
  static const compact_fns by_size[5] = {{COMPACTOR(flag1)}, {COMPACTOR(flag2)},
                                         {COMPACTOR(flag4)}, {COMPACTOR(flag8)},
                                         {COMPACTOR(flag16)}};
  compactor cp = {in, flags, {0}, elem_size, {count_flag_any, NULL, NULL, NULL}, {{0}}};
  for (size_t s = 0; s < 5; s++)
    if (elem_size == (size_t)1 << s) cp.f = by_size[s];
#if SCAN_HAVE_VKEEP
  if (have_avx2()) {
    if (elem_size == 4)
      cp.f = (compact_fns){vcount8_flag4, vkeep8_flag4, vsplit8_flag4, vquad8_flag4};
    if (elem_size == 8)
      cp.f = (compact_fns){vcount8_flag8, vkeep8_flag8, vsplit8_flag8, vquad8_flag8};
  }
#endif
  *count = compact_chained(&cp, n, out, SIZE_MAX);
  return PP_OK;
}
