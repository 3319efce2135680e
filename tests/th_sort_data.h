/*
 * th_sort_data.h — what test_sort.c and test_merge.c share (header only): the reference
 * order of API.md as a comparison of values and a stable reference sort by it, the key
 * patterns, and arrays placed in host or pp_malloc memory with guard bytes around them.
 *
 * The order and what is checked are written in those two programs' header comments.
 */
#ifndef PARPRIM_TEST_SORT_DATA_H
#define PARPRIM_TEST_SORT_DATA_H

#include "th_values.h"

#include <float.h>

static inline const char *oname(pp_order o) { return o == PP_DESCENDING ? "desc" : "asc"; }

/* ---- the reference order ------------------------------------------------------------- */

static inline int cmp_num(double a, double b) {
  int na = isnan(a) != 0, nb = isnan(b) != 0;
  if (na || nb) return na - nb; /* NaN above everything, equal to NaN */
  return (a > b) - (a < b);     /* -0.0 == +0.0 */
}

#define CMP_INT(x, y) (((x) > (y)) - ((x) < (y)))
#define CMP_FLOAT(x, y) cmp_num((double)(x), (double)(y))

/* Per dtype: cmp_T(a, i, b, j) compares a[i] with b[j] ascending (<0, 0, >0), and
 * ref_perm_T gives the stable sorting permutation of k[0..n) in idx: a bottom-up merge sort
 * of indices where the right run's element goes first only when strictly before. sgn is
 * -1 for descending, which negates the comparison and so keeps ties in input order. */
#define REF_TYPE(DT, NAME, T, CMP)                                                          \
  static inline int cmp_##NAME(const void *a, size_t i, const void *b, size_t j) {          \
    T x, y;                                                                                 \
    memcpy(&x, (const unsigned char *)a + i * sizeof(T), sizeof(T));                        \
    memcpy(&y, (const unsigned char *)b + j * sizeof(T), sizeof(T));                        \
    return CMP(x, y);                                                                       \
  }                                                                                         \
  static void ref_perm_##NAME(const void *k, size_t n, int sgn, size_t *idx) {              \
    size_t *tmp = th_xmalloc(n * sizeof *tmp), *src = idx, *dst = tmp;                      \
    for (size_t i = 0; i < n; i++) idx[i] = i;                                              \
    for (size_t w = 1; w < n; w *= 2) {                                                     \
      for (size_t lo = 0; lo < n; lo += 2 * w) {                                            \
        size_t mid = n - lo < w ? n : lo + w, hi = n - mid < w ? n : mid + w;              \
        size_t i = lo, j = mid, d = lo;                                                     \
        while (i < mid && j < hi)                                                           \
          dst[d++] = sgn * cmp_##NAME(k, src[j], k, src[i]) < 0 ? src[j++] : src[i++];      \
        while (i < mid) dst[d++] = src[i++];                                                \
        while (j < hi) dst[d++] = src[j++];                                                 \
      }                                                                                     \
      size_t *s = src;                                                                      \
      src = dst;                                                                            \
      dst = s;                                                                              \
    }                                                                                       \
    if (src != idx) memcpy(idx, src, n * sizeof *idx);                                      \
    free(tmp);                                                                              \
  }

/* the dtypes as X(pp_dtype, name, C type, comparison), to stamp the helpers and their switches */
#define REF_TYPES(X)                                                                        \
  X(PP_U8, u8, uint8_t, CMP_INT) X(PP_I32, i32, int32_t, CMP_INT)                           \
  X(PP_U32, u32, uint32_t, CMP_INT) X(PP_I64, i64, int64_t, CMP_INT)                        \
  X(PP_U64, u64, uint64_t, CMP_INT) X(PP_F32, f32, float, CMP_FLOAT)                        \
  X(PP_F64, f64, double, CMP_FLOAT)
REF_TYPES(REF_TYPE)

/* a[i] against b[j] in order o: <0, 0, >0 */
static inline int ref_cmp_ord(pp_dtype t, pp_order o, const void *a, size_t i, const void *b,
                       size_t j) {
  int c = 0;
#define CMP_CASE(DT, NAME, T, CMP)                                                          \
  case DT: c = cmp_##NAME(a, i, b, j); break;
  switch (t) { REF_TYPES(CMP_CASE) }
#undef CMP_CASE
  return o == PP_DESCENDING ? -c : c;
}

