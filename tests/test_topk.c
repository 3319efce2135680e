/*
 * test_topk.c — pp_topk and pp_topk_rows against a serial reference written here.
 *
 * Usage: test_topk [cpu|cuda]
 *
 * The contract checked (API.md): the result is the first k elements of a stable
 * sort of the input, decreasing for largest and increasing for smallest, in which floats
 * compare by value with -0.0 == +0.0 and every NaN above +inf (so NaN comes first among
 * the largest and last among the smallest), and equal elements keep their index order —
 * ties are taken by lowest index. Values are the input's bits (a -0.0 stays -0.0, a
 * NaN's payload is kept); indices (uint64, within the row for rows) name the element.
 * The reference is a merge sort of indices with a comparator written from those words
 * (no ordered-bits trick), so it does not share the library's method.
 *
 * Every dtype, largest and smallest, indices requested or not, at sizes around the
 * block and tile boundaries of both backends (up to 2^20 + 7), k = 0, 1, 2, a few, about
 * n/2, n-1, n; data random, all equal, few values (heavy ties at the threshold), sorted,
 * reversed, extremes, and for floats NaN (some, all), signed zeros, infinities. Calls
 * take turns over placements: input and outputs in host or pp_malloc memory, input at an
 * unaligned offset. Output buffers are pre-filled with a sentinel: exactly k elements
 * (rows x k) must be written. Bad arguments (k > n) must fail without writing.
 * PARPRIM_TEST_SEED varies the data; PARPRIM_TEST_QUICK=1 leaves out the one-array sizes
 * above 20000 (for runs under compute-sanitizer).
 */
#include "harness.h"
#include "th_values.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>

/* ---- element access and the reference order ----------------------------------------- */

/* -1 when a orders before b in the decreasing ("largest") order, 1 after, 0 equal. */
#define DESC3(a, b) ((a) > (b) ? -1 : (a) < (b))
static int cmp_desc(pp_dtype t, const void *base, size_t i, size_t j) {
  const val a = load(t, base, i), b = load(t, base, j);
  if (is_float(t) && (val_isnan(t, a) || val_isnan(t, b)))
    return val_isnan(t, a) && val_isnan(t, b) ? 0 : val_isnan(t, a) ? -1 : 1;
  switch (t) {
  case PP_U8: return DESC3(a.u8, b.u8);
  case PP_I32: return DESC3(a.i32, b.i32);
  case PP_U32: return DESC3(a.u32, b.u32);
  case PP_I64: return DESC3(a.i64, b.i64);
  case PP_U64: return DESC3(a.u64, b.u64);
  case PP_F32: return DESC3(a.f32, b.f32); /* -0.0 == +0.0 here */
  default: return DESC3(a.f64, b.f64);
  }
}

/* Stable merge sort of idx[0..n) under cmp_desc (or its reverse for smallest). */
static void ref_sort(pp_dtype t, const void *x, uint64_t *idx, uint64_t *tmp, size_t n,
                     int largest) {
  for (size_t w = 1; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      size_t a = lo, b = mid, o = lo;
      while (a < mid && b < hi) {
        int c = cmp_desc(t, x, (size_t)idx[b], (size_t)idx[a]);
        if (!largest) c = -c;
        tmp[o++] = c < 0 ? idx[b++] : idx[a++]; /* b only when strictly before a */
      }
      while (a < mid) tmp[o++] = idx[a++];
      while (b < hi) tmp[o++] = idx[b++];
    }
    memcpy(idx, tmp, n * sizeof *idx);
  }
}

/* ---- data ----------------------------------------------------------------------------- */

/* the reference order of a one-row input is computed once per (data, direction) */
static unsigned g_data_ver = 1, g_ref_ver = 0;
static int g_ref_largest;

