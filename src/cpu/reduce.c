/* reduce.c — pp_reduce and pp_argreduce on the CPU (OpenMP).
 *
 * The rules of API.md, and how they are met here:
 *  - integer SUM wraps in the type: sums run in the unsigned type of the same width, where
 *    wrapping is defined (u8 too: its sum mod 256 is the same whatever the order, and byte
 *    lanes keep all 32 of an AVX2 register's lanes busy where a wider sum would use 4);
 *  - f32 SUM is accumulated in double, so its error is far inside that of pairwise
 *    summation (32 independent partial sums per thread keep it at memory speed); float
 *    sums are combined in a fixed order, so they depend on n and the thread count only;
 *  - float MIN/MAX ignore NaN (a NaN never wins the comparison that folds it in), and an
 *    all-NaN input gives NaN; -0.0 is ordered below +0.0 so that the result does not depend
 *    on how the pass was split among threads (the fold marks whether the zero that decides
 *    it was seen, see PP_CPU_FLOAT_REDUCE);
 *  - argreduce keeps the first index on ties: each thread takes one contiguous part and
 *    the parts are combined in order with a strict comparison.
 */
#include "cpu.h"

#include <float.h>
#include <math.h>
#include <omp.h>

/* ---- the pass over memory ------------------------------------------------------------- */

/* Each thread's part is read as RD_STREAMS sequential streams at once (the part cut in
 * RD_STREAMS equal pieces, one cache line of each per step), not as one: a core keeps more
 * misses in flight when its hardware prefetchers follow several streams, and on the
 * 2-core VM one stream per core left about a third of the read bandwidth unused (the same
 * reason glibc's memcpy copies four pages at once past its non-temporal threshold).
 * Every stream has its own vector accumulators, one per 32 bytes of a line: the folds of a
 * step are independent, so there is no latency chain. The vectors are GCC's generic ones,
 * lowered to two SSE2 registers in the baseline clone and to one AVX2 register in the
 * clone chosen at load time on x86-64-v3 machines (which also have the 8-byte compares
 * that the 8-byte MIN/MAX need); written as scalar lanes, GCC's vectoriser interleaved
 * successive steps with lane permutes, or not at all. */
#define RD_STREAMS 4
#define RD_LINE 64
#define RD_VEC 32
#define RD_MAX_PARTS 256

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define RD_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define RD_CLONES
#endif
#define RD_INLINE static inline __attribute__((always_inline))

#define OP_ADD(a, x) ((a) + (x)) /* integer sums: a is unsigned, so this wraps */
#define OP_MIN(a, x) ((x) < (a) ? (x) : (a))
#define OP_MAX(a, x) ((x) > (a) ? (x) : (a))
/* the same on vectors V whose lanes' bits are the integer vector B, through the
 * comparison's lane masks (for integers V is B; for floats the comparison is the float
 * one, so a NaN x never replaces a) */
#define VOP_ADD(V, B, a, x) ((a) + (x))
#define VOP_MIN(V, B, a, x) (V) vpick(B, (x) < (a), (B)(x), (B)(a))
#define VOP_MAX(V, B, a, x) (V) vpick(B, (x) > (a), (B)(x), (B)(a))
#define vpick(V, m, x, a) (((x) & (V)(m)) | ((a) & ~(V)(m)))
/* No mark: the folds of integers and of sums have nothing to note beside their result. */
#define VMARK_NONE(B, v) ((B){0})
#define MARK_NONE(x) false
/* The float MIN/MAX mark the zero that should win (see PP_CPU_FLOAT_REDUCE). */
#define MARK_NEG_ZERO(x) ((x) == 0 && signbit(x))
#define MARK_POS_ZERO(x) ((x) == 0 && !signbit(x))

/* fold_NAME(x, n, &marked): T elements folded into A lanes of vectors vec_NAME; LOAD(x, i)
 * is element i as an A, VLOAD(p) the vector of the elements at p, OP the fold, ID its
 * identity. The order is fixed by n alone: lane l of vector k of stream s takes elements
 * s * m + k * V + l + STEP * q for q = 0, 1, ...; then the lanes in that order, then the
 * tail. Beside the result, marked says whether any element is marked: VMARK(B, v) sets
 * the sign bit of the lanes of B (the integer vector of vec_NAME's width) whose element
 * is, MARK(x) says it of one element. all_NAME splits n into pp_cpu_threads() parts
 * whatever the team's size and combines them in part order, so the result depends on n
 * and the thread count only, never on timing. */
