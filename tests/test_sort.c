/*
 * test_sort.c — pp_sort against a serial reference written here.
 *
 * Usage: test_sort [cpu|cuda]
 *
 * The reference states API.md's order directly, as a comparison of values: integers as
 * integers, floats as numbers with -0.0 == +0.0 and every NaN equal to every other NaN and
 * above +inf; descending is that comparison negated. The reference sort is a stable merge
 * sort of indices by it. Since pp_sort is stable, the expected output is
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
 * buckets, some larger than a GPU tile. Then the argument errors (pp_merge's included).
 * pp_merge is checked by test_merge.c, with the same reference and data (th_sort_data.h).
 *
 * Environment: PARPRIM_TEST_SORT_ALGOS=merge,sample (a comma list of auto, radix, merge,
 * sample, quick) limits the algorithms run; PARPRIM_TEST_SORT_THIN=k runs one in k of the
 * generated sort cases and leaves out the huge sizes (for compute-sanitizer).
 */
#include "harness.h"
#include "th_sort_data.h"

/* ---- one sort ------------------------------------------------------------------------ */

static long g_sorts;

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
    printf("thinned: one in %u cases, no huge sizes\n", g_thin);
  }
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

/* pp_argsort of keys with algorithm ai: the sorted keys (when asked for: every other call
 * passes NULL) must be want_k bit for bit, and the indices the reference's stable
 * permutation idx, in the index type that the call count picks (u32, i64, u64, i32). keys
 * must be unchanged and no guard written. Returns 1 when it matched. */
static long g_argsorts;
static int check_argsort(pp_context *ctx, pp_dtype t, pp_order ord, size_t ai, const void *keys,
                         const void *want_k, const size_t *idx, size_t n, unsigned mem,
                         const char *what) {
  static const pp_dtype itypes[4] = {PP_U32, PP_I64, PP_U64, PP_I32};
  const pp_dtype it = itypes[g_argsorts % 4];
  const size_t es = pp_dtype_size(t), is = pp_dtype_size(it);
  const int want_keys = (g_argsorts / 4) % 2 == 0;
  const pp_sort_algo algo = all_algos[ai];
  char mbuf[96];
  mem_name(mem, mbuf, sizeof mbuf);
  placed pk = place(ctx, keys, n * es, mem & 1, lead_of(mem, es, 1));
  placed ps = place(ctx, NULL, n * es, !(mem & 1), lead_of(mem, es, 0));
  placed pi = place(ctx, NULL, n * is, (mem & 2) != 0, lead_of(mem, is, 0));
  pp_sort_opts opts = {ord, algo};
  th_poison_error(ctx);
  pp_status s = pp_argsort(ctx, t, placed_ptr(&pk), n, want_keys ? placed_ptr(&ps) : NULL, it,
                           placed_ptr(&pi), &opts);
  g_argsorts++;
  int ok = CHECK(s == PP_OK, "pp_argsort %s %s n=%zu %s algo %s index %s (%s): %s: %s",
                 pp_dtype_string(t), oname(ord), n, what, algo_names[ai], pp_dtype_string(it),
                 mbuf, pp_status_string(s), pp_last_error(ctx));
  if (ok) {
    int gk = placed_fetch(ctx, &pk), gs = placed_fetch(ctx, &ps), gi = placed_fetch(ctx, &pi);
    ok &= CHECK(gk && gs && gi, "pp_argsort %s %s n=%zu %s algo %s (%s): wrote outside an array",
                pp_dtype_string(t), oname(ord), n, what, algo_names[ai], mbuf);
    ok &= CHECK(memcmp(pk.host + pk.lead, keys, n * es) == 0,
                "pp_argsort %s %s n=%zu %s algo %s (%s): changed keys", pp_dtype_string(t),
                oname(ord), n, what, algo_names[ai], mbuf);
    if (want_keys) {
      size_t dk = first_diff(ps.host + ps.lead, want_k, n, es);
      ok &= CHECK(dk == n, "pp_argsort %s %s n=%zu %s algo %s (%s): sorted key %zu differs",
                  pp_dtype_string(t), oname(ord), n, what, algo_names[ai], mbuf, dk);
    }
    size_t bad = n;
    for (size_t i = 0; i < n && bad == n; i++) {
      uint64_t got = get_bits(is == 4 ? PP_U32 : PP_U64, pi.host + pi.lead, i);
      if (got != (uint64_t)idx[i]) bad = i;
    }
    ok &= CHECK(bad == n,
                "pp_argsort %s %s n=%zu %s algo %s index %s (%s): index %zu is %" PRIu64
                ", want %zu",
                pp_dtype_string(t), oname(ord), n, what, algo_names[ai], pp_dtype_string(it),
                mbuf, bad, bad < n ? get_bits(is == 4 ? PP_U32 : PP_U64, pi.host + pi.lead, bad) : 0,
                bad < n ? idx[bad] : 0);
  }
  placed_free(ctx, &pk);
  placed_free(ctx, &ps);
  placed_free(ctx, &pi);
  return ok;
}