enum {
  P_RANDOM, P_EQUAL, P_FEW, P_SORTED, P_REVERSED, P_EXTREMES, P_SMALL,
  P_NAN_SOME, P_NAN_ALL, P_ZEROS, P_INF, P_COUNT,
  /* only in test_sampled: one equal "spike" value at every 16th index (largest) over
   * random values, and the mirror ("holes": the smallest at every 16th). Every 16th is
   * where a strided sample of a power-of-two size lands, so a sampled threshold (CUDA)
   * reaches too few or too many elements and its exact fallback must take over. */
  P_SPIKES = P_COUNT, P_HOLES, P_ALL
};
static const char *pname[P_ALL] = {"random", "all-equal", "few-values", "sorted", "reversed",
                                   "extremes", "small-range", "some-NaN", "all-NaN",
                                   "signed-zeros", "inf-and-NaN", "spikes", "holes"};

static int pattern_applies(pp_dtype t, int p) { return p < P_NAN_SOME || is_float(t); }

static void put_rank(pp_dtype t, void *x, size_t i, uint64_t u) {
  char *c = (char *)x;
  switch (t) {
  case PP_U8: c[i] = (char)(uint8_t)(u >> 56); break;
  case PP_U32: { uint32_t v = (uint32_t)(u >> 32); memcpy(c + i * 4, &v, 4); break; }
  case PP_I32: { uint32_t v = (uint32_t)(u >> 32) ^ 0x80000000u; memcpy(c + i * 4, &v, 4); break; }
  case PP_U64: memcpy(c + i * 8, &u, 8); break;
  case PP_I64: { uint64_t v = u ^ 0x8000000000000000ull; memcpy(c + i * 8, &v, 8); break; }
  default: break;
  }
}

static void put_double(pp_dtype t, void *x, size_t i, double d) {
  if (t == PP_F32) {
    float f = (float)d;
    memcpy((char *)x + i * 4, &f, 4);
  } else {
    memcpy((char *)x + i * 8, &d, 8);
  }
}

static void gen(pp_dtype t, int p, void *x, size_t n, th_rng *r) {
  const uint64_t c = th_next(r);
  g_data_ver++;
  for (size_t i = 0; i < n; i++) {
    if (!is_float(t)) {
      uint64_t u;
      switch (p) {
      case P_EQUAL: u = c; break;
      case P_FEW: u = (UINT64_MAX / 4) * (1 + th_below(r, 3)); break;
      case P_SORTED: u = (uint64_t)i * (UINT64_MAX / (n ? n : 1)); break;
      case P_REVERSED: u = (uint64_t)(n - 1 - i) * (UINT64_MAX / (n ? n : 1)); break;
      case P_EXTREMES: {
        uint64_t k = th_below(r, 4);
        u = k == 0 ? 0 : k == 1 ? UINT64_MAX : th_next(r);
        break;
      }
      case P_SMALL: u = (c & ~(0xFFull << 56)) | (th_below(r, 7) << 56); break;
      case P_SPIKES: u = i % 16 == 0 ? UINT64_MAX : (th_next(r) >> 1); break;
      case P_HOLES: u = i % 16 == 0 ? 0 : (th_next(r) >> 1) + (UINT64_MAX >> 1) + 1; break;
      default: u = th_next(r); break;
      }
      put_rank(t, x, i, u);
    } else {
      double d;
      const double big = t == PP_F32 ? FLT_MAX : DBL_MAX;
      switch (p) {
      case P_EQUAL: d = (double)(int64_t)(c % 1000) - 500.0; break;
      case P_FEW: d = (double)th_below(r, 3) - 1.0; break;
      case P_SORTED: d = -1000.0 + 2000.0 * (double)i / (double)n; break;
      case P_REVERSED: d = 1000.0 - 2000.0 * (double)i / (double)n; break;
      case P_EXTREMES: {
        uint64_t k = th_below(r, 6);
        d = k == 0 ? big : k == 1 ? -big : k == 2 ? th_range(r, -1e-30, 1e-30) : th_range(r, -1, 1);
        break;
      }
      case P_SMALL: d = (double)th_below(r, 5) * 0.5; break;
      case P_SPIKES: d = i % 16 == 0 ? 5.0 : th_range(r, -1, 1); break;
      case P_HOLES: d = i % 16 == 0 ? -5.0 : th_range(r, -1, 1); break;
      case P_NAN_SOME: d = th_below(r, 5) == 0 ? (double)NAN : th_range(r, -100, 100); break;
      case P_NAN_ALL: d = (double)NAN; break;
      case P_ZEROS: {
        uint64_t k = th_below(r, 4);
        d = k == 0 ? -0.0 : k == 1 ? 0.0 : k == 2 ? 1.0 : -1.0;
        break;
      }
      case P_INF: {
        uint64_t k = th_below(r, 6);
        d = k == 0 ? (double)INFINITY : k == 1 ? -(double)INFINITY : k == 2 ? (double)NAN
            : k == 3 ? -(double)NAN : th_range(r, -5, 5);
        break;
      }
      default: d = th_range(r, -1, 1); break;
      }
      put_double(t, x, i, d);
    }
  }
  /* NaN with different payloads and signs: all of them count as equal */
  if (is_float(t) && (p == P_NAN_SOME || p == P_NAN_ALL) && n > 2) {
    if (t == PP_F32) {
      uint32_t a = 0x7FC00001u, b = 0xFFC00002u;
      memcpy((char *)x + 4, &a, 4);
      memcpy((char *)x + (n - 1) * 4, &b, 4);
    } else {
      uint64_t a = 0x7FF8000000000001ull, b = 0xFFF8000000000002ull;
      memcpy((char *)x + 8, &a, 8);
      memcpy((char *)x + (n - 1) * 8, &b, 8);
    }
  }
}