#define PP_CPU_FOLD(NAME, T, A, LOAD, VLOAD, OP, ID, VMARK, MARK, FAST)                     \
  RD_CLONES static A fold_##NAME(const T *x, size_t n, bool *marked) {                      \
    enum { V = RD_VEC / sizeof(A), PER = RD_LINE / RD_VEC, STEP = V * PER };                \
    vec_##NAME acc[RD_STREAMS][PER];                                                        \
    bits_##NAME mark = {0};                                                                 \
    for (int s = 0; s < RD_STREAMS; s++)                                                    \
      for (int k = 0; k < PER; k++) acc[s][k] = (vec_##NAME){0} + (A)(ID);                  \
    const size_t m = n / (RD_STREAMS * STEP) * STEP; /* elements per stream */              \
    for (size_t i = 0; i < m; i += STEP)                                                    \
      for (int s = 0; s < RD_STREAMS; s++)                                                  \
        for (int k = 0; k < PER; k++) {                                                     \
          vec_##NAME v;                                                                     \
          VLOAD(&v, x + s * m + i + k * V);                                                 \
          acc[s][k] = V##OP(vec_##NAME, bits_##NAME, acc[s][k], v);                         \
          mark |= VMARK(bits_##NAME, v);                                                    \
        }                                                                                   \
    A r = ID;                                                                               \
    bool any = false;                                                                       \
    for (int s = 0; s < RD_STREAMS; s++)                                                    \
      for (int k = 0; k < PER; k++)                                                         \
        for (int l = 0; l < V; l++) r = OP(r, acc[s][k][l]);                                \
    for (int l = 0; l < V; l++) any |= mark[l] < 0;                                         \
    for (size_t i = RD_STREAMS * m; i < n; i++) {                                           \
      r = OP(r, LOAD(x, i));                                                                \
      any |= MARK(x[i]);                                                                    \
    }                                                                                       \
    *marked = any;                                                                          \
    return r;                                                                               \
  }                                                                                         \
  static A all_##NAME(const T *in, size_t n, bool *marked) {                                \
    size_t parts = n >= PP_CPU_PARALLEL_MIN ? (size_t)pp_cpu_threads() : 1;                 \
    if (parts > RD_MAX_PARTS) parts = RD_MAX_PARTS;                                         \
    A part[RD_MAX_PARTS];                                                                   \
    bool part_marked[RD_MAX_PARTS];                                                         \
    _Pragma("omp parallel for schedule(static) if (parts > 1)")                             \
    for (size_t p = 0; p < parts; p++) {                                                    \
      size_t lo = pp_cpu_part_begin(n, p, parts), hi = pp_cpu_part_begin(n, p + 1, parts);  \
      if (!FAST(in + lo, hi - lo, &part[p], &part_marked[p]))                               \
        part[p] = fold_##NAME(in + lo, hi - lo, &part_marked[p]);                           \
    }                                                                                       \
    A r = part[0];                                                                          \
    *marked = part_marked[0];                                                               \
    for (size_t p = 1; p < parts; p++) {                                                    \
      r = OP(r, part[p]);                                                                   \
      *marked |= part_marked[p];                                                            \
    }                                                                                       \
    return r;                                                                               \
  }                                                                                         \
  static inline A unmarked_##NAME(const T *in, size_t n) {                                  \
    bool marked;                                                                            \
    return all_##NAME(in, n, &marked);                                                      \
  }

/* vec_NAME and vload_NAME(p): RD_VEC bytes of A lanes, from the elements' own bits;
 * bits_NAME: the same bytes as lanes of the integer B */
#define PP_CPU_VLOAD_BITS(NAME, A, B)                                                       \
  typedef A vec_##NAME __attribute__((vector_size(RD_VEC)));                                \
  typedef B bits_##NAME __attribute__((vector_size(RD_VEC)));                               \
  RD_INLINE void vload_##NAME(vec_##NAME *v, const void *p) { memcpy(v, p, sizeof *v); }

