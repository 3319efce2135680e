/*
 * test_sort.c — pp_sort and pp_merge against serial references written here.
 *
 * Usage: test_sort [cpu|cuda]
 *
 * The reference states API.md's order directly, as a comparison of values: integers as
 * integers, floats as numbers with -0.0 == +0.0 and every NaN equal to every other NaN and
 * above +inf; descending is that comparison negated. The reference sort is a stable merge
 * sort of indices by it. Since pp_sort and pp_merge are stable, the expected output is
 * exact to the bit — which -0.0 or +0.0 comes first, where each NaN payload goes, and (the
 * values being an injective function of the original index) every value — so results are
 * compared byte for byte, keys-only sorts included.
 *
 * Every dtype x order x keys-only / 4-byte / 8-byte values x many sizes (around the
 * small-sort cut-off, radix digit and thread-part boundaries, the merge and sample sorts'
 * GPU tiles, 2^16, huge odd sizes) x data patterns (random bits, duplicates, sorted,
 * reversed, all equal, four values, one differing bit high up, only the top byte varying,
 * specials, signed zeros, NaNs, one heavy value, skewed magnitudes) goes through the
 * library with keys and values each in host or pp_malloc memory, aligned or offset by one
 * element (sometimes by one byte), with guard bytes around each array that must stay
 * untouched. Every input is sorted by every algorithm (AUTO, RADIX, MERGE, SAMPLE, QUICK)
 * against one reference. Inputs aimed at the sample sort's buckets (few distinct values,
 * one huge run of equal keys, heavy values, skew) run at sizes where it makes hundreds of
 * buckets, some larger than a GPU tile. Then pp_merge the same way, with ties across a and
 * b whose bits show which input came first, and the argument errors.
 *
 * Environment: PARPRIM_TEST_SORT_ALGOS=merge,sample (a comma list of auto, radix, merge,
 * sample, quick) limits the algorithms run; PARPRIM_TEST_SORT_THIN=k runs one in k of the
 * generated sort cases and leaves out the huge sizes and pp_merge (for compute-sanitizer).
 */
#include "harness.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>

static const pp_dtype all_types[] = {PP_U8, PP_I32, PP_U32, PP_I64, PP_U64, PP_F32, PP_F64};
#define N_TYPES (sizeof all_types / sizeof all_types[0])

static int is_float(pp_dtype t) { return t == PP_F32 || t == PP_F64; }
static const char *oname(pp_order o) { return o == PP_DESCENDING ? "desc" : "asc"; }

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
#define REF_TYPE(NAME, T, CMP)                                                              \
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

REF_TYPE(u8, uint8_t, CMP_INT)
REF_TYPE(i32, int32_t, CMP_INT)
REF_TYPE(u32, uint32_t, CMP_INT)
REF_TYPE(i64, int64_t, CMP_INT)
REF_TYPE(u64, uint64_t, CMP_INT)
REF_TYPE(f32, float, CMP_FLOAT)
REF_TYPE(f64, double, CMP_FLOAT)

/* a[i] against b[j] in order o: <0, 0, >0 */
static int ref_cmp_ord(pp_dtype t, pp_order o, const void *a, size_t i, const void *b,
                       size_t j) {
  int c = 0;
  switch (t) {
  case PP_U8: c = cmp_u8(a, i, b, j); break;
  case PP_I32: c = cmp_i32(a, i, b, j); break;
  case PP_U32: c = cmp_u32(a, i, b, j); break;
  case PP_I64: c = cmp_i64(a, i, b, j); break;
  case PP_U64: c = cmp_u64(a, i, b, j); break;
  case PP_F32: c = cmp_f32(a, i, b, j); break;
  case PP_F64: c = cmp_f64(a, i, b, j); break;
  }
  return o == PP_DESCENDING ? -c : c;
}

static void ref_sort_perm(pp_dtype t, pp_order o, const void *k, size_t n, size_t *idx) {
  int sgn = o == PP_DESCENDING ? -1 : 1;
  switch (t) {
  case PP_U8: ref_perm_u8(k, n, sgn, idx); break;
  case PP_I32: ref_perm_i32(k, n, sgn, idx); break;
  case PP_U32: ref_perm_u32(k, n, sgn, idx); break;
  case PP_I64: ref_perm_i64(k, n, sgn, idx); break;
  case PP_U64: ref_perm_u64(k, n, sgn, idx); break;
  case PP_F32: ref_perm_f32(k, n, sgn, idx); break;
  case PP_F64: ref_perm_f64(k, n, sgn, idx); break;
  }
}

static void permute(const void *in, const size_t *idx, size_t n, size_t es, void *out) {
  for (size_t i = 0; i < n; i++)
    memcpy((unsigned char *)out + i * es, (const unsigned char *)in + idx[i] * es, es);
}