/* ---- buffers -------------------------------------------------------------------------- */

#define SENT 0xCD
#define MAX_ELEMS (((size_t)1 << 22) + 64)

/* host and pp_malloc buffers for input, values and indices, at the largest size */
static unsigned char *g_hin, *g_hval, *g_hidx, *g_din, *g_dval, *g_didx, *g_back, *g_backi;
static uint64_t *g_ref, *g_tmp;
static unsigned g_rot;

static void bufs_make(pp_context *ctx) {
  const size_t b = (MAX_ELEMS + 2) * 8;
  g_hin = th_xmalloc(b);
  g_hval = th_xmalloc(b);
  g_hidx = th_xmalloc(b);
  g_back = th_xmalloc(b);
  g_backi = th_xmalloc(b);
  g_din = th_dev_alloc(ctx, b);
  g_dval = th_dev_alloc(ctx, b);
  g_didx = th_dev_alloc(ctx, b);
  g_ref = th_xmalloc(MAX_ELEMS * 8);
  g_tmp = th_xmalloc(MAX_ELEMS * 8);
}

static void bufs_free(pp_context *ctx) {
  free(g_hin); free(g_hval); free(g_hidx); free(g_back); free(g_backi);
  th_dev_free(ctx, g_din); th_dev_free(ctx, g_dval); th_dev_free(ctx, g_didx);
  free(g_ref); free(g_tmp);
}

static void put(pp_context *ctx, int dev, void *dst, const void *src, size_t bytes) {
  if (!bytes) return;
  if (dev) th_copy(ctx, dst, src, bytes);
  else memcpy(dst, src, bytes);
}

/* ---- one case ------------------------------------------------------------------------- */