/* ---- 8-byte MIN/MAX with AVX2 --------------------------------------------------------- */

/* The generic fold above leaves the 8-byte MIN/MAX short of the read bandwidth: GCC lowers
 * their vector compares to a compare, a blend and a store of every accumulator to the
 * stack, and a float MIN to a compare and a blend where one vminpd does. On the 2-core VM
 * a loop with fewer instructions beside its loads reads faster (a core's out-of-order
 * window then holds more loads, so more lines are in flight: docs/benchmarks/cpu.md).
 * Here the same walk (RD_STREAMS streams of whole 64-byte steps, two vectors a stream, the
 * tail in the scalar OP) is written with AVX2 intrinsics and its eight accumulators in
 * registers:
 *  - f64: vminpd(x, a) is x < a ? x : a, the generic fold's OP itself (a NaN x keeps a,
 *    equal zeros keep a), and vmaxpd the same for MAX; the winning zero's mark is one
 *    compare of the bits and an OR a vector, as in PP_CPU_FLOAT_REDUCE;
 *  - i64: vpcmpgtq and a blend;
 *  - u64: the accumulators hold their values with the sign bit flipped, so that the signed
 *    compare orders them as unsigned; each x is flipped once on its way in.
 * MIN and MAX of integers have one result whatever the order, and the floats' only
 * freedom (the sign of a zero) is settled by the mark, so these give what the generic
 * fold gives. fast_NAME returns false where the machine has no AVX2. */
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

#define RD8_AVX2 __attribute__((target("avx2")))
enum rd8_kind { RD8_I64, RD8_U64, RD8_F64 };

static bool rd8_have_avx2(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") != 0;
}

/* a folded with the vector x (for U64, x unflipped; a flipped) */
RD8_AVX2 RD_INLINE __m256i rd8_fold(enum rd8_kind k, bool min, __m256i a, __m256i x) {
  if (k == RD8_F64) {
    const __m256d xd = _mm256_castsi256_pd(x), ad = _mm256_castsi256_pd(a);
    return _mm256_castpd_si256(min ? _mm256_min_pd(xd, ad) : _mm256_max_pd(xd, ad));
  }
  if (k == RD8_U64) x = _mm256_xor_si256(x, _mm256_set1_epi64x(INT64_MIN));
  return _mm256_blendv_epi8(a, x, min ? _mm256_cmpgt_epi64(a, x) : _mm256_cmpgt_epi64(x, a));
}

/* The whole steps of x[0, n): their 32 folded lanes (8-byte values, U64 unflipped) to
 * lanes, whether an element had the bits `zero` (F64) to *marked; returns how many
 * elements the steps covered. id: the identity's bits. */
RD8_AVX2 RD_INLINE size_t rd8_pass(enum rd8_kind k, bool min, const void *x_, size_t n,
                                   uint64_t id, uint64_t zero, uint64_t lanes[32],
                                   bool *marked) {
  const unsigned char *x = x_;
  const size_t m = n / (RD_STREAMS * 8) * 8; /* elements a stream */
  const __m256i flip = _mm256_set1_epi64x(k == RD8_U64 ? INT64_MIN : 0);
  const __m256i z = _mm256_set1_epi64x((long long)zero);
  __m256i a0, a1, a2, a3, a4, a5, a6, a7, mark = _mm256_setzero_si256();
  a0 = _mm256_xor_si256(_mm256_set1_epi64x((long long)id), flip);
  a1 = a2 = a3 = a4 = a5 = a6 = a7 = a0;
#define RD8_STEP(S, A, B)                                                                   \
  {                                                                                         \
    const unsigned char *p = x + (S) * m * 8 + i;                                           \
    const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)p);                 \
    const __m256i w = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));          \
    A = rd8_fold(k, min, A, v);                                                             \
    B = rd8_fold(k, min, B, w);                                                             \
    if (k == RD8_F64)                                                                       \
      mark = _mm256_or_si256(mark, _mm256_or_si256(_mm256_cmpeq_epi64(v, z),                \
                                                   _mm256_cmpeq_epi64(w, z)));              \
  }
  for (size_t i = 0; i < m * 8; i += 64) {
    RD8_STEP(0, a0, a1)
    RD8_STEP(1, a2, a3)
    RD8_STEP(2, a4, a5)
    RD8_STEP(3, a6, a7)
  }