static inline void ref_sort_perm(pp_dtype t, pp_order o, const void *k, size_t n, size_t *idx) {
  int sgn = o == PP_DESCENDING ? -1 : 1;
#define PERM_CASE(DT, NAME, T, CMP)                                                         \
  case DT: ref_perm_##NAME(k, n, sgn, idx); break;
  switch (t) { REF_TYPES(PERM_CASE) }
#undef PERM_CASE
}

static inline void permute(const void *in, const size_t *idx, size_t n, size_t es, void *out) {
  for (size_t i = 0; i < n; i++)
    memcpy((unsigned char *)out + i * es, (const unsigned char *)in + idx[i] * es, es);
}

/* In-place stable sort of host data by the reference (to build sorted inputs). */
static inline void ref_sort_inplace(pp_dtype t, pp_order o, void *k, size_t n) {
  size_t es = pp_dtype_size(t);
  size_t *idx = th_xmalloc(n * sizeof *idx);
  void *tmp = th_xmalloc(n * es);
  ref_sort_perm(t, o, k, n, idx);
  permute(k, idx, n, es, tmp);
  memcpy(k, tmp, n * es);
  free(tmp);
  free(idx);
}

/* ---- data ---------------------------------------------------------------------------- */

enum {
  P_RANDOM,   /* random bits: for floats also NaN, inf, denormals */
  P_DUPS,     /* 50 small values: long runs of ties */
  P_SORTED,   /* random bits, already in ascending order */
  P_REVERSED, /* random bits, in descending order */
  P_EQUAL,    /* one value */
  P_FEW,      /* four values */
  P_HIGH_BIT, /* one value and that value with one bit of the top byte flipped */
  P_TOP_BYTE, /* the same low bytes, the top byte random (u64: only bits above 56 differ) */
  P_SPECIAL,  /* extremes: INT_MIN/MAX, 0, -1; floats: +-0, +-inf, NaNs, denormals, max */
  P_ZEROS,    /* floats: -0.0 and +0.0 only; integers: 0 and 1 */
  P_NANS,     /* floats: NaNs of several bit patterns among small numbers */
  P_HEAVY,    /* 70% one value, the rest random bits */
  P_SKEWED,   /* magnitudes spread over many powers of two: most keys crowd near zero */
  N_PATTERNS
};
static const char *pattern_names[N_PATTERNS] = {
    "random", "dups", "sorted", "reversed", "equal", "few", "high-bit",
    "top-byte", "special", "zeros", "nans", "heavy", "skewed"};

/* The sort and merge tests' grid of cases: every dtype x both orders x n_sizes sizes x every
 * pattern, the pattern varying fastest; case k of sort_grid_count(n_sizes). */
typedef struct sort_grid {
  size_t ti, si; /* all_types[ti], the test's sizes[si] */
  int o, p;      /* pp_order, pattern */
} sort_grid;
static inline size_t sort_grid_count(size_t n_sizes) { return N_TYPES * 2 * n_sizes * N_PATTERNS; }
static inline sort_grid sort_grid_at(size_t k, size_t n_sizes) {
  sort_grid g;
  g.p = (int)(k % N_PATTERNS);
  k /= N_PATTERNS;
  g.si = k % n_sizes;
  k /= n_sizes;
  g.o = (int)(k % 2);
  g.ti = k / 2;
  return g;
}

static inline void put_bits(pp_dtype t, void *p, size_t i, uint64_t bits) {
  size_t es = pp_dtype_size(t);
  if (es == 1) {
    ((uint8_t *)p)[i] = (uint8_t)bits;
  } else if (es == 4) {
    uint32_t v = (uint32_t)bits;
    memcpy((unsigned char *)p + 4 * i, &v, 4);
  } else {
    memcpy((unsigned char *)p + 8 * i, &bits, 8);
  }
}

static inline uint64_t get_bits(pp_dtype t, const void *p, size_t i) {
  size_t es = pp_dtype_size(t);
  if (es == 1) return ((const uint8_t *)p)[i];
  if (es == 4) {
    uint32_t v;
    memcpy(&v, (const unsigned char *)p + 4 * i, 4);
    return v;
  }
  uint64_t v;
  memcpy(&v, (const unsigned char *)p + 8 * i, 8);
  return v;
}

static inline uint64_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static inline uint64_t f64_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

/* The bits of the number x in t (integers wrap into t). */
static inline uint64_t num_bits(pp_dtype t, double x) {
  if (t == PP_F32) return f32_bits((float)x);
  if (t == PP_F64) return f64_bits(x);
  return (uint64_t)(int64_t)x;
}