/* Runs rows x cols of data x (host) with k, checks against the reference. */
static void run_case(pp_context *ctx, pp_dtype t, int pattern, const void *x, size_t rows,
                     size_t cols, size_t k, int largest, int rowwise) {
  if (!th_sampled()) return;
  const size_t es = pp_dtype_size(t), n = rows * cols, nk = rows * k;
  const unsigned rot = g_rot++;
  const int in_dev = rot & 1, out_dev = (rot >> 1) & 1, off = (rot >> 2) & 1,
            with_idx = ((rot >> 3) % 3) != 0;
  unsigned char *in = (in_dev ? g_din : g_hin) + off * es;
  unsigned char *vals = (out_dev ? g_dval : g_hval) + es; /* one guard element before */
  unsigned char *idxs = (out_dev ? g_didx : g_hidx) + 8;
  const size_t vbytes = (nk + 2) * es, ibytes = (nk + 2) * 8;
  memset(g_back, SENT, vbytes);
  memset(g_backi, SENT, ibytes);
  put(ctx, in_dev, in, x, n * es);
  put(ctx, out_dev, vals - es, g_back, vbytes);
  put(ctx, out_dev, idxs - 8, g_backi, ibytes);
  pp_status s = rowwise ? pp_topk_rows(ctx, t, in, rows, cols, k, largest != 0, vals,
                                       with_idx ? (uint64_t *)idxs : NULL)
                        : pp_topk(ctx, t, in, cols, k, largest != 0, vals,
                                  with_idx ? (uint64_t *)idxs : NULL);
  char what[256];
  snprintf(what, sizeof what, "%s %s %s rows=%zu cols=%zu k=%zu %s idx=%d in=%s+%d out=%s",
           rowwise ? "pp_topk_rows" : "pp_topk", pp_dtype_string(t), pname[pattern], rows, cols, k,
           largest ? "largest" : "smallest", with_idx, in_dev ? "dev" : "host", off,
           out_dev ? "dev" : "host");
  if (!CHECK_STATUS(s, PP_OK, "%s", what)) {
    printf("  (%s)\n", pp_last_error(ctx));
    return;
  }
  if (out_dev) {
    th_copy(ctx, g_back, vals - es, vbytes);
    th_copy(ctx, g_backi, idxs - 8, ibytes);
  } else {
    memcpy(g_back, vals - es, vbytes);
    memcpy(g_backi, idxs - 8, ibytes);
  }
  /* guards: the element before and after the results are untouched */
  int guards = 1;
  for (size_t b = 0; b < es; b++)
    guards &= g_back[b] == SENT && g_back[(nk + 1) * es + b] == SENT;
  for (size_t b = 0; b < 8; b++) {
    guards &= g_backi[b] == SENT && g_backi[(nk + 1) * 8 + b] == SENT;
    if (!with_idx) guards &= g_backi[8 + b] == SENT || nk == 0;
  }
  CHECK(guards, "%s: wrote outside its outputs", what);
  long bad = 0;
  size_t first_bad_row = 0, first_bad_j = 0;
  for (size_t r = 0; r < rows && bad < 1; r++) {
    const unsigned char *row = (const unsigned char *)x + r * cols * es;
    if (rows > 1 || g_ref_ver != g_data_ver || g_ref_largest != largest) {
      for (size_t i = 0; i < cols; i++) g_ref[i] = i;
      ref_sort(t, row, g_ref, g_tmp, cols, largest);
      g_ref_ver = rows > 1 ? 0 : g_data_ver;
      g_ref_largest = largest;
    }
    for (size_t j = 0; j < k; j++) {
      const unsigned char *got = g_back + (1 + r * k + j) * es;
      const unsigned char *want = row + g_ref[j] * es;
      int ok = memcmp(got, want, es) == 0;
      if (with_idx) {
        uint64_t gi;
        memcpy(&gi, g_backi + (1 + r * k + j) * 8, 8);
        ok &= gi == g_ref[j];
      }
      if (!ok && bad++ == 0) {
        first_bad_row = r;
        first_bad_j = j;
      }
    }
  }
  if (!CHECK(bad == 0, "%s: result differs from the reference (row %zu, position %zu)", what,
             first_bad_row, first_bad_j)) {
    uint64_t gi = 0;
    memcpy(&gi, g_backi + (1 + first_bad_row * k + first_bad_j) * 8, 8);
    printf("  got index %" PRIu64 " (if requested), want %" PRIu64 "\n", gi, g_ref[first_bad_j]);
  }
}