#undef RD8_STEP
#define RD8_OUT(J, A)                                                                       \
  _mm256_storeu_si256((__m256i *)(void *)(lanes + 4 * (J)), _mm256_xor_si256(A, flip))
  RD8_OUT(0, a0); /* no array: GCC would keep the accumulators in it, in memory */
  RD8_OUT(1, a1);
  RD8_OUT(2, a2);
  RD8_OUT(3, a3);
  RD8_OUT(4, a4);
  RD8_OUT(5, a5);
  RD8_OUT(6, a6);
  RD8_OUT(7, a7);
#undef RD8_OUT
  *marked = !_mm256_testz_si256(mark, mark);
  return RD_STREAMS * m;
}

/* fast_NAME(x, n, &r, &marked): the AVX2 pass of kind K, then its lanes and the tail in
 * the scalar OP, MARK the tail's mark */
#define PP_CPU_FAST8(NAME, T, K, MIN, OP, ID, ZERO, MARK)                                   \
  RD8_AVX2 static size_t pass_##NAME(const T *x, size_t n, uint64_t lanes[32], bool *mk) {  \
    const T id = ID, zero = ZERO;                                                           \
    uint64_t id_bits, zero_bits;                                                            \
    memcpy(&id_bits, &id, sizeof id);                                                       \
    memcpy(&zero_bits, &zero, sizeof zero);                                                 \
    return rd8_pass(K, MIN, x, n, id_bits, zero_bits, lanes, mk);                           \
  }                                                                                         \
  static bool fast_##NAME(const T *x, size_t n, T *r, bool *marked) {                      \
    if (!rd8_have_avx2()) return false;                                                     \
    uint64_t lanes[32];                                                                     \
    bool any;                                                                               \
    size_t i = pass_##NAME(x, n, lanes, &any);                                              \
    T acc = ID;                                                                             \
    for (int l = 0; l < 32; l++) {                                                          \
      T v;                                                                                  \
      memcpy(&v, &lanes[l], sizeof v);                                                      \
      acc = OP(acc, v);                                                                     \
    }                                                                                       \
    for (; i < n; i++) {                                                                    \
      acc = OP(acc, x[i]);                                                                  \
      any |= MARK(x[i]);                                                                    \
    }                                                                                       \
    *r = acc;                                                                               \
    *marked = any;                                                                          \
    return true;                                                                            \
  }
PP_CPU_FAST8(i64_min, int64_t, RD8_I64, true, OP_MIN, INT64_MAX, 0, MARK_NONE)
PP_CPU_FAST8(i64_max, int64_t, RD8_I64, false, OP_MAX, INT64_MIN, 0, MARK_NONE)
PP_CPU_FAST8(u64_min, uint64_t, RD8_U64, true, OP_MIN, UINT64_MAX, 0, MARK_NONE)
PP_CPU_FAST8(u64_max, uint64_t, RD8_U64, false, OP_MAX, 0, 0, MARK_NONE)
PP_CPU_FAST8(f64_min, double, RD8_F64, true, OP_MIN, INFINITY, -0.0, MARK_NEG_ZERO)
PP_CPU_FAST8(f64_max, double, RD8_F64, false, OP_MAX, -INFINITY, 0.0, MARK_POS_ZERO)
#define FAST_i64_min fast_i64_min
#define FAST_i64_max fast_i64_max
#define FAST_u64_min fast_u64_min
#define FAST_u64_max fast_u64_max
#define FAST_f64_min fast_f64_min
#define FAST_f64_max fast_f64_max
#else
#define FAST_i64_min NO_FAST
#define FAST_i64_max NO_FAST
#define FAST_u64_min NO_FAST
#define FAST_u64_max NO_FAST
#define FAST_f64_min NO_FAST
#define FAST_f64_max NO_FAST
#endif
/* the other folds: no AVX2 pass of their own */
#define NO_FAST(x, n, r, marked) false
#define FAST_u8_min NO_FAST
#define FAST_u8_max NO_FAST
#define FAST_i32_min NO_FAST
#define FAST_i32_max NO_FAST
#define FAST_u32_min NO_FAST
#define FAST_u32_max NO_FAST
#define FAST_f32_min NO_FAST
#define FAST_f32_max NO_FAST