/* In-place stable sort of host data by the reference (to build sorted inputs). */
static void ref_sort_inplace(pp_dtype t, pp_order o, void *k, size_t n) {
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

static void put_bits(pp_dtype t, void *p, size_t i, uint64_t bits) {
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

static uint64_t get_bits(pp_dtype t, const void *p, size_t i) {
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

static uint64_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static uint64_t f64_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

/* The bits of the number x in t (integers wrap into t). */
static uint64_t num_bits(pp_dtype t, double x) {
  if (t == PP_F32) return f32_bits((float)x);
  if (t == PP_F64) return f64_bits(x);
  return (uint64_t)(int64_t)x;
}

/* NaNs of both signs, quiet and signalling, with different payloads. */
static uint64_t nan_bits(pp_dtype t, uint64_t which) {
  static const uint32_t f[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff812345u,
                               0x7fffffffu, 0xffffffffu, 0x7fa00000u, 0x7fc0beefu};
  static const uint64_t d[] = {0x7ff8000000000000ull, 0xfff8000000000000ull,
                               0x7ff0000000000001ull, 0xfff0000012345678ull,
                               0x7fffffffffffffffull, 0xffffffffffffffffull,
                               0x7ff4000000000000ull, 0x7ff80000deadbeefull};
  return t == PP_F32 ? f[which % 8] : d[which % 8];
}

static uint64_t special_bits(pp_dtype t, th_rng *r) {
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
static void gen_keys(pp_dtype t, int p, size_t n, th_rng *r, void *out) {
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
static void gen_values(size_t vs, size_t n, void *out) {
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

static void fmt_key(pp_dtype t, const void *p, size_t i, char *buf, size_t len) {
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

static placed place(pp_context *ctx, const void *data, size_t bytes, int dev, size_t lead) {
  placed pl = {NULL, NULL, lead, bytes, lead + bytes + GUARD};
  pl.host = th_xmalloc(pl.total);
  memset(pl.host, SENT, pl.total);
  if (data && bytes) memcpy(pl.host + lead, data, bytes);
  if (dev) pl.dev = th_dev_from_host(ctx, pl.host, pl.total);
  return pl;
}

static void *placed_ptr(placed *pl) {
  return (unsigned char *)(pl->dev ? pl->dev : (void *)pl->host) + pl->lead;
}

/* Brings the image back to the host; returns 1 when the guards are intact. */
static int placed_fetch(pp_context *ctx, placed *pl) {
  if (pl->dev) th_copy(ctx, pl->host, pl->dev, pl->total);
  for (size_t i = 0; i < pl->lead; i++)
    if (pl->host[i] != SENT) return 0;
  for (size_t i = 0; i < GUARD; i++)
    if (pl->host[pl->lead + pl->bytes + i] != SENT) return 0;
  return 1;
}

static void placed_free(pp_context *ctx, placed *pl) {
  if (pl->dev) th_dev_free(ctx, pl->dev);
  free(pl->host);
}

/* mem: bit 0 keys in pp_malloc, bit 1 values in pp_malloc, bit 2 both offset by one
 * element, bit 3 keys misaligned by one byte (overrides bit 2 for the keys). */
static size_t lead_of(unsigned mem, size_t es, int keys) {
  if (keys && (mem & 8) && es > 1) return 1;
  return (mem & 4) ? es : 0;
}

static const char *mem_name(unsigned mem, char *buf, size_t len) {
  snprintf(buf, len, "keys %s%s, values %s%s", mem & 1 ? "pp_malloc" : "host",
           (mem & 8) ? " +1 byte" : (mem & 4) ? " +1 elem" : "", mem & 2 ? "pp_malloc" : "host",
           (mem & 4) ? " +1 elem" : "");
  return buf;
}

/* ---- one sort ------------------------------------------------------------------------ */

static long g_sorts, g_merges;

/* The algorithms every sort case runs through, and which of them run (PARPRIM_TEST_SORT_ALGOS). */
static const pp_sort_algo all_algos[] = {PP_SORT_AUTO, PP_SORT_RADIX, PP_SORT_MERGE, PP_SORT_SAMPLE,
                                         PP_SORT_QUICK};
static const char *const algo_names[] = {"auto", "radix", "merge", "sample", "quick"};
#define N_ALGOS (sizeof all_algos / sizeof all_algos[0])
static unsigned g_algo_mask = (1u << N_ALGOS) - 1;
/* PARPRIM_TEST_SORT_THIN: run one in g_thin generated cases, leave out the huge ones */
static unsigned g_thin = 1;
static unsigned long g_case;

static void read_test_env(void) {
  const char *e = getenv("PARPRIM_TEST_SORT_ALGOS");
  if (e && *e) {
    g_algo_mask = 0;
    for (size_t a = 0; a < N_ALGOS; a++) {
      const char *p = strstr(e, algo_names[a]);
      size_t len = strlen(algo_names[a]);
      if (p && (p == e || p[-1] == ',') && (p[len] == ',' || p[len] == 0)) g_algo_mask |= 1u << a;
    }
    printf("algorithms: %s\n", e);
  }
  e = getenv("PARPRIM_TEST_SORT_THIN");
  if (e && *e) {
    long k = strtol(e, NULL, 10);
    g_thin = k > 1 ? (unsigned)k : 1;
    printf("thinned: one in %u cases, no huge sizes, no pp_merge\n", g_thin);
  }
}

/* First index where got and want differ, or n. */
static size_t first_diff(const void *got, const void *want, size_t n, size_t es) {
  const unsigned char *g = got, *w = want;
  for (size_t i = 0; i < n; i++)
    if (memcmp(g + i * es, w + i * es, es) != 0) return i;
  return n;
}

/* Sorts a copy of keys (and values) with one algorithm and compares the result with
 * want_k / want_v bit for bit. Returns 1 when it matched. */
static int check_sort_algo(pp_context *ctx, pp_dtype t, size_t vs, pp_order ord, size_t ai,
                           const void *keys, const void *vals, const void *want_k,
                           const void *want_v, size_t n, unsigned mem, const char *what) {
  const size_t es = pp_dtype_size(t);
  const pp_sort_algo algo = all_algos[ai];
  char mbuf[96], a[80] = "", b[80] = "";
  mem_name(mem, mbuf, sizeof mbuf);
  placed pk = place(ctx, keys, n * es, mem & 1, lead_of(mem, es, 1));
  placed pv = place(ctx, vals, n * vs, (mem & 2) != 0, lead_of(mem, vs, 0));
  pp_sort_opts opts = {ord, algo};
  /* opts NULL means ascending, AUTO: use it for every other such call */
  const pp_sort_opts *op = (ord == PP_ASCENDING && algo == PP_SORT_AUTO && (g_sorts & 1)) ? NULL : &opts;
  th_poison_error(ctx);
  pp_status s = pp_sort(ctx, t, placed_ptr(&pk), vs ? placed_ptr(&pv) : NULL, vs, n, op);
  g_sorts++;
  int ok = CHECK(s == PP_OK, "pp_sort %s %s vs=%zu n=%zu %s algo %s (%s): %s: %s",
                 pp_dtype_string(t), oname(ord), vs, n, what, algo_names[ai], mbuf,
                 pp_status_string(s), pp_last_error(ctx));
  if (ok) {
    int gk = placed_fetch(ctx, &pk), gv = placed_fetch(ctx, &pv);
    ok &= CHECK(gk && gv, "pp_sort %s %s vs=%zu n=%zu %s algo %s (%s): wrote outside the %s array",
                pp_dtype_string(t), oname(ord), vs, n, what, algo_names[ai], mbuf,
                gk ? "values" : "keys");
    size_t dk = first_diff(pk.host + pk.lead, want_k, n, es);
    if (dk < n) {
      fmt_key(t, pk.host + pk.lead, dk, a, sizeof a);
      fmt_key(t, want_k, dk, b, sizeof b);
    }
    ok &= CHECK(dk == n, "pp_sort %s %s vs=%zu n=%zu %s algo %s (%s): key %zu is %s, want %s",
                pp_dtype_string(t), oname(ord), vs, n, what, algo_names[ai], mbuf, dk, a, b);
    if (vs) {
      size_t dv = first_diff(pv.host + pv.lead, want_v, n, vs);
      ok &= CHECK(dv == n,
                  "pp_sort %s %s vs=%zu n=%zu %s algo %s (%s): value %zu is 0x%" PRIx64
                  ", want 0x%" PRIx64 " (order of equal keys, or values not moved with keys)",
                  pp_dtype_string(t), oname(ord), vs, n, what, algo_names[ai], mbuf, dv,
                  dv < n ? get_bits(vs == 4 ? PP_U32 : PP_U64, pv.host + pv.lead, dv) : 0,
                  dv < n ? get_bits(vs == 4 ? PP_U32 : PP_U64, want_v, dv) : 0);
    }
  }
  placed_free(ctx, &pk);
  placed_free(ctx, &pv);
  return ok;
}

/* Sorts keys (and generated values) with every algorithm selected and compares each result
 * with the reference, bit for bit; the arrays' placement (mem) turns with the algorithm.
 * Returns 1 when all matched. */
static int check_sort(pp_context *ctx, pp_dtype t, size_t vs, pp_order ord, const void *keys,
                      size_t n, unsigned mem, const char *what) {
  const size_t es = pp_dtype_size(t);
  void *vals = vs ? th_xmalloc(n * vs) : NULL;
  if (vs) gen_values(vs, n, vals);
  size_t *idx = th_xmalloc(n * sizeof *idx);
  ref_sort_perm(t, ord, keys, n, idx);
  void *want_k = th_xmalloc(n * es), *want_v = vs ? th_xmalloc(n * vs) : NULL;
  permute(keys, idx, n, es, want_k);
  if (vs) permute(vals, idx, n, vs, want_v);
  int ok = 1;
  for (size_t ai = 0; ai < N_ALGOS; ai++)
    if (g_algo_mask & (1u << ai))
      ok &= check_sort_algo(ctx, t, vs, ord, ai, keys, vals, want_k, want_v, n,
                            (mem + 3 * (unsigned)ai) % 16, what);
  free(idx);
  free(want_k);
  free(want_v);
  free(vals);
  return ok;
}

static int sort_pattern(pp_context *ctx, pp_dtype t, size_t vs, pp_order ord, int p, size_t n,
                        unsigned mem, uint64_t stream) {
  if (g_case++ % g_thin != 0) return 1;
  th_rng r = th_rng_make(stream);
  void *keys = th_xmalloc(n * pp_dtype_size(t));
  gen_keys(t, p, n, &r, keys);
  int ok = check_sort(ctx, t, vs, ord, keys, n, mem, pattern_names[p]);
  free(keys);
  return ok;
}

static const size_t vsizes[3] = {0, 4, 8};

/* Sizes around the small-sort cut-offs, powers of two and the digit counts; every dtype,
 * order, value width, pattern. */
static void test_sort_small(pp_context *ctx) {
  static const size_t sizes[] = {0,    1,    2,    3,    4,    15,   16,   17,   31,   32,
                                 33,   63,   64,   65,   127,  128,  129,  255,  256,  257,
                                 511,  512,  513,  1023, 1024, 1025, 2047, 2048, 2049, 4095,
                                 4096, 4097};
  unsigned mem = 0;
  uint64_t stream = 1;
  for (size_t ti = 0; ti < N_TYPES; ti++)
    for (int o = 0; o < 2; o++)
      for (int v = 0; v < 3; v++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
          for (int p = 0; p < N_PATTERNS; p++) {
            if (sizes[si] > 300 && (p + (int)si + v) % 3 != 0) continue; /* time */
            sort_pattern(ctx, all_types[ti], vsizes[v], (pp_order)o, p, sizes[si], mem++ % 16,
                         stream++);
          }
}

/* Around 2^16, where the CPU backend starts using threads, across thread parts, and at
 * sizes a GPU tile of 2^12 .. 2^15 keys does not divide. */
static void test_sort_medium(pp_context *ctx) {
  static const size_t sizes[] = {65535, 65536, 65537, 100003, 8191, 12289, 16385, 32769, 262147};
  unsigned mem = 3;
  uint64_t stream = 100000;
  for (size_t ti = 0; ti < N_TYPES; ti++)
    for (int o = 0; o < 2; o++)
      for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int p = 0; p < N_PATTERNS; p++) {
          if (si != 2 && p != (int)(si + 3 * ti + 5 * o) % N_PATTERNS) continue; /* time */
          size_t vs = vsizes[(stream + ti) % 3];
          sort_pattern(ctx, all_types[ti], vs, (pp_order)o, p, sizes[si], mem++ % 16, stream++);
        }
}

/* Around the GPU merge and sample sorts' chunks and merge tiles (chunks of 512 x 33 = 16896
 * four-byte keys, 1024 x 33 = 33792 in the merge sort of 4-byte keys alone, 512 x 17 = 8704
 * one- or eight-byte keys, 512 x 11 = 5632 with 4-byte values, 512 x 9 = 4608 with any
 * 8-byte member; merge tiles are 256 x the items): one tile, one more, two and a bit, and
 * odd tile counts whose merge rounds leave a run without a partner. */
static void test_sort_tiles(pp_context *ctx) {
  static const size_t sizes[] = {4351,  4353,  4607,  4608,  4609,  5631,  5632,  5633,
                                 8447,  8448,  8449,  8703,  8704,  8705,  9217,  11265,
                                 16895, 16896, 16897, 17409, 23047, 26111, 33791, 33792,
                                 33793, 60933, 67585, 73217};
  unsigned mem = 5;
  uint64_t stream = 150000;
  for (size_t ti = 0; ti < N_TYPES; ti++)
    for (int o = 0; o < 2; o++)
      for (int v = 0; v < 3; v++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
          /* two patterns per case, turning through all of them */
          const int p0 = (int)(si * 2 + ti * 3 + (size_t)v * 5 + (size_t)o) % N_PATTERNS;
          for (int k = 0; k < 2; k++)
            sort_pattern(ctx, all_types[ti], vsizes[v], (pp_order)o, (p0 + 7 * k) % N_PATTERNS,
                         sizes[si], mem++ % 16, stream++);
        }
}

/* Inputs aimed at the sample sort's buckets, at sizes where it makes hundreds of buckets and
 * some of them exceed a GPU tile: few distinct values and byte keys (equality buckets),
 * one value everywhere (all splitters equal), one huge run of equal keys in the middle of
 * random ones, a heavy value at random places, skewed magnitudes, sorted and reversed
 * input (every sample in order). */
static void test_sort_buckets(pp_context *ctx) {
  static const struct {
    pp_dtype t;
    size_t vs;
    pp_order o;
    int p; /* N_PATTERNS: random keys with a run of 60% equal ones in the middle */
    size_t n;
  } cases[] = {
      {PP_U32, 0, PP_ASCENDING, P_FEW, 3 * ((size_t)1 << 20) + 17},
      {PP_U32, 4, PP_DESCENDING, P_EQUAL, 3 * ((size_t)1 << 20) + 1},
      {PP_F32, 0, PP_ASCENDING, N_PATTERNS, 3 * ((size_t)1 << 20) + 5},
      {PP_F64, 8, PP_DESCENDING, N_PATTERNS, ((size_t)3 << 19) + 9},
      {PP_I64, 8, PP_DESCENDING, P_HEAVY, ((size_t)3 << 19) + 11},
      {PP_U8, 4, PP_ASCENDING, P_RANDOM, ((size_t)2 << 20) + 3},
      {PP_F64, 0, PP_ASCENDING, P_SKEWED, ((size_t)2 << 20) + 7},
      {PP_I32, 0, PP_ASCENDING, P_SKEWED, 3 * ((size_t)1 << 20) + 3},
      {PP_U32, 0, PP_ASCENDING, P_SORTED, 3 * ((size_t)1 << 20) + 17},
      {PP_F32, 4, PP_DESCENDING, P_REVERSED, ((size_t)5 << 19) + 1},
      {PP_F32, 0, PP_DESCENDING, P_NANS, ((size_t)5 << 19) + 3},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const size_t n = cases[i].n, es = pp_dtype_size(cases[i].t);
    th_rng r = th_rng_make(250000 + i);
    unsigned char *keys = th_xmalloc(n * es);
    const int run = cases[i].p == N_PATTERNS;
    gen_keys(cases[i].t, run ? P_DUPS : cases[i].p, n, &r, keys);
    if (run) {
      /* the run's key is one of the others too, so it also falls between splitters */
      for (size_t j = n / 5; j < n / 5 + 3 * n / 5; j++) memcpy(keys + j * es, keys, es);
    }
    check_sort(ctx, cases[i].t, cases[i].vs, cases[i].o, keys, n, (unsigned)(i * 7) % 16,
               run ? "run of 60% equal keys" : pattern_names[cases[i].p]);
    free(keys);
  }
}

/* Huge odd sizes for a few types, value widths and patterns. */
static void test_sort_large(pp_context *ctx) {
  static const struct {
    pp_dtype t;
    size_t vs;
    pp_order o;
    int p;
    size_t n;
  } cases[] = {
      {PP_U32, 4, PP_ASCENDING, P_RANDOM, ((size_t)1 << 20) + 3},
      {PP_F32, 0, PP_DESCENDING, P_SPECIAL, ((size_t)1 << 20) + 3},
      {PP_I64, 8, PP_ASCENDING, P_FEW, ((size_t)1 << 20) + 3},
      {PP_F64, 4, PP_DESCENDING, P_NANS, ((size_t)1 << 20) + 3},
      {PP_U8, 8, PP_DESCENDING, P_RANDOM, ((size_t)1 << 20) + 3},
      {PP_U32, 4, PP_DESCENDING, P_DUPS, 3 * ((size_t)1 << 20) + 17},
      {PP_F32, 0, PP_ASCENDING, P_RANDOM, 3 * ((size_t)1 << 20) + 17},
      /* 4-byte keys alone: the GPU merge sort's chunks of 1024 x 33 keys, just over 8 (four
         rounds) and just under 17 (five) of them; it takes them once they fill half a wave
         of one block per SM, so also just over 137 and just under 263 (up to 526 SMs) */
      {PP_U32, 0, PP_DESCENDING, P_DUPS, 8 * (size_t)33792 + 5},
      {PP_I32, 0, PP_ASCENDING, P_RANDOM, 17 * (size_t)33792 - 1},
      {PP_U32, 0, PP_ASCENDING, P_RANDOM, 137 * (size_t)33792 + 5},
      {PP_F32, 0, PP_DESCENDING, P_DUPS, 263 * (size_t)33792 - 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    sort_pattern(ctx, cases[i].t, cases[i].vs, cases[i].o, cases[i].p, cases[i].n,
                 (unsigned)(i * 5) % 8, 200000 + i);
}

/* Pair sorts with 4-byte keys and 4-byte values at a size where the CUDA radix sort packs
 * each pair into one 8-byte word between its first and last pass (3 x 2^23 pairs on: the
 * sizes below it are the other tests'), with keys in which only some bytes vary, so that
 * it makes 2, 3 or 4 passes (first and last alone, one or two passes between); and keys of
 * any bits (-0.0 and NaNs among floats: not packed). Values are the original indices, so
 * the result is checked exactly in one pass over it: keys in order, each key the one its
 * value came with, the values a permutation, equal keys in the order of their values. */
static void test_sort_packed_pairs(pp_context *ctx) {
  if (pp_backend_of(ctx) != PP_BACKEND_CUDA) return; /* the packing is the GPU sort's */
  static const struct {
    pp_dtype t;
    pp_order o;
    uint32_t vary; /* the bits that vary; the others keep a base value's */
  } cases[] = {
      {PP_U32, PP_ASCENDING, 0x00ff00ffu},  /* 2 passes */
      {PP_F32, PP_DESCENDING, 0xff00ff00u}, /* 2 passes, both signs */
      {PP_I32, PP_DESCENDING, 0x7fff00ffu}, /* 3 passes, the digits at 0, 2, 3 */
      {PP_F32, PP_ASCENDING, 0x00ffff00u},  /* 2 passes */
      {PP_U32, PP_DESCENDING, 0xffffff00u}, /* 3 passes */
      {PP_I32, PP_ASCENDING, 0xffffffffu},  /* 4 passes */
      {PP_F32, PP_DESCENDING, 0xffffffffu}, /* any bits: NaNs, -0.0 */
  };
  const size_t n = ((size_t)3 << 23) + 5;
  uint32_t *orig = th_xmalloc(n * sizeof *orig), *k = th_xmalloc(n * sizeof *k);
  uint32_t *v = th_xmalloc(n * sizeof *v);
  unsigned char *seen = th_xmalloc(n);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const pp_dtype t = cases[c].t;
    const pp_order o = cases[c].o;
    const uint32_t vary = cases[c].vary;
    th_rng r = th_rng_make(300000 + c);
    /* floats: a base of 1.5, and a varying exponent byte is kept below all ones (no NaN
       or infinity) unless every bit varies */
    const uint32_t base = t == PP_F32 ? 0x3fc00000u : (uint32_t)th_next(&r);
    for (size_t i = 0; i < n; i++) {
      uint32_t x = (base & ~vary) | ((uint32_t)th_next(&r) & vary);
      if (t == PP_F32 && vary != 0xffffffffu && (x & 0x7f800000u) == 0x7f800000u) x ^= 0x00800000u;
      orig[i] = x;
      k[i] = x;
      v[i] = (uint32_t)i;
    }
    if (t == PP_F32 && vary == 0xffffffffu) { /* surely some -0.0 and NaNs */
      orig[n / 3] = k[n / 3] = 0x80000000u;
      orig[n / 2] = k[n / 2] = 0x7fc00001u;
      orig[n / 2 + 1] = k[n / 2 + 1] = 0xffc00000u;
    }
    void *dk = th_dev_from_host(ctx, k, n * 4), *dv = th_dev_from_host(ctx, v, n * 4);
    pp_sort_opts opts = {o, PP_SORT_RADIX};
    pp_status s = pp_sort(ctx, t, dk, dv, 4, n, &opts);
    if (s == PP_OK) s = pp_synchronize(ctx);
    if (s == PP_OK) {
      th_copy(ctx, k, dk, n * 4);
      th_copy(ctx, v, dv, n * 4);
    }
    th_dev_free(ctx, dk);
    th_dev_free(ctx, dv);
    memset(seen, 0, n);
    size_t bad = n, why = 0;
    static const char *whys[] = {"", "values not a permutation", "key not its value's", "keys out of order",
                                 "equal keys out of input order"};
    for (size_t i = 0; i < n && s == PP_OK && bad == n; i++) {
      const int c = i > 0 ? ref_cmp_ord(t, o, k, i - 1, k, i) : -1; /* the order of API.md */
      why = v[i] >= n || seen[v[i]]     ? 1
            : k[i] != orig[v[i]]        ? 2
            : c > 0                     ? 3
            : c == 0 && v[i - 1] > v[i] ? 4
                                        : 0;
      if (why) bad = i;
      else seen[v[i]] = 1;
    }
    CHECK(s == PP_OK && bad == n, "pp_sort %s %s pairs n=%zu, bits 0x%08x vary: %s%s at %zu", pp_dtype_string(t),
          oname(o), n, (unsigned)vary, pp_status_string(s), whys[why], bad);
    g_sorts++;
  }
  free(orig);
  free(k);
  free(v);
  free(seen);
}

/* Targeted cases whose right answer is written out by hand, so that a reference sharing
 * a misreading of API.md with the library cannot hide it. */
static void test_sort_exact(pp_context *ctx) {
  /* floats: NaN last ascending and first descending, -0.0 and +0.0 in input order */
  const float nan_p = (float)NAN, inf = (float)INFINITY;
  float in[8] = {1.0f, -0.0f, nan_p, -inf, 0.0f, inf, -nan_p, -1.0f};
  uint32_t vals[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  const uint32_t want_asc[8] = {3, 7, 1, 4, 0, 5, 2, 6}, want_desc[8] = {2, 6, 5, 0, 1, 4, 7, 3};
  for (size_t ai = 0; ai < N_ALGOS; ai++)
    for (int o = 0; o < 2 && (g_algo_mask & (1u << ai)); o++) {
      float k[8];
      uint32_t v[8];
      memcpy(k, in, sizeof k);
      memcpy(v, vals, sizeof v);
      pp_sort_opts opts = {(pp_order)o, all_algos[ai]};
      pp_status s = pp_sort(ctx, PP_F32, k, v, 4, 8, &opts);
      const uint32_t *want = o ? want_desc : want_asc;
      int same = s == PP_OK;
      for (int i = 0; i < 8 && same; i++)
        same = v[i] == want[i] && memcmp(&k[i], &in[want[i]], 4) == 0;
      CHECK(same,
            "pp_sort f32 {1,-0,NaN,-inf,+0,inf,-NaN,-1} %s algo %s: %s, order %u %u %u %u %u %u %u %u",
            oname((pp_order)o), algo_names[ai], pp_status_string(s), v[0], v[1], v[2], v[3], v[4],
            v[5], v[6], v[7]);
    }
  for (size_t ai = 0; ai < N_ALGOS; ai++) {
    if (!(g_algo_mask & (1u << ai))) continue;
    const pp_sort_algo algo = all_algos[ai];
    const char *an = algo_names[ai];
    /* signed integers: INT_MIN first, descending stable */
    int64_t k64[6] = {5, INT64_MIN, -1, INT64_MAX, 5, 0};
    uint64_t v64[6] = {10, 11, 12, 13, 14, 15};
    pp_sort_opts desc = {PP_DESCENDING, algo}, asc = {PP_ASCENDING, algo};
    pp_status s = pp_sort(ctx, PP_I64, k64, v64, 8, 6, &desc);
    CHECK(s == PP_OK && k64[0] == INT64_MAX && k64[1] == 5 && v64[1] == 10 && k64[2] == 5 &&
              v64[2] == 14 && k64[3] == 0 && k64[4] == -1 && k64[5] == INT64_MIN,
          "pp_sort i64 desc {5, MIN, -1, MAX, 5, 0} algo %s: %s, got %" PRId64 " %" PRId64
          "/%" PRIu64 " %" PRId64 "/%" PRIu64 " %" PRId64 " %" PRId64 " %" PRId64,
          an, pp_status_string(s), k64[0], k64[1], v64[1], k64[2], v64[2], k64[3], k64[4], k64[5]);
    /* u64 keys differing only above bit 56, large enough for the threaded path and several
       GPU tiles */
    size_t n = 70001;
    uint64_t *u = th_xmalloc(n * sizeof *u);
    for (size_t i = 0; i < n; i++) u[i] = ((uint64_t)((i * 37) % 256) << 56) | UINT64_C(0x00ffffffffffffff);
    s = pp_sort(ctx, PP_U64, u, NULL, 0, n, &asc);
    int sorted = s == PP_OK;
    for (size_t i = 1; i < n && sorted; i++) sorted = u[i - 1] <= u[i];
    CHECK(sorted && u[0] == UINT64_C(0x00ffffffffffffff) && u[n - 1] == UINT64_MAX,
          "pp_sort u64 keys differing above bit 56 algo %s: %s, sorted %d", an,
          pp_status_string(s), sorted);
    free(u);
    /* values NULL: value_size is not looked at */
    uint32_t k3[3] = {3, 1, 2};
    s = pp_sort(ctx, PP_U32, k3, NULL, 3, 3, &asc);
    CHECK(s == PP_OK && k3[0] == 1 && k3[1] == 2 && k3[2] == 3,
          "pp_sort keys only with value_size 3 algo %s: %s", an, pp_status_string(s));
  }
}

/* ---- merge --------------------------------------------------------------------------- */

static int check_merge(pp_context *ctx, pp_dtype t, pp_order ord, const void *a, size_t na,
                       const void *b, size_t nb, unsigned mem, const char *what) {
  const size_t es = pp_dtype_size(t), n = na + nb;
  char mbuf[64], x[80] = "", y[80] = "";
  snprintf(mbuf, sizeof mbuf, "a %s, b %s, out %s%s", mem & 1 ? "pp_malloc" : "host",
           mem & 2 ? "pp_malloc" : "host", mem & 1 ? "host" : "pp_malloc",
           (mem & 4) ? ", all +1 elem" : "");
  unsigned char *want = th_xmalloc(n * es);
  size_t i = 0, j = 0, d = 0;
  while (i < na && j < nb) {
    if (ref_cmp_ord(t, ord, b, j, a, i) < 0)
      memcpy(want + es * d++, (const unsigned char *)b + es * j++, es);
    else
      memcpy(want + es * d++, (const unsigned char *)a + es * i++, es);
  }
  if (i < na) memcpy(want + es * d, (const unsigned char *)a + es * i, (na - i) * es);
  d += na - i;
  if (j < nb) memcpy(want + es * d, (const unsigned char *)b + es * j, (nb - j) * es);

  size_t lead = (mem & 4) ? es : 0;
  placed pa = place(ctx, a, na * es, mem & 1, lead);
  placed pb = place(ctx, b, nb * es, (mem & 2) != 0, lead);
  placed po = place(ctx, NULL, n * es, !(mem & 1), lead);
  th_poison_error(ctx);
  pp_status s = pp_merge(ctx, t, placed_ptr(&pa), na, placed_ptr(&pb), nb, placed_ptr(&po), ord);
  g_merges++;
  int ok = CHECK(s == PP_OK, "pp_merge %s %s na=%zu nb=%zu %s (%s): %s: %s", pp_dtype_string(t),
                 oname(ord), na, nb, what, mbuf, pp_status_string(s), pp_last_error(ctx));
  if (ok) {
    int ga = placed_fetch(ctx, &pa), gb = placed_fetch(ctx, &pb), go = placed_fetch(ctx, &po);
    ok &= CHECK(go, "pp_merge %s %s na=%zu nb=%zu %s (%s): wrote outside out",
                pp_dtype_string(t), oname(ord), na, nb, what, mbuf);
    ok &= CHECK(ga && gb && memcmp(pa.host + lead, a, na * es) == 0 &&
                    memcmp(pb.host + lead, b, nb * es) == 0,
                "pp_merge %s %s na=%zu nb=%zu %s (%s): changed an input", pp_dtype_string(t),
                oname(ord), na, nb, what, mbuf);
    size_t dk = first_diff(po.host + lead, want, n, es);
    if (dk < n) {
      fmt_key(t, po.host + lead, dk, x, sizeof x);
      fmt_key(t, want, dk, y, sizeof y);
    }
    ok &= CHECK(dk == n, "pp_merge %s %s na=%zu nb=%zu %s (%s): out[%zu] is %s, want %s",
                pp_dtype_string(t), oname(ord), na, nb, what, mbuf, dk, x, y);
  }
  placed_free(ctx, &pa);
  placed_free(ctx, &pb);
  placed_free(ctx, &po);
  free(want);
  return ok;
}

/* a and b of pattern p, each sorted in ord. */
static void merge_pattern(pp_context *ctx, pp_dtype t, pp_order ord, int p, size_t na,
                          size_t nb, unsigned mem, uint64_t stream) {
  th_rng r = th_rng_make(stream);
  const size_t es = pp_dtype_size(t);
  unsigned char *a = th_xmalloc(na * es), *b = th_xmalloc(nb * es);
  gen_keys(t, p == P_SORTED || p == P_REVERSED ? P_RANDOM : p, na, &r, a);
  gen_keys(t, p == P_SORTED || p == P_REVERSED ? P_RANDOM : p, nb, &r, b);
  if (p == P_SORTED || p == P_REVERSED) {
    /* disjoint ranges: all of a before all of b (sorted) or after it (reversed) */
    unsigned char *all = th_xmalloc((na + nb) * es);
    memcpy(all, a, na * es);
    memcpy(all + na * es, b, nb * es);
    ref_sort_inplace(t, ord, all, na + nb);
    if (p == P_SORTED) {
      memcpy(a, all, na * es);
      memcpy(b, all + na * es, nb * es);
    } else {
      memcpy(b, all, nb * es);
      memcpy(a, all + nb * es, na * es);
    }
    free(all);
  }
  ref_sort_inplace(t, ord, a, na);
  ref_sort_inplace(t, ord, b, nb);
  check_merge(ctx, t, ord, a, na, b, nb, mem, pattern_names[p]);
  free(a);
  free(b);
}

static void test_merge(pp_context *ctx) {
  static const size_t sizes[][2] = {
      {0, 0},         {0, 1},      {1, 0},         {0, 100},      {100, 0},
      {1, 1},         {2, 3},      {31, 33},       {32, 32},      {255, 257},
      {1000, 1},      {1, 1000},   {4097, 4095},   {65536, 0},    {0, 65537},
      {65535, 65537}, {150000, 7}, {7, 150000},    {100003, 99999}};
  unsigned mem = 0;
  uint64_t stream = 300000;
  for (size_t ti = 0; ti < N_TYPES; ti++)
    for (int o = 0; o < 2; o++)
      for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int p = 0; p < N_PATTERNS; p++) {
          size_t n = sizes[si][0] + sizes[si][1];
          if (n > 5000 && p != (int)(si + 3 * ti + 5 * o) % N_PATTERNS) continue; /* time */
          merge_pattern(ctx, all_types[ti], (pp_order)o, p, sizes[si][0], sizes[si][1],
                        mem++ % 8, stream++);
        }
  /* large and odd, over many thread parts */
  merge_pattern(ctx, PP_U32, PP_ASCENDING, P_RANDOM, ((size_t)1 << 20) + 3, 777777, 1, stream++);
  merge_pattern(ctx, PP_F64, PP_DESCENDING, P_NANS, 3 * ((size_t)1 << 18) + 17, 1 << 18, 6,
                stream++);
  /* the GPU's partition kernel (over two tiles per SM of 512 x 17 one- and four-byte keys):
     ties everywhere, runs of very different lengths, sizes no sample interval divides */
  merge_pattern(ctx, PP_F32, PP_ASCENDING, P_DUPS, 2500000, 700001, 3, stream++);
  merge_pattern(ctx, PP_I32, PP_DESCENDING, P_EQUAL, 1500007, 1500001, 4, stream++);
  merge_pattern(ctx, PP_U32, PP_ASCENDING, P_RANDOM, 5, 3000000, 1, stream++);
  merge_pattern(ctx, PP_F32, PP_DESCENDING, P_NANS, 3000017, 3, 2, stream++);
  merge_pattern(ctx, PP_U8, PP_DESCENDING, P_FEW, 2000000, 1000003, 7, stream++);
}

/* CUDA: merges of 2^26 keys and more, where the partition kernel's searches start on
 * samples of a and b: ties across a and b whose bits differ (-0.0 in a, +0.0 in b: a's
 * first), a descending run against a short one, and a short run against a long one.
 * The inputs are sorted by construction. */
static void test_merge_large(pp_context *ctx) {
  if (pp_backend_of(ctx) != PP_BACKEND_CUDA) return; /* the sampled partition is the GPU's */
  const size_t big = ((size_t)1 << 25) + 3;
  float *fa = th_xmalloc(big * 4), *fb = th_xmalloc((big - 2) * 4);
  for (size_t i = 0; i < big; i++) fa[i] = i < 3 ? -0.0f : (float)(i / 3);
  for (size_t j = 0; j < big - 2; j++) fb[j] = (float)(j / 2);
  check_merge(ctx, PP_F32, PP_ASCENDING, fa, big, fb, big - 2, 1, "ties across a and b, -0.0 in a");
  free(fa);
  free(fb);
  const size_t na = ((size_t)1 << 26) + 9, nb = 1000;
  int32_t *ia = th_xmalloc(na * 4), *ib = th_xmalloc(nb * 4);
  for (size_t i = 0; i < na; i++) ia[i] = (int32_t)(1000000000 - (int64_t)(i * 29));
  for (size_t j = 0; j < nb; j++) ib[j] = (int32_t)(1000000000 - (int64_t)(j * 2000003));
  check_merge(ctx, PP_I32, PP_DESCENDING, ia, na, ib, nb, 2, "a long descending run against a short one");
  check_merge(ctx, PP_I32, PP_DESCENDING, ib, nb, ia, na, 4, "a short descending run against a long one");
  free(ia);
  free(ib);
}

/* Ties across a and b whose bits differ: a's copies must all come before b's. */
static void test_merge_ties(pp_context *ctx) {
  static const size_t sizes[][2] = {{1, 1}, {5, 3}, {100, 1000}, {70001, 70003}, {1, 200000}};
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
    size_t na = sizes[si][0], nb = sizes[si][1];
    for (int o = 0; o < 2; o++)
      for (int ft = 0; ft < 2; ft++) {
        pp_dtype t = ft ? PP_F64 : PP_F32;
        for (int kind = 0; kind < 4; kind++) {
          /* 0: a -0.0, b +0.0; 1: a +0.0, b -0.0; 2, 3: NaNs of two payloads, swapped */
          uint64_t ba = kind == 0   ? num_bits(t, -0.0)
                        : kind == 1 ? num_bits(t, 0.0)
                                    : nan_bits(t, (uint64_t)kind + 1);
          uint64_t bb = kind == 0   ? num_bits(t, 0.0)
                        : kind == 1 ? num_bits(t, -0.0)
                                    : nan_bits(t, (uint64_t)kind + 3);
          unsigned char *a = th_xmalloc(na * 8), *b = th_xmalloc(nb * 8);
          /* a few numbers on either side so the tie sits in the middle of the merge */
          for (size_t i = 0; i < na; i++) put_bits(t, a, i, ba);
          for (size_t i = 0; i < nb; i++) put_bits(t, b, i, bb);
          if (na > 4 && kind < 2) {
            put_bits(t, a, 0, num_bits(t, o ? 5.0 : -5.0));
            put_bits(t, a, na - 1, num_bits(t, o ? -5.0 : 5.0));
          }
          if (nb > 4 && kind < 2) {
            put_bits(t, b, 0, num_bits(t, o ? 7.0 : -7.0));
            put_bits(t, b, nb - 1, num_bits(t, o ? -3.0 : 3.0));
          }
          char what[64];
          snprintf(what, sizeof what, "ties across a and b (kind %d)", kind);
          check_merge(ctx, t, (pp_order)o, a, na, b, nb, (unsigned)(si + kind) % 8, what);
          free(a);
          free(b);
        }
      }
  }
}

/* ---- argument errors and algorithms ------------------------------------------------- */

static void check_usable(pp_context *ctx, const char *after) {
  int32_t k[4] = {3, -1, 2, -1};
  uint32_t v[4] = {0, 1, 2, 3};
  pp_status s = pp_sort(ctx, PP_I32, k, v, 4, 4, NULL);
  CHECK(s == PP_OK && k[0] == -1 && v[0] == 1 && k[1] == -1 && v[1] == 3 && k[3] == 3,
        "after %s: pp_sort {3,-1,2,-1}: %s (%s)", after, pp_status_string(s), pp_last_error(ctx));
}

static void bad_sort(pp_context *ctx, pp_context *use, pp_dtype t, int keys_null, int vals,
                     size_t vs, size_t n, const pp_sort_opts *opts, pp_status want,
                     const char *what) {
  uint64_t k[8] = {9, 3, 7, 1, 8, 2, 6, 4}, kc[8];
  uint64_t v[8] = {0, 1, 2, 3, 4, 5, 6, 7}, vc[8];
  memcpy(kc, k, sizeof k);
  memcpy(vc, v, sizeof v);
  th_poison_error(ctx);
  pp_status s = pp_sort(use, t, keys_null ? NULL : k, vals ? v : NULL, vs, n, opts);
  CHECK_STATUS(s, want, "pp_sort with %s", what);
  if (use)
    CHECK(th_names(pp_last_error(ctx), "pp_sort"), "pp_sort with %s: pp_last_error is \"%s\"",
          what, pp_last_error(ctx));
  CHECK(memcmp(k, kc, sizeof k) == 0 && memcmp(v, vc, sizeof v) == 0,
        "pp_sort with %s: wrote to keys or values", what);
  check_usable(ctx, what);
}

static void test_args(pp_context *ctx) {
  pp_sort_opts asc = {PP_ASCENDING, PP_SORT_AUTO};
  pp_sort_opts bad_order = {(pp_order)2, PP_SORT_AUTO}, neg_order = {(pp_order)-1, PP_SORT_AUTO};
  pp_sort_opts bad_algo = {PP_ASCENDING, (pp_sort_algo)5};
  bad_sort(ctx, NULL, PP_U32, 0, 0, 0, 8, &asc, PP_ERR_INVALID_ARGUMENT, "NULL ctx");
  bad_sort(ctx, ctx, (pp_dtype)7, 0, 0, 0, 8, &asc, PP_ERR_INVALID_ARGUMENT, "dtype 7");
  bad_sort(ctx, ctx, PP_U32, 1, 0, 0, 8, &asc, PP_ERR_INVALID_ARGUMENT, "keys NULL");
  bad_sort(ctx, ctx, PP_U32, 0, 1, 5, 8, &asc, PP_ERR_INVALID_ARGUMENT, "value_size 5");
  bad_sort(ctx, ctx, PP_U64, 0, 1, 0, 8, &asc, PP_ERR_INVALID_ARGUMENT, "value_size 0");
  bad_sort(ctx, ctx, PP_U32, 0, 0, 0, 8, &bad_order, PP_ERR_INVALID_ARGUMENT, "order 2");
  bad_sort(ctx, ctx, PP_U32, 0, 0, 0, 8, &neg_order, PP_ERR_INVALID_ARGUMENT, "order -1");
  bad_sort(ctx, ctx, PP_U32, 0, 0, 0, 8, &bad_algo, PP_ERR_INVALID_ARGUMENT, "algo 5");
  bad_sort(ctx, ctx, PP_U64, 0, 0, 0, SIZE_MAX / 4, &asc, PP_ERR_OVERFLOW, "n SIZE_MAX/4");
  bad_sort(ctx, ctx, PP_U32, 0, 1, 8, SIZE_MAX / 6, &asc, PP_ERR_OVERFLOW,
           "n * value_size overflowing");

  /* n == 0: nothing to do, NULL arrays fine */
  pp_status s = pp_sort(ctx, PP_F64, NULL, NULL, 0, 0, NULL);
  CHECK_STATUS(s, PP_OK, "pp_sort n 0, keys NULL");
  s = pp_sort(ctx, PP_F32, NULL, NULL, 4, 0, &asc);
  CHECK_STATUS(s, PP_OK, "pp_sort n 0, keys and values NULL");
  s = pp_merge(ctx, PP_I64, NULL, 0, NULL, 0, NULL, PP_DESCENDING);
  CHECK_STATUS(s, PP_OK, "pp_merge na nb 0, all NULL");

  /* every algorithm on floats with NaNs, keys only and pairs, descending and ascending */
  {
    th_rng r = th_rng_make(400000);
    size_t n = 100003;
    float *k = th_xmalloc(n * sizeof *k);
    gen_keys(PP_F32, P_NANS, n, &r, k);
    check_sort(ctx, PP_F32, 4, PP_DESCENDING, k, n, 0, "NaNs");
    check_sort(ctx, PP_F32, 8, PP_ASCENDING, k, n, 5, "NaNs");
    free(k);
  }

  /* merge errors: status, message, out untouched */
  uint32_t a[3] = {1, 2, 3}, b[2] = {0, 5}, out[5], sent[5] = {7, 7, 7, 7, 7};
  struct {
    pp_dtype t;
    const void *a, *b;
    void *out;
    pp_order o;
    size_t na, nb;
    pp_status want;
    const char *what;
  } mb[] = {
      {PP_U32, a, b, out, (pp_order)2, 3, 2, PP_ERR_INVALID_ARGUMENT, "order 2"},
      {(pp_dtype)-1, a, b, out, PP_ASCENDING, 3, 2, PP_ERR_INVALID_ARGUMENT, "dtype -1"},
      {PP_U32, NULL, b, out, PP_ASCENDING, 3, 2, PP_ERR_INVALID_ARGUMENT, "a NULL"},
      {PP_U32, a, NULL, out, PP_ASCENDING, 3, 2, PP_ERR_INVALID_ARGUMENT, "b NULL"},
      {PP_U32, a, b, NULL, PP_ASCENDING, 3, 2, PP_ERR_INVALID_ARGUMENT, "out NULL"},
      {PP_U32, a, b, out, PP_ASCENDING, SIZE_MAX, 2, PP_ERR_OVERFLOW, "na + nb overflowing"},
      {PP_U64, a, b, out, PP_ASCENDING, SIZE_MAX / 8, SIZE_MAX / 8, PP_ERR_OVERFLOW,
       "(na + nb) * 8 overflowing"},
  };
  for (size_t i = 0; i < sizeof mb / sizeof mb[0]; i++) {
    memcpy(out, sent, sizeof out);
    th_poison_error(ctx);
    s = pp_merge(ctx, mb[i].t, mb[i].a, mb[i].na, mb[i].b, mb[i].nb, mb[i].out, mb[i].o);
    CHECK_STATUS(s, mb[i].want, "pp_merge with %s", mb[i].what);
    CHECK(th_names(pp_last_error(ctx), "pp_merge"), "pp_merge with %s: pp_last_error is \"%s\"",
          mb[i].what, pp_last_error(ctx));
    CHECK(memcmp(out, sent, sizeof out) == 0, "pp_merge with %s: wrote to out", mb[i].what);
    check_usable(ctx, mb[i].what);
  }
}

int main(int argc, char **argv) {
  pp_context *ctx = th_init(argc, argv);
  read_test_env();
  test_args(ctx);
  test_sort_exact(ctx);
  test_sort_small(ctx);
  test_sort_medium(ctx);
  test_sort_tiles(ctx);
  if (g_thin == 1) {
    test_sort_buckets(ctx);
    test_sort_large(ctx);
    test_sort_packed_pairs(ctx);
    test_merge(ctx);
    test_merge_ties(ctx);
    test_merge_large(ctx);
  }
  printf("%ld sorts, %ld merges checked\n", g_sorts, g_merges);
  return th_finish(ctx);
}