static size_t ks_for(size_t n, size_t *ks) {
  size_t m = 0;
  const size_t cand[] = {0, 1, 2, 7, 64, 100, 1000, 5000, n / 2, n - 1, n};
  for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
    size_t k = cand[i];
    if (k > n) continue;
    int dup = 0;
    for (size_t q = 0; q < m; q++) dup |= ks[q] == k;
    if (!dup) ks[m++] = k;
  }
  return m;
}

static void test_arrays(pp_context *ctx) {
  const size_t sizes[] = {0, 1, 2, 31, 33, 255, 1000, 2049, 4097, 16384, 16385, 65537,
                          (1u << 20) + 7};
  th_rng r = th_rng_make(1);
  unsigned char *x = th_xmalloc(MAX_ELEMS * 8);
  /* PARPRIM_TEST_QUICK: sizes up to 20000 only (for runs under compute-sanitizer) */
  const size_t max_n = th_quick() ? 20000 : MAX_ELEMS;
  for (size_t ti = 0; ti < N_TYPES; ti++) {
    pp_dtype t = all_types[ti];
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
      size_t n = sizes[si];
      if (n > max_n) continue;
      size_t ks[16], nks = ks_for(n, ks);
      for (int p = 0; p < P_COUNT; p++) {
        if (!pattern_applies(t, p)) continue;
        /* the largest size: a few patterns and k only, to keep the run short */
        if (n > 100000 && p != P_RANDOM && p != P_FEW && p != P_NAN_SOME && p != P_EQUAL) continue;
        /* quick: random data and one pattern that rotates with the size */
        if (th_quick() && p != P_RANDOM && p != (int)(si % P_COUNT)) continue;
        gen(t, p, x, n, &r);
        for (int largest = 0; largest < 2; largest++)
          for (size_t q = 0; q < nks; q++) {
            if (n > 100000 && ks[q] != 1 && ks[q] != 100 && ks[q] != 5000 && ks[q] != n) continue;
            run_case(ctx, t, p, x, 1, n, ks[q], largest, (g_rot & 16) != 0);
          }
      }
    }
  }
  free(x);
}

static void test_rows(pp_context *ctx) {
  const size_t shapes[][2] = {{0, 10}, {1, 1}, {3, 1000}, {64, 33}, {5, 4096}, {17, 257},
                              {2, 40000}, {4, 5000}, {300, 2}};
  th_rng r = th_rng_make(2);
  unsigned char *x = th_xmalloc(MAX_ELEMS * 8);
  for (size_t ti = 0; ti < N_TYPES; ti++) {
    pp_dtype t = all_types[ti];
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
      size_t rows = shapes[s][0], cols = shapes[s][1];
      size_t ks[16], nks = ks_for(cols, ks);
      for (int p = 0; p < P_COUNT; p++) {
        if (!pattern_applies(t, p)) continue;
        if (th_quick() && p != P_RANDOM && p != (int)(s % P_COUNT)) continue;
        gen(t, p, x, rows * cols, &r);
        for (size_t q = 0; q < nks; q++)
          run_case(ctx, t, p, x, rows, cols, ks[q], (int)(g_rot & 1), 1);
      }
    }
  }
  free(x);
}