/* ---- integers ------------------------------------------------------------------------ */

/* Sums fold into the unsigned type UT of the same width, where wrapping is defined; ST is
 * the signed type of that width (the lanes' bits). */
#define LOAD_PLAIN(x, i) ((x)[i])

#define PP_CPU_INT_FOLD(NAME, T, A, ST, OP, ID, FAST)                                       \
  PP_CPU_VLOAD_BITS(NAME, A, ST)                                                            \
  PP_CPU_FOLD(NAME, T, A, LOAD_PLAIN, vload_##NAME, OP, ID, VMARK_NONE, MARK_NONE, FAST)
#define PP_CPU_INT_REDUCE(NAME, T, UT, ST, T_LOWEST, T_HIGHEST)                             \
  PP_CPU_INT_FOLD(NAME##_sum, T, UT, ST, OP_ADD, 0, NO_FAST)                                \
  PP_CPU_INT_FOLD(NAME##_min, T, T, ST, OP_MIN, T_HIGHEST, FAST_##NAME##_min)               \
  PP_CPU_INT_FOLD(NAME##_max, T, T, ST, OP_MAX, T_LOWEST, FAST_##NAME##_max)                \
  static void reduce_##NAME(pp_op op, const void *in, size_t n, void *out_) {               \
    T *out = out_;                                                                          \
    *out = op == PP_SUM   ? (T)unmarked_##NAME##_sum(in, n)                                 \
           : op == PP_MIN ? unmarked_##NAME##_min(in, n)                                    \
                          : unmarked_##NAME##_max(in, n);                                   \
  }

PP_CPU_INT_REDUCE(u8, uint8_t, uint8_t, int8_t, 0, UINT8_MAX)
PP_CPU_INT_REDUCE(i32, int32_t, uint32_t, int32_t, INT32_MIN, INT32_MAX)
PP_CPU_INT_REDUCE(u32, uint32_t, uint32_t, int32_t, 0, UINT32_MAX)
PP_CPU_INT_REDUCE(i64, int64_t, uint64_t, int64_t, INT64_MIN, INT64_MAX)
PP_CPU_INT_REDUCE(u64, uint64_t, uint64_t, int64_t, 0, UINT64_MAX)

/* ---- floats -------------------------------------------------------------------------- */

/* SUM in double (f32 widened, exactly): the lanes are independent sums, so vector adds
 * need no fast-math, and RD_STREAMS x 8 partial sums per part keep the error below that
 * of one running sum. */
#define LOAD_DOUBLE(x, i) ((double)(x)[i])
PP_CPU_VLOAD_BITS(f64_sum, double, int64_t)
typedef double vec_f32_sum __attribute__((vector_size(RD_VEC)));
typedef int64_t bits_f32_sum __attribute__((vector_size(RD_VEC)));
typedef float vec_f32_half __attribute__((vector_size(RD_VEC / 2)));
RD_INLINE void vload_f32_sum(vec_f32_sum *v, const void *p) {
  vec_f32_half h;
  memcpy(&h, p, sizeof h);
  *v = __builtin_convertvector(h, vec_f32_sum);
}
PP_CPU_FOLD(f32_sum, float, double, LOAD_DOUBLE, vload_f32_sum, OP_ADD, 0.0, VMARK_NONE, MARK_NONE,
            NO_FAST)
PP_CPU_FOLD(f64_sum, double, double, LOAD_DOUBLE, vload_f64_sum, OP_ADD, 0.0, VMARK_NONE, MARK_NONE,
            NO_FAST)

/* MIN/MAX fold the floats themselves with the float comparison (x < a ? x : a: vcmpps or
 * vcmppd and a blend, which vectorise where a NaN-aware scalar loop did not): a NaN x
 * compares false, so it never replaces the running value, which starts at the identity
 * (+inf for MIN, -inf for MAX) and so is never NaN. That comparison leaves two things
 * open, both settled after the pass:
 *  - zeros: -0.0 == +0.0, so a zero result may carry the sign of whichever zero came
 *    first in its lane. The fold marks whether it saw the zero that should win (-0.0 for
 *    MIN, +0.0 for MAX: an integer compare of the bits), and a zero result is that zero
 *    when it was seen and the other one when it was not, whatever the split;
 *  - all NaN: the result stays the identity, as it does when the identity itself (+inf
 *    for MIN) is an element; then one look at the input, which stops at its first number,
 *    tells them apart, so only an input without numbers is read twice.
 * The mark costs a compare and an OR a vector where order keys (the bits with the
 * magnitude flipped below zero and NaN replaced) cost about ten, which had kept the
 * 8-byte MIN/MAX below the read bandwidth. */
#define VMARK_NEG_ZERO(B, v) ((B)(v) == (B)(-(__typeof__(v)){0})) /* the bits of -0.0 */
#define VMARK_POS_ZERO(B, v) ((B)(v) == (B){0})

#define PP_CPU_FLOAT_REDUCE(NAME, T, B)                                                     \
  PP_CPU_VLOAD_BITS(NAME##_min, T, B)                                                       \
  PP_CPU_VLOAD_BITS(NAME##_max, T, B)                                                       \
  PP_CPU_FOLD(NAME##_min, T, T, LOAD_PLAIN, vload_##NAME##_min, OP_MIN, INFINITY,           \
              VMARK_NEG_ZERO, MARK_NEG_ZERO, FAST_##NAME##_min)                             \
  PP_CPU_FOLD(NAME##_max, T, T, LOAD_PLAIN, vload_##NAME##_max, OP_MAX, -INFINITY,          \
              VMARK_POS_ZERO, MARK_POS_ZERO, FAST_##NAME##_max)                             \
  static void reduce_##NAME(pp_op op, const void *in_, size_t n, void *out_) {              \
    const T *in = in_;                                                                      \
    T *out = out_;                                                                          \
    if (op == PP_SUM) {                                                                     \
      *out = (T)unmarked_##NAME##_sum(in, n);                                               \
      return;                                                                               \
    }                                                                                       \
    const bool min = op == PP_MIN;                                                          \
    bool marked; /* the winning zero seen */                                                \
    T r = min ? all_##NAME##_min(in, n, &marked) : all_##NAME##_max(in, n, &marked);        \
    if (r == 0) r = min == marked ? (T)-0.0 : (T)0.0;                                       \
    if (r == (min ? (T)INFINITY : (T)-INFINITY)) {                                          \
      size_t i = 0;                                                                         \
      while (i < n && isnan(in[i])) i++;                                                    \
      if (n > 0 && i == n) r = (T)NAN;                                                      \
    }                                                                                       \
    *out = r;                                                                               \
  }

PP_CPU_FLOAT_REDUCE(f32, float, int32_t)
PP_CPU_FLOAT_REDUCE(f64, double, int64_t)

#define BY_DTYPE(F)                                                                         \
  {[PP_U8] = F##_u8,   [PP_I32] = F##_i32, [PP_U32] = F##_u32, [PP_I64] = F##_i64,           \
   [PP_U64] = F##_u64, [PP_F32] = F##_f32, [PP_F64] = F##_f64}

pp_status pp_cpu_reduce(pp_context *ctx, pp_op op, pp_dtype t, const void *in, size_t n,
                        void *out) {
  static void (*const table[PP_CPU_DTYPES])(pp_op, const void *, size_t, void *) =
      BY_DTYPE(reduce);
  if (!pp_cpu_dtype_ok(t)) return pp_fail(ctx, PP_ERR_UNSUPPORTED, "pp_reduce: dtype (%d)", (int)t);
  table[t](op, in, n, out);
  return PP_OK;
}

/* ---- argreduce ----------------------------------------------------------------------- */

#define PP_MAX_PARTS 256
#define PP_NOT_NAN(x) 0
#define PP_IS_NAN(x) isnan(x)

/* Each part finds its best (value, index) with a strict comparison, so its first index
 * wins ties; parts are then combined in index order the same way. */
#define PP_CPU_ARGREDUCE(NAME, T, IS_NAN, T_LOWEST, T_HIGHEST)                              \
  static void argreduce_##NAME(pp_op op, const void *in_, size_t n, void *value_,          \
                               uint64_t *index) {                                           \
    const T *in = in_;                                                                      \
    T *value = value_;                                                                      \
    int parts = n >= PP_CPU_PARALLEL_MIN ? pp_cpu_threads() : 1;                            \
    if (parts > PP_MAX_PARTS) parts = PP_MAX_PARTS;                                         \
    T part_v[PP_MAX_PARTS];                                                                 \
    uint64_t part_i[PP_MAX_PARTS];                                                          \
    bool part_found[PP_MAX_PARTS];                                                          \
    _Pragma("omp parallel num_threads(parts)")                                              \
    {                                                                                       \
      size_t p = (size_t)omp_get_thread_num(), np = (size_t)omp_get_num_threads();          \
      size_t lo = pp_cpu_part_begin(n, p, np), hi = pp_cpu_part_begin(n, p + 1, np);        \
      bool found = false;                                                                   \
      T v = 0;                                                                              \
      uint64_t at = 0;                                                                      \
      for (size_t i = lo; i < hi; i++) {                                                    \
        T x = in[i];                                                                        \
        if (IS_NAN(x)) continue;                                                            \
        if (!found || (op == PP_MIN ? x < v : x > v)) {                                     \
          found = true;                                                                     \
          v = x;                                                                            \
          at = i;                                                                           \
        }                                                                                   \
      }                                                                                     \
      part_v[p] = v;                                                                        \
      part_i[p] = at;                                                                       \
      part_found[p] = found;                                                                \
      if (p == 0) parts = (int)np; /* the team may be smaller than asked */                 \
    }                                                                                       \
    bool found = false;                                                                     \
    T v = op == PP_MIN ? T_HIGHEST : T_LOWEST;                                              \
    uint64_t at = 0;                                                                        \
    for (int p = 0; p < parts; p++) {                                                       \
      if (part_found[p] && (!found || (op == PP_MIN ? part_v[p] < v : part_v[p] > v))) {    \
        found = true;                                                                       \
        v = part_v[p];                                                                      \
        at = part_i[p];                                                                     \
      }                                                                                     \
    }                                                                                       \
    if (!found && n > 0) v = in[0]; /* all NaN: NaN at index 0 */                           \
    *value = v;                                                                             \
    *index = at;                                                                            \
  }

PP_CPU_ARGREDUCE(u8, uint8_t, PP_NOT_NAN, 0, UINT8_MAX)
PP_CPU_ARGREDUCE(i32, int32_t, PP_NOT_NAN, INT32_MIN, INT32_MAX)
PP_CPU_ARGREDUCE(u32, uint32_t, PP_NOT_NAN, 0, UINT32_MAX)
PP_CPU_ARGREDUCE(i64, int64_t, PP_NOT_NAN, INT64_MIN, INT64_MAX)
PP_CPU_ARGREDUCE(u64, uint64_t, PP_NOT_NAN, 0, UINT64_MAX)
PP_CPU_ARGREDUCE(f32, float, PP_IS_NAN, -INFINITY, INFINITY)
PP_CPU_ARGREDUCE(f64, double, PP_IS_NAN, -INFINITY, INFINITY)

pp_status pp_cpu_argreduce(pp_context *ctx, pp_op op, pp_dtype t, const void *in, size_t n,
                           void *value_out, uint64_t *index_out) {
  static void (*const table[PP_CPU_DTYPES])(pp_op, const void *, size_t, void *, uint64_t *) =
      BY_DTYPE(argreduce);
  if (!pp_cpu_dtype_ok(t))
    return pp_fail(ctx, PP_ERR_UNSUPPORTED, "pp_argreduce: dtype (%d)", (int)t);
  table[t](op, in, n, value_out, index_out);
  return PP_OK;
}