/* pp_sort_copy of keys (and vals when vs > 0) with algorithm ai: the outputs must be want_k
 * (and want_v) bit for bit, the inputs unchanged and no guard written. Returns 1 when it
 * matched. */
static int check_sort_copy_api(pp_context *ctx, pp_dtype t, size_t vs, pp_order ord, size_t ai,
                               const void *keys, const void *vals, const void *want_k,
                               const void *want_v, size_t n, unsigned mem, const char *what) {
  const size_t es = pp_dtype_size(t);
  const pp_sort_algo algo = all_algos[ai];
  char mbuf[96];
  mem_name(mem, mbuf, sizeof mbuf);
  placed pk = place(ctx, keys, n * es, mem & 1, lead_of(mem, es, 1));
  placed pv = place(ctx, vals, n * vs, (mem & 2) != 0, lead_of(mem, vs ? vs : 1, 1));
  placed ps = place(ctx, NULL, n * es, !(mem & 1), lead_of(mem, es, 0));
  placed pw = place(ctx, NULL, n * vs, !(mem & 2), lead_of(mem, vs ? vs : 1, 0));
  pp_sort_opts opts = {ord, algo};
  th_poison_error(ctx);
  pp_status s = pp_sort_copy(ctx, t, placed_ptr(&pk), vs ? placed_ptr(&pv) : NULL, vs, n,
                             placed_ptr(&ps), vs ? placed_ptr(&pw) : NULL, &opts);
  int ok = CHECK(s == PP_OK, "pp_sort_copy %s %s vs=%zu n=%zu %s algo %s (%s): %s: %s",
                 pp_dtype_string(t), oname(ord), vs, n, what, algo_names[ai], mbuf,
                 pp_status_string(s), pp_last_error(ctx));
  if (ok) {
    int g = placed_fetch(ctx, &pk) & placed_fetch(ctx, &pv) & placed_fetch(ctx, &ps) &
            placed_fetch(ctx, &pw);
    ok &= CHECK(g, "pp_sort_copy %s %s vs=%zu n=%zu %s algo %s (%s): wrote outside an array",
                pp_dtype_string(t), oname(ord), vs, n, what, algo_names[ai], mbuf);
    ok &= CHECK(memcmp(pk.host + pk.lead, keys, n * es) == 0 &&
                    (!vs || memcmp(pv.host + pv.lead, vals, n * vs) == 0),
                "pp_sort_copy %s %s vs=%zu n=%zu %s algo %s (%s): changed an input",
                pp_dtype_string(t), oname(ord), vs, n, what, algo_names[ai], mbuf);
    size_t dk = first_diff(ps.host + ps.lead, want_k, n, es);
    size_t dv = vs ? first_diff(pw.host + pw.lead, want_v, n, vs) : n;
    ok &= CHECK(dk == n && dv == n,
                "pp_sort_copy %s %s vs=%zu n=%zu %s algo %s (%s): sorted key %zu / value %zu "
                "differs (n: none)",
                pp_dtype_string(t), oname(ord), vs, n, what, algo_names[ai], mbuf, dk, dv);
  }
  placed *all[] = {&pk, &pv, &ps, &pw};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) placed_free(ctx, all[i]);
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
  /* the same keys through pp_argsort, once per check, the algorithm taking turns */
  if (vs == 0) {
    size_t ai = (size_t)g_argsorts % N_ALGOS;
    while (!(g_algo_mask & (1u << ai))) ai = (ai + 1) % N_ALGOS;
    ok &= check_argsort(ctx, t, ord, ai, keys, want_k, idx, n, (mem + 5) % 16, what);
  }
  /* and through pp_sort_copy, the algorithm taking turns with the check count */
  {
    static long copies;
    size_t ai = (size_t)copies++ % N_ALGOS;
    while (!(g_algo_mask & (1u << ai))) ai = (ai + 1) % N_ALGOS;
    ok &= check_sort_copy_api(ctx, t, vs, ord, ai, keys, vals, want_k, want_v, n,
                              (mem + 7) % 16, what);
  }
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
  const size_t ns = sizeof sizes / sizeof sizes[0];
  unsigned mem = 3;
  uint64_t stream = 100000;
  for (size_t k = 0; k < sort_grid_count(ns); k++) {
    const sort_grid g = sort_grid_at(k, ns);
    if (g.si != 2 && g.p != (int)(g.si + 3 * g.ti + 5 * (size_t)g.o) % N_PATTERNS) continue; /* time */
    const size_t vs = vsizes[(stream + g.ti) % 3];
    sort_pattern(ctx, all_types[g.ti], vs, (pp_order)g.o, g.p, sizes[g.si], mem++ % 16, stream++);
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

/* One sort of n keys of dtype t in order o, pattern p, with values of vs bytes (0: keys only). */
struct sort_case {
  pp_dtype t;
  size_t vs;
  pp_order o;
  int p;
  size_t n;
};

/* Inputs aimed at the sample sort's buckets, at sizes where it makes hundreds of buckets and
 * some of them exceed a GPU tile: few distinct values and byte keys (equality buckets),
 * one value everywhere (all splitters equal), one huge run of equal keys in the middle of
 * random ones, a heavy value at random places, skewed magnitudes, sorted and reversed
 * input (every sample in order). */
static void test_sort_buckets(pp_context *ctx) {
  /* p == N_PATTERNS: random keys with a run of 60% equal ones in the middle */
  static const struct sort_case cases[] = {
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
  static const struct sort_case cases[] = {
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
      {PP_U32, PP_ASCENDING, 0x0000ffffu},  /* 2 passes, the low digits */
      {PP_I32, PP_ASCENDING, 0u},           /* all keys equal: no digit varies */
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
    /* the pairs sorted in place, then (arg) the keys sorted out of place by pp_argsort with
       4-byte positions: the same packed passes, the first reading the input and making the
       positions */
    for (int arg = 0; arg < 2; arg++) {
      void *dk = th_dev_from_host(ctx, orig, n * 4), *dv = th_dev_from_host(ctx, v, n * 4);
      void *dout = arg ? th_dev_from_host(ctx, v, n * 4) : NULL;
      pp_sort_opts opts = {o, PP_SORT_RADIX};
      pp_status s = arg ? pp_argsort(ctx, t, dk, n, dout, PP_U32, dv, &opts)
                        : pp_sort(ctx, t, dk, dv, 4, n, &opts);
      if (s == PP_OK) s = pp_synchronize(ctx);
      int input_kept = 1;
      if (s == PP_OK) {
        th_copy(ctx, k, arg ? dout : dk, n * 4);
        th_copy(ctx, v, dv, n * 4);
        if (arg) {
          uint32_t *in_after = th_xmalloc(n * sizeof *in_after);
          th_copy(ctx, in_after, dk, n * 4);
          input_kept = memcmp(in_after, orig, n * 4) == 0;
          free(in_after);
        }
      }
      th_dev_free(ctx, dk);
      th_dev_free(ctx, dv);
      if (dout) th_dev_free(ctx, dout);
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
      CHECK(s == PP_OK && bad == n && input_kept, "%s %s %s n=%zu, bits 0x%08x vary: %s%s at %zu%s",
            arg ? "pp_argsort" : "pp_sort pairs", pp_dtype_string(t), oname(o), n, (unsigned)vary,
            pp_status_string(s), whys[why], bad, input_kept ? "" : ", changed its input");
      if (arg) g_argsorts++;
      else g_sorts++;
      for (size_t i = 0; i < n; i++) v[i] = (uint32_t)i; /* the next round's values */
    }
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

  /* argsort errors: status, message naming the call, outputs untouched */
  {
    uint32_t k[6] = {5, 1, 4, 1, 3, 0}, ko[6], sk[6];
    uint64_t io[6], si[6];
    memset(sk, 0x5a, sizeof sk);
    memset(si, 0x5a, sizeof si);
    struct {
      pp_dtype t, it;
      const void *keys;
      void *sorted, *idx;
      size_t n;
      const pp_sort_opts *o;
      pp_status want;
      const char *what;
    } ab[] = {
        {PP_U32, PP_U64, NULL, ko, io, 6, &asc, PP_ERR_INVALID_ARGUMENT, "keys NULL"},
        {PP_U32, PP_U64, k, ko, NULL, 6, &asc, PP_ERR_INVALID_ARGUMENT, "indices NULL"},
        {PP_U32, PP_F32, k, ko, io, 6, &asc, PP_ERR_INVALID_ARGUMENT, "index_t f32"},
        {PP_U32, PP_U8, k, ko, io, 6, &asc, PP_ERR_INVALID_ARGUMENT, "index_t u8"},
        {(pp_dtype)9, PP_U64, k, ko, io, 6, &asc, PP_ERR_INVALID_ARGUMENT, "key_t 9"},
        {PP_U32, PP_U64, k, ko, io, 6, &bad_algo, PP_ERR_INVALID_ARGUMENT, "algo 5"},
        {PP_U32, PP_U64, k, ko, io, 6, &bad_order, PP_ERR_INVALID_ARGUMENT, "order 2"},
        {PP_U32, PP_I32, k, ko, io, ((size_t)1 << 31) + 1, &asc, PP_ERR_INVALID_ARGUMENT,
         "2^31 + 1 positions as i32"},
        {PP_U8, PP_U32, k, ko, io, (size_t)(UINT64_C(1) << 32) + 1, &asc, PP_ERR_INVALID_ARGUMENT,
         "2^32 + 1 positions as u32"},
        {PP_U64, PP_U64, k, ko, io, SIZE_MAX / 4, &asc, PP_ERR_OVERFLOW, "n SIZE_MAX/4"},
        {PP_U32, PP_U32, k, k, io, 6, &asc, PP_ERR_INVALID_ARGUMENT, "sorted_keys == keys"},
        {PP_U32, PP_U32, k, ko, k + 2, 3, &asc, PP_ERR_INVALID_ARGUMENT, "indices inside keys"},
        {PP_U32, PP_U32, k, io, (char *)io + 8, 4, &asc, PP_ERR_INVALID_ARGUMENT,
         "sorted_keys overlapping indices"},
    };
    for (size_t i = 0; i < sizeof ab / sizeof ab[0]; i++) {
      memcpy(ko, sk, sizeof ko);
      memcpy(io, si, sizeof io);
      uint32_t kc[6];
      memcpy(kc, k, sizeof k);
      th_poison_error(ctx);
      s = pp_argsort(ctx, ab[i].t, ab[i].keys, ab[i].n, ab[i].sorted, ab[i].it, ab[i].idx, ab[i].o);
      CHECK_STATUS(s, ab[i].want, "pp_argsort with %s", ab[i].what);
      CHECK(th_names(pp_last_error(ctx), "pp_argsort"),
            "pp_argsort with %s: pp_last_error is \"%s\"", ab[i].what, pp_last_error(ctx));
      CHECK(memcmp(ko, sk, sizeof ko) == 0 && memcmp(io, si, sizeof io) == 0 &&
                memcmp(k, kc, sizeof k) == 0,
            "pp_argsort with %s: wrote to an argument", ab[i].what);
      check_usable(ctx, ab[i].what);
    }
    s = pp_argsort(ctx, PP_U32, NULL, 0, NULL, PP_U64, NULL, NULL);
    CHECK_STATUS(s, PP_OK, "pp_argsort n 0, all NULL");
    /* n == 1 and a small case by hand: ties keep their input order */
    s = pp_argsort(ctx, PP_U32, k, 1, ko, PP_I64, io, NULL);
    CHECK(s == PP_OK && ko[0] == 5 && io[0] == 0, "pp_argsort n 1: %s (%s)", pp_status_string(s),
          pp_last_error(ctx));
    uint32_t i32[6];
    s = pp_argsort(ctx, PP_U32, k, 6, NULL, PP_U32, i32, NULL);
    CHECK(s == PP_OK && i32[0] == 5 && i32[1] == 1 && i32[2] == 3 && i32[3] == 4 && i32[4] == 2 &&
              i32[5] == 0,
          "pp_argsort {5,1,4,1,3,0}: %s (%s)", pp_status_string(s), pp_last_error(ctx));
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
  }
  printf("%ld sorts and %ld argsorts checked\n", g_sorts, g_argsorts);
  return th_finish(ctx);
}