/* Sizes and k around the CUDA backend's sampled-threshold paths, on data where the sample
 * is representative (random, sorted, ...), degenerate (all-equal, few values: the threshold
 * then cuts by index) or misleading (spikes, holes: its fallbacks run). The routes: one
 * array of n >= 2^22 with k <= n / 256 (one sample, one filter over the grid, radix passes
 * on the candidates); one array of 16384 < n < 2^22 and rows of cols >= 16384, k small
 * beside them (segments: each block filters part of a row into a slot of its own, one
 * block per row gathers the slots) — 4 x 32768 and 3 x 65541 rows are cut into 4 and 8
 * segments, the latter at unaligned offsets and with a short last one. The sample reads
 * runs of one 32-byte sector in the middle of equal parts, which miss the spikes (every
 * 16th index): they then overflow the slots and buffers, and the fallbacks (the same code
 * as for fewer than k candidates) read the input; with the knob PP_TOPK_KNOB_RUNS = 0
 * (pp_test_control, src/core/testctl.h) the sample
 * reads every 16th index instead and holes defeat it too. k is taken on
 * both sides of each switch for f32 (n / 256 for 2^22; 3000 and 4000 for 2^18; 4000 and
 * 5000 for rows of 32768; 1024 and 8000 for 65541), and where a smaller sample per thread
 * takes over (64, 1000). One 64-bit key type, so that both composite widths run. Runs on
 * both backends (the CPU has no such path; its answers are checked alike). */
static void test_sampled(pp_context *ctx) {
  const pp_dtype types[] = {PP_F32, PP_I64, PP_U8};
  const int pats[] = {P_RANDOM, P_EQUAL, P_FEW, P_SORTED, P_REVERSED, P_SPIKES, P_HOLES,
                      P_NAN_SOME};
  /* PARPRIM_TEST_QUICK (under compute-sanitizer): f32 and i64, three patterns and one k
   * on each route (sorted at once, passes over the candidates, fallback) */
  const int q_only = th_quick();
  th_rng r = th_rng_make(3);
  unsigned char *x = th_xmalloc(MAX_ELEMS * 8);
  const size_t n = ((size_t)1 << 22) + 7, na_ks[] = {1, 64, 100, 2048, 2049, n / 256, n / 256 + 1};
  const size_t n2 = ((size_t)1 << 18) + 7, n2_ks[] = {1, 64, 100, 1000, 3000, 4000};
  const size_t rows = 4, cols = 32768, row_ks[] = {1, 64, cols / 64, cols / 64 + 1, 4000, 5000};
  const size_t rows3 = 3, cols3 = 65541, row3_ks[] = {1, 64, 1024, 8000};
  for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
    const pp_dtype t = types[ti];
    if (q_only && t == PP_U8) continue;
    for (size_t pi = 0; pi < sizeof pats / sizeof pats[0]; pi++) {
      const int p = pats[pi];
      if (!pattern_applies(t, p) && p != P_SPIKES && p != P_HOLES) continue;
      if (q_only && p != P_RANDOM && p != P_SPIKES && p != P_HOLES) continue;
      gen(t, p, x, n, &r);
      for (int largest = 0; largest < 2; largest++)
        for (size_t q = 0; q < sizeof na_ks / sizeof na_ks[0]; q++)
          if (!q_only || na_ks[q] == 64 || na_ks[q] == n / 256)
            run_case(ctx, t, p, x, 1, n, na_ks[q], largest, 0);
      gen(t, p, x, n2, &r);
      for (int largest = 0; largest < 2; largest++)
        for (size_t q = 0; q < sizeof n2_ks / sizeof n2_ks[0]; q++)
          if (!q_only || n2_ks[q] == 64)
            run_case(ctx, t, p, x, 1, n2, n2_ks[q], largest, 0);
      gen(t, p, x, rows * cols, &r);
      for (int largest = 0; largest < 2; largest++)
        for (size_t q = 0; q < sizeof row_ks / sizeof row_ks[0]; q++)
          if (!q_only || row_ks[q] == 64 || row_ks[q] == cols / 64)
            run_case(ctx, t, p, x, rows, cols, row_ks[q], largest, 1);
      gen(t, p, x, rows3 * cols3, &r);
      for (int largest = 0; largest < 2; largest++)
        for (size_t q = 0; q < sizeof row3_ks / sizeof row3_ks[0]; q++)
          if (!q_only || row3_ks[q] == 64)
            run_case(ctx, t, p, x, rows3, cols3, row3_ks[q], largest, 1);
    }
  }
  free(x);
}