/* NaNs of both signs, quiet and signalling, with different payloads. */
static inline uint64_t nan_bits(pp_dtype t, uint64_t which) {
  static const uint32_t f[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff812345u,
                               0x7fffffffu, 0xffffffffu, 0x7fa00000u, 0x7fc0beefu};
  static const uint64_t d[] = {0x7ff8000000000000ull, 0xfff8000000000000ull,
                               0x7ff0000000000001ull, 0xfff0000012345678ull,
                               0x7fffffffffffffffull, 0xffffffffffffffffull,
                               0x7ff4000000000000ull, 0x7ff80000deadbeefull};
  return t == PP_F32 ? f[which % 8] : d[which % 8];
}

static inline uint64_t special_bits(pp_dtype t, th_rng *r) {
  uint64_t k = th_below(r, 16);
  switch (t) {
  case PP_F32: {
    const float v[] = {0.0f, -0.0f, INFINITY, -INFINITY, FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN,
                       0x1p-149f, -0x1p-149f, 1.0f, -1.0f};
    return k < 12 ? f32_bits(v[k]) : nan_bits(t, th_next(r));
  }
  case PP_F64: {
    const double v[] = {0.0, -0.0, INFINITY, -INFINITY, DBL_MAX, -DBL_MAX, DBL_MIN, -DBL_MIN,
                        0x1p-1074, -0x1p-1074, 1.0, -1.0};
    return k < 12 ? f64_bits(v[k]) : nan_bits(t, th_next(r));
  }
  case PP_I32: {
    const int32_t v[] = {INT32_MIN, INT32_MIN + 1, -1, 0, 1, INT32_MAX - 1, INT32_MAX, 256};
    return (uint64_t)(int64_t)v[k % 8];
  }
  case PP_I64: {
    const int64_t v[] = {INT64_MIN, INT64_MIN + 1, -1, 0, 1, INT64_MAX - 1, INT64_MAX,
                         (int64_t)1 << 32};
    return (uint64_t)v[k % 8];
  }
  default: { /* unsigned: 0, 1, the top, and both sides of the top bit */
    uint64_t top = pp_dtype_size(t) == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * pp_dtype_size(t))) - 1;
    uint64_t half = top / 2;
    const uint64_t v[] = {0, 1, top, top - 1, half, half + 1, 2, 255};
    return v[k % 8];
  }
  }
}

/* n keys of pattern p into out (host). */
static inline void gen_keys(pp_dtype t, int p, size_t n, th_rng *r, void *out) {
  const int bits = 8 * (int)pp_dtype_size(t);
  const uint64_t base = th_next(r);
  const uint64_t few[4] = {th_next(r), th_next(r), th_next(r), th_next(r)};
  const int flip_bit = bits - 1 - (int)th_below(r, 8);
  const uint64_t low_mask = bits == 64 ? (UINT64_C(1) << 56) - 1 : (UINT64_C(1) << (bits - 8)) - 1;
  for (size_t i = 0; i < n; i++) {
    uint64_t b;
    switch (p) {
    case P_DUPS: b = num_bits(t, is_float(t) ? ((double)th_below(r, 50) - 25) * 0.5
                                             : (double)th_below(r, 50) - 25); break;
    case P_EQUAL: b = base; break;
    case P_FEW: b = few[th_below(r, 4)]; break;
    case P_HIGH_BIT: b = th_below(r, 2) ? base ^ (UINT64_C(1) << flip_bit) : base; break;
    case P_TOP_BYTE: b = (base & low_mask) | (th_next(r) << (bits - 8)); break;
    case P_SPECIAL: b = special_bits(t, r); break;
    case P_ZEROS:
      b = is_float(t) ? (th_below(r, 2) ? num_bits(t, -0.0) : num_bits(t, 0.0)) : th_below(r, 2);
      break;
    case P_NANS:
      if (is_float(t) && th_below(r, 8) == 0)
        b = nan_bits(t, th_next(r));
      else
        b = num_bits(t, (double)th_below(r, 201) - 100.0);
      break;
    case P_HEAVY: b = th_below(r, 10) < 7 ? base : th_next(r); break;
    case P_SKEWED:
      if (is_float(t))
        b = num_bits(t, (th_below(r, 2) ? 1.0 : -1.0) * (th_unit(r) + 0.5) *
                            ldexp(1.0, -(int)th_below(r, 48)));
      else
        b = (th_next(r) >> (64 - bits)) >> th_below(r, (uint64_t)bits); /* leading zeros by chance */
      break;
    default: b = th_next(r); break; /* P_RANDOM, P_SORTED, P_REVERSED */
    }
    put_bits(t, out, i, b);
  }
  if (p == P_SORTED) ref_sort_inplace(t, PP_ASCENDING, out, n);
  if (p == P_REVERSED) ref_sort_inplace(t, PP_DESCENDING, out, n);
}