/* k > n fails with INVALID_ARGUMENT, names the function, writes nothing */
static void test_bad_args(pp_context *ctx) {
  float in[10] = {0}, out[12];
  uint64_t idx[12];
  memset(out, SENT, sizeof out);
  memset(idx, SENT, sizeof idx);
  th_poison_error(ctx);
  pp_status s = pp_topk(ctx, PP_F32, in, 10, 12, true, out, idx);
  CHECK_STATUS(s, PP_ERR_INVALID_ARGUMENT, "pp_topk k > n");
  CHECK(th_names(pp_last_error(ctx), "pp_topk"), "message names pp_topk: %s", pp_last_error(ctx));
  int untouched = 1;
  for (size_t b = 0; b < sizeof out; b++) untouched &= ((unsigned char *)out)[b] == SENT;
  for (size_t b = 0; b < sizeof idx; b++) untouched &= ((unsigned char *)idx)[b] == SENT;
  CHECK(untouched, "pp_topk k > n wrote its outputs");
  th_poison_error(ctx);
  s = pp_topk_rows(ctx, PP_F32, in, 2, 5, 6, false, out, NULL);
  CHECK_STATUS(s, PP_ERR_INVALID_ARGUMENT, "pp_topk_rows k > cols");
  CHECK(th_names(pp_last_error(ctx), "pp_topk_rows"), "message names pp_topk_rows: %s",
        pp_last_error(ctx));
  s = pp_topk(ctx, PP_F32, NULL, 10, 3, true, out, NULL);
  CHECK_STATUS(s, PP_ERR_INVALID_ARGUMENT, "pp_topk in == NULL");
  s = pp_topk(ctx, PP_F32, in, 10, 3, true, NULL, NULL);
  CHECK_STATUS(s, PP_ERR_INVALID_ARGUMENT, "pp_topk values_out == NULL");
  s = pp_topk(ctx, (pp_dtype)99, in, 10, 3, true, out, NULL);
  CHECK_STATUS(s, PP_ERR_INVALID_ARGUMENT, "pp_topk bad dtype");
  /* k == 0 and n == 0 succeed and write nothing */
  s = pp_topk(ctx, PP_F32, in, 10, 0, true, out, idx);
  CHECK_STATUS(s, PP_OK, "pp_topk k == 0");
  s = pp_topk(ctx, PP_F32, in, 0, 0, true, out, idx);
  CHECK_STATUS(s, PP_OK, "pp_topk n == 0");
  untouched = 1;
  for (size_t b = 0; b < sizeof out; b++) untouched &= ((unsigned char *)out)[b] == SENT;
  CHECK(untouched, "pp_topk k == 0 wrote its outputs");
  /* the context stays usable */
  float a[5] = {3, -1, 7, 7, 2}, v[2];
  uint64_t ix[2];
  s = pp_topk(ctx, PP_F32, a, 5, 2, true, v, ix);
  CHECK(s == PP_OK && v[0] == 7 && v[1] == 7 && ix[0] == 2 && ix[1] == 3,
        "pp_topk after failures: %d %g %g %" PRIu64 " %" PRIu64, (int)s, v[0], v[1], ix[0], ix[1]);
  s = pp_topk(ctx, PP_F32, a, 5, 2, false, v, ix);
  CHECK(s == PP_OK && v[0] == -1 && v[1] == 2 && ix[0] == 1 && ix[1] == 4,
        "pp_topk smallest: %d %g %g", (int)s, v[0], v[1]);
}

int main(int argc, char **argv) {
  /* the shared buffers are made first and freed last, as steps of their own */
  static const th_step steps[] = {bufs_make, test_bad_args, test_arrays, test_rows, test_sampled,
                                  bufs_free};
  return th_run(argc, argv, steps, TH_COUNT(steps));
}