/* Values: an injective function of the index that uses every byte. */
static inline void gen_values(size_t vs, size_t n, void *out) {
  for (size_t i = 0; i < n; i++) {
    if (vs == 4) {
      uint32_t v = (uint32_t)i ^ UINT32_C(0xa5000000);
      memcpy((unsigned char *)out + 4 * i, &v, 4);
    } else {
      uint64_t v = ((uint64_t)i << 24) ^ UINT64_C(0x5a00000000000077) ^ (uint64_t)(i & 0xffffff);
      memcpy((unsigned char *)out + 8 * i, &v, 8);
    }
  }
}

static inline void fmt_key(pp_dtype t, const void *p, size_t i, char *buf, size_t len) {
  uint64_t b = get_bits(t, p, i);
  switch (t) {
  case PP_I32: snprintf(buf, len, "%" PRId32, (int32_t)(uint32_t)b); break;
  case PP_I64: snprintf(buf, len, "%" PRId64, (int64_t)b); break;
  case PP_F32: {
    float f;
    uint32_t u = (uint32_t)b;
    memcpy(&f, &u, 4);
    snprintf(buf, len, "%g (0x%08" PRIx32 ")", (double)f, u);
    break;
  }
  case PP_F64: {
    double d;
    memcpy(&d, &b, 8);
    snprintf(buf, len, "%g (0x%016" PRIx64 ")", d, b);
    break;
  }
  default: snprintf(buf, len, "%" PRIu64, b); break;
  }
}

/* ---- arrays in any kind of memory, with guards --------------------------------------- */

#define GUARD 16
#define SENT 0xC3

/* Where an array lives: host or pp_malloc memory, starting `lead` bytes into the
 * allocation (0: aligned, the element size: offset by one element, 1: misaligned), with
 * GUARD sentinel bytes after it and the lead bytes before it set to SENT. */
typedef struct placed {
  unsigned char *host; /* the whole image on the host */
  void *dev;           /* pp_malloc copy, or NULL */
  size_t lead, bytes, total;
} placed;

static inline placed place(pp_context *ctx, const void *data, size_t bytes, int dev,
                           size_t lead) {
  placed pl = {NULL, NULL, lead, bytes, lead + bytes + GUARD};
  pl.host = th_xmalloc(pl.total);
  memset(pl.host, SENT, pl.total);
  if (data && bytes) memcpy(pl.host + lead, data, bytes);
  if (dev) pl.dev = th_dev_from_host(ctx, pl.host, pl.total);
  return pl;
}

static inline void *placed_ptr(placed *pl) {
  return (unsigned char *)(pl->dev ? pl->dev : (void *)pl->host) + pl->lead;
}

/* Brings the image back to the host; returns 1 when the guards are intact. */
static inline int placed_fetch(pp_context *ctx, placed *pl) {
  if (pl->dev) th_copy(ctx, pl->host, pl->dev, pl->total);
  for (size_t i = 0; i < pl->lead; i++)
    if (pl->host[i] != SENT) return 0;
  for (size_t i = 0; i < GUARD; i++)
    if (pl->host[pl->lead + pl->bytes + i] != SENT) return 0;
  return 1;
}

static inline void placed_free(pp_context *ctx, placed *pl) {
  if (pl->dev) th_dev_free(ctx, pl->dev);
  free(pl->host);
}

/* mem: bit 0 keys in pp_malloc, bit 1 values in pp_malloc, bit 2 both offset by one
 * element, bit 3 keys misaligned by one byte (overrides bit 2 for the keys). */
static inline size_t lead_of(unsigned mem, size_t es, int keys) {
  if (keys && (mem & 8) && es > 1) return 1;
  return (mem & 4) ? es : 0;
}

static inline const char *mem_name(unsigned mem, char *buf, size_t len) {
  snprintf(buf, len, "keys %s%s, values %s%s", mem & 1 ? "pp_malloc" : "host",
           (mem & 8) ? " +1 byte" : (mem & 4) ? " +1 elem" : "", mem & 2 ? "pp_malloc" : "host",
           (mem & 4) ? " +1 elem" : "");
  return buf;
}


/* First index where got and want differ, or n. */
static inline size_t first_diff(const void *got, const void *want, size_t n, size_t es) {
  const unsigned char *g = got, *w = want;
  for (size_t i = 0; i < n; i++)
    if (memcmp(g + i * es, w + i * es, es) != 0) return i;
  return n;
}


#endif
