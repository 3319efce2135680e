/*
 * test_sort_ops.c — the backend table's sort_copy and merge_pairs (src/core/internal.h),
 * called through ctx->ops, against serial references written here.
 *
 * Usage: test_sort_ops [cpu|cuda]
 *
 * Neither entry is a public function: argsort and the distributed sort call them. A case
 * builds its inputs on the host, places them in pp_malloc memory (what a backend's entries
 * are given: accessible and aligned), calls the entry and compares every output byte with
 * the reference. The order is test_sort.c's (th_sort_data.h): API.md's order as a
 * comparison of values, floats with -0.0 == +0.0 and NaN last, descending the reverse.
 * Both entries are stable and every value names its input position, so a tie taken out of
 * order shows in the values. Outputs carry guard bytes that must stay untouched, and the
 * inputs are read back after the call: neither entry may write them.
 *
 * merge_pairs: every dtype x order x value width (4, 8) x run lengths (empty sides,
 * lopsided, around the GPU merge's tiles of keys alone (512 x 17, 512 x 7) and of pairs
 * (512 x 9, 512 x 7), 2^12 and 2^16 + 1, a few million where the GPU's partition kernel
 * finds the splits) x key patterns; runs drawn from one stream, so the two share keys.
 * On CUDA, one merge over 2^26 keys, where that kernel searches samples first.
 *
 * sort_copy: every dtype x order x values (none, 4 or 8 bytes, positions as 4- and 8-byte
 * integers: values_in NULL) x sizes from 2 (the entry's contract: the core handles n < 2)
 * over tiles of the GPU sorts and a few million x patterns, the algorithm turning through
 * pp_sort_algo; then positions (8-byte above all) with keys that vary in chosen digit
 * positions only, for every pass count of the GPU radix sort.
 */
#include "harness.h"
#include "th_sort_data.h"

#include "../src/core/internal.h"

#include <inttypes.h>

/* what travels with the keys of sort_copy */
enum { V_NONE, V_4, V_8, V_POS4, V_POS8, N_VMODES };
static const char *vmode_names[N_VMODES] = {"keys only", "4-byte values", "8-byte values",
                                             "4-byte positions", "8-byte positions"};
static size_t vmode_size(int m) { return m == V_NONE ? 0 : (m == V_4 || m == V_POS4) ? 4 : 8; }

/* One array in pp_malloc memory (th_sort_data.h's placed, with guards), from host data or
 * (data NULL) filled with the guard byte. */
static placed dev_array(pp_context *ctx, const void *data, size_t bytes) {
  return place(ctx, data, bytes, 1, 0);
}

/* Reads back an output: guards intact and every byte equal to want; the first difference
 * is named. es is the element size, key_t the dtype to print it as (a value: PP_U32/U64). */
static int check_output(pp_context *ctx, placed *pl, const void *want, size_t n, size_t es,
                        pp_dtype show, const char *name, const char *what) {
  int ok = CHECK(placed_fetch(ctx, pl), "%s: wrote outside %s", what, name);
  const size_t d = first_diff(pl->host + pl->lead, want, n, es);
  char x[80] = "", y[80] = "";
  if (d < n) {
    fmt_key(show, pl->host + pl->lead, d, x, sizeof x);
    fmt_key(show, want, d, y, sizeof y);
  }
  return ok & CHECK(d == n, "%s: %s[%zu] is %s, want %s", what, name, d, x, y);
}

/* Reads back an input: guards intact and the bytes as they were placed. */
static int check_input(pp_context *ctx, placed *pl, const void *orig, const char *name,
                       const char *what) {
  const int guards = placed_fetch(ctx, pl);
  return CHECK(guards && (pl->bytes == 0 || memcmp(pl->host + pl->lead, orig, pl->bytes) == 0),
               "%s: %s was written", what, name);
}

static pp_dtype value_dtype(size_t vs) { return vs == 4 ? PP_U32 : PP_U64; }

/* ---- merge_pairs --------------------------------------------------------------------- */

/* The stable merge of (a, va) and (b, vb) in order o: b's pair goes first only when its
 * key is strictly before a's. */
static void ref_merge_pairs(pp_dtype t, pp_order o, const unsigned char *a,
                            const unsigned char *va, size_t na, const unsigned char *b,
                            const unsigned char *vb, size_t nb, size_t vs, unsigned char *kout,
                            unsigned char *vout) {
  const size_t es = pp_dtype_size(t);
  size_t i = 0, j = 0;
  for (size_t d = 0; d < na + nb; d++) {
    const int take_b = i == na || (j < nb && ref_cmp_ord(t, o, b, j, a, i) < 0);
    memcpy(kout + d * es, take_b ? b + j * es : a + i * es, es);
    memcpy(vout + d * vs, take_b ? vb + j * vs : va + i * vs, vs);
    if (take_b)
      j++;
    else
      i++;
  }
}

/* a (na keys) and b (nb keys) host arrays sorted in o; values name each pair's position in
 * a then b. */
static void check_merge_pairs(pp_context *ctx, pp_dtype t, pp_order o, size_t vs,
                              const unsigned char *a, size_t na, const unsigned char *b,
                              size_t nb, const char *pattern) {
  const size_t es = pp_dtype_size(t), n = na + nb;
  char what[160];
  snprintf(what, sizeof what, "merge_pairs %s %s %zu-byte values na=%zu nb=%zu %s",
           pp_dtype_string(t), oname(o), vs, na, nb, pattern);
  unsigned char *vals = th_xmalloc(n * vs), *wk = th_xmalloc(n * es), *wv = th_xmalloc(n * vs);
  gen_values(vs, n, vals);
  ref_merge_pairs(t, o, a, vals, na, b, vals + na * vs, nb, vs, wk, wv);

  placed pa = dev_array(ctx, a, na * es), pb = dev_array(ctx, b, nb * es);
  placed pva = dev_array(ctx, vals, na * vs), pvb = dev_array(ctx, vals + na * vs, nb * vs);
  placed pk = dev_array(ctx, NULL, n * es), pv = dev_array(ctx, NULL, n * vs);
  pp_status s = ctx->ops->merge_pairs(ctx, t, placed_ptr(&pa), placed_ptr(&pva), na,
                                      placed_ptr(&pb), placed_ptr(&pvb), nb, placed_ptr(&pk),
                                      placed_ptr(&pv), vs, o);
  if (s == PP_OK) s = pp_synchronize(ctx);
  if (CHECK(s == PP_OK, "%s: %s (%s)", what, pp_status_string(s), pp_last_error(ctx))) {
    check_output(ctx, &pk, wk, n, es, t, "kout", what);
    check_output(ctx, &pv, wv, n, vs, value_dtype(vs), "vout", what);
    check_input(ctx, &pa, a, "ka", what);
    check_input(ctx, &pb, b, "kb", what);
    check_input(ctx, &pva, vals, "va", what);
    check_input(ctx, &pvb, vals + na * vs, "vb", what);
  }
  placed *all[] = {&pa, &pb, &pva, &pvb, &pk, &pv};
  for (size_t i = 0; i < TH_COUNT(all); i++) placed_free(ctx, all[i]);
  TH_FREE(vals, wk, wv);
}

/* Runs of pattern p sorted in o. Both come from one random stream (b continues a's), so
 * the few-value patterns give the two runs the same keys and the merge must break ties
 * for a. */
static void merge_case(pp_context *ctx, pp_dtype t, pp_order o, size_t vs, int p, size_t na,
                       size_t nb, uint64_t stream) {
  th_rng r = th_rng_make(stream);
  const size_t es = pp_dtype_size(t);
  unsigned char *a = th_xmalloc(na * es), *b = th_xmalloc(nb * es);
  gen_keys(t, p, na, &r, a);
  if (p == P_EQUAL || p == P_FEW || p == P_HIGH_BIT || p == P_HEAVY) r = th_rng_make(stream);
  gen_keys(t, p, nb, &r, b);
  ref_sort_inplace(t, o, a, na);
  ref_sort_inplace(t, o, b, nb);
  check_merge_pairs(ctx, t, o, vs, a, na, b, nb, pattern_names[p]);
  TH_FREE(a, b);
}

static int have_entry(int present, const char *name) {
  return CHECK(present, "the %s backend has no %s entry", th_state_get()->backend_name, name);
}

static void test_merge_pairs(pp_context *ctx) {
  if (!have_entry(ctx->ops->merge_pairs != NULL, "merge_pairs")) return;
  static const size_t sizes[][2] = {
      {0, 0},       {0, 1},       {1, 0},       {0, 100},     {100, 0},     {1, 1},
      {1, 2},       {2, 1},       {2, 2},       {31, 33},     {255, 257},   {1000, 1},
      {1, 1000},    {2048, 2048}, {2047, 2048}, {2048, 2049}, {1792, 1792}, {1792, 1793},
      {3583, 1},    {1, 3584},    {2304, 2304}, {2303, 2304}, {2304, 2305}, {4608, 4608},
      {4609, 4607}, {4352, 4352}, {4352, 4353}, {8704, 1},    {32768, 32769}, {65536, 1},
      {3, 65534},   {70001, 70003}};
  const size_t ns = TH_COUNT(sizes);
  uint64_t stream = 1;
  for (int v = 0; v < 2; v++)
    for (size_t k = 0; k < sort_grid_count(ns); k++) {
      const sort_grid g = sort_grid_at(k, ns);
      const size_t na = sizes[g.si][0], nb = sizes[g.si][1];
      /* time: past a few thousand pairs, two patterns per dtype, order and size */
      const int p0 = (int)(g.si + 3 * g.ti + 5 * (size_t)g.o + 7 * (size_t)v) % N_PATTERNS;
      if (na + nb > 3000 && g.p != p0 && g.p != (p0 + 6) % N_PATTERNS) continue;
      if (!th_sampled()) continue;
      merge_case(ctx, all_types[g.ti], (pp_order)g.o, v ? 8 : 4, g.p, na, nb, stream++);
    }
  /* a few million: over the GPU's fused launch (two tiles per SM), lopsided and balanced,
     ties everywhere and NaNs */
  if (th_quick()) return;
  merge_case(ctx, PP_F32, PP_ASCENDING, 8, P_DUPS, 1700001, 1300003, stream++);
  merge_case(ctx, PP_U64, PP_DESCENDING, 4, P_RANDOM, 2500000, 700001, stream++);
  merge_case(ctx, PP_I32, PP_ASCENDING, 4, P_FEW, 5, 3000000, stream++);
  merge_case(ctx, PP_F64, PP_DESCENDING, 8, P_NANS, 3000017, 3, stream++);
  merge_case(ctx, PP_U8, PP_DESCENDING, 8, P_FEW, 2000000, 1000003, stream++);
  merge_case(ctx, PP_I64, PP_ASCENDING, 8, P_ZEROS, 1500007, 1500001, stream++);
}

/* Ties across the runs whose bits differ (-0.0 against +0.0, NaNs of two payloads): a's
 * pairs all come first, and the values say so. */
static void test_merge_pairs_ties(pp_context *ctx) {
  if (!ctx->ops->merge_pairs) return; /* counted by test_merge_pairs */
  static const size_t sizes[][2] = {{1, 1}, {5, 3}, {100, 1000}, {4609, 4607}, {70001, 70003}};
  for (size_t si = 0; si < TH_COUNT(sizes); si++)
    for (int o = 0; o < 2; o++)
      for (int ft = 0; ft < 2; ft++)
        for (int kind = 0; kind < 2; kind++) {
          const pp_dtype t = ft ? PP_F64 : PP_F32;
          const size_t na = sizes[si][0], nb = sizes[si][1];
          const uint64_t ba = kind ? nan_bits(t, 1) : num_bits(t, -0.0);
          const uint64_t bb = kind ? nan_bits(t, 4) : num_bits(t, 0.0);
          unsigned char *a = th_xmalloc(na * 8), *b = th_xmalloc(nb * 8);
          for (size_t i = 0; i < na; i++) put_bits(t, a, i, ba);
          for (size_t i = 0; i < nb; i++) put_bits(t, b, i, bb);
          check_merge_pairs(ctx, t, (pp_order)o, 4 + 4 * (size_t)((si + (size_t)o) % 2), a, na, b,
                            nb, kind ? "NaN ties across a and b" : "-0.0 in a, +0.0 in b");
          TH_FREE(a, b);
        }
}

/* CUDA: 2^26 pairs and more, where the partition kernel's searches start on samples. */
static void test_merge_pairs_sampled(pp_context *ctx) {
  if (!ctx->ops->merge_pairs || th_quick() || pp_backend_of(ctx) != PP_BACKEND_CUDA) return;
  merge_case(ctx, PP_U32, PP_ASCENDING, 4, P_DUPS, ((size_t)1 << 25) + 3, ((size_t)1 << 25) + 1,
             900);
}

/* ---- sort_copy ----------------------------------------------------------------------- */

static void check_sort_copy(pp_context *ctx, pp_dtype t, pp_order o, int vm, pp_sort_algo algo,
                            const unsigned char *keys, size_t n, const char *pattern) {
  const size_t es = pp_dtype_size(t), vs = vmode_size(vm);
  const int positions = vm == V_POS4 || vm == V_POS8;
  char what[160];
  snprintf(what, sizeof what, "sort_copy %s %s %s n=%zu %s algo %d", pp_dtype_string(t),
           oname(o), vmode_names[vm], n, pattern, (int)algo);
  unsigned char *vals = vs && !positions ? th_xmalloc(n * vs) : NULL;
  if (vals) gen_values(vs, n, vals);
  size_t *idx = th_xmalloc(n * sizeof *idx);
  unsigned char *wk = th_xmalloc(n * es), *wv = th_xmalloc(n * vs);
  ref_sort_perm(t, o, keys, n, idx);
  permute(keys, idx, n, es, wk);
  if (vals) permute(vals, idx, n, vs, wv);
  for (size_t i = 0; positions && i < n; i++) put_bits(value_dtype(vs), wv, i, idx[i]);

  placed pki = dev_array(ctx, keys, n * es), pvi = dev_array(ctx, vals, vals ? n * vs : 0);
  placed pko = dev_array(ctx, NULL, n * es), pvo = dev_array(ctx, NULL, n * vs);
  pp_status s = ctx->ops->sort_copy(ctx, t, placed_ptr(&pki), placed_ptr(&pko),
                                    vals ? placed_ptr(&pvi) : NULL, vs ? placed_ptr(&pvo) : NULL,
                                    vs, n, o, algo);
  if (s == PP_OK) s = pp_synchronize(ctx);
  if (CHECK(s == PP_OK, "%s: %s (%s)", what, pp_status_string(s), pp_last_error(ctx))) {
    check_output(ctx, &pko, wk, n, es, t, "keys_out", what);
    if (vs) check_output(ctx, &pvo, wv, n, vs, value_dtype(vs), "values_out", what);
    check_input(ctx, &pki, keys, "keys_in", what);
    if (vals) check_input(ctx, &pvi, vals, "values_in", what);
  }
  placed *all[] = {&pki, &pvi, &pko, &pvo};
  for (size_t i = 0; i < TH_COUNT(all); i++) placed_free(ctx, all[i]);
  TH_FREE(vals, idx, wk, wv);
}

static void sort_copy_case(pp_context *ctx, pp_dtype t, pp_order o, int vm, pp_sort_algo algo,
                           int p, size_t n, uint64_t stream) {
  th_rng r = th_rng_make(stream);
  unsigned char *keys = th_xmalloc(n * pp_dtype_size(t));
  gen_keys(t, p, n, &r, keys);
  check_sort_copy(ctx, t, o, vm, algo, keys, n, pattern_names[p]);
  free(keys);
}

#define N_ALGOS 5 /* pp_sort_algo: AUTO, RADIX, MERGE, SAMPLE, QUICK */

/* Small sizes, around the CPU's serial cut-offs and 2^12: every dtype, order, value mode
 * and pattern (above a few hundred keys, a third of the patterns). */
static void test_sort_copy_small(pp_context *ctx) {
  static const size_t sizes[] = {2,   3,   4,   15,   16,   17,   31,   32,   33,   255,
                                 256, 257, 511, 1025, 4095, 4096, 4097};
  uint64_t stream = 10000;
  for (size_t ti = 0; ti < N_TYPES; ti++)
    for (int o = 0; o < 2; o++)
      for (int vm = 0; vm < N_VMODES; vm++)
        for (size_t si = 0; si < TH_COUNT(sizes); si++)
          for (int p = 0; p < N_PATTERNS; p++) {
            if (sizes[si] > 300 && (p + (int)si + vm) % 3 != 0) continue; /* time */
            if (!th_sampled()) continue;
            sort_copy_case(ctx, all_types[ti], (pp_order)o, vm, (pp_sort_algo)(stream % N_ALGOS),
                           p, sizes[si], stream);
            stream++;
          }
}

/* Around 2^16 (the CPU's threads) and the GPU sorts' tiles and chunks (see test_sort.c's
 * test_sort_tiles): one pattern per dtype, order, value mode and size. */
static void test_sort_copy_tiles(pp_context *ctx) {
  static const size_t sizes[] = {4607,  4608,  4609,  5631,  5632,  5633,  8703,
                                 8704,  8705,  16895, 16896, 16897, 33793, 65535,
                                 65536, 65537, 100003, 262147};
  uint64_t stream = 20000;
  for (size_t ti = 0; ti < N_TYPES; ti++)
    for (int o = 0; o < 2; o++)
      for (int vm = 0; vm < N_VMODES; vm++)
        for (size_t si = 0; si < TH_COUNT(sizes); si++) {
          if (th_quick() && sizes[si] > 70000) continue;
          if (!th_sampled()) continue;
          const int p = (int)(si * 2 + ti * 3 + (size_t)vm * 5 + (size_t)o) % N_PATTERNS;
          sort_copy_case(ctx, all_types[ti], (pp_order)o, vm, (pp_sort_algo)(stream % N_ALGOS), p,
                         sizes[si], stream);
          stream++;
        }
}

/* A few million keys: positions of both widths, values, ties and NaNs. */
static void test_sort_copy_large(pp_context *ctx) {
  if (th_quick()) return;
  static const struct {
    pp_dtype t;
    pp_order o;
    int vm, p;
    size_t n;
  } cases[] = {
      {PP_F32, PP_DESCENDING, V_POS4, P_NANS, 3000017},
      {PP_U64, PP_ASCENDING, V_8, P_RANDOM, 3000017},
      {PP_I32, PP_ASCENDING, V_POS8, P_DUPS, ((size_t)1 << 20) + 3},
      {PP_U8, PP_ASCENDING, V_POS4, P_RANDOM, ((size_t)2 << 20) + 5},
      {PP_F64, PP_DESCENDING, V_NONE, P_ZEROS, ((size_t)2 << 20) + 7},
  };
  for (size_t i = 0; i < TH_COUNT(cases); i++)
    for (int algo = 0; algo < N_ALGOS; algo += 2) /* AUTO, MERGE, QUICK */
      sort_copy_case(ctx, cases[i].t, cases[i].o, cases[i].vm, (pp_sort_algo)algo, cases[i].p,
                     cases[i].n, 30000 + i);
}

/* Keys of dtype t whose bits outside vary are a base's: floats a base of 1.5 (positive,
 * so the image varies in the digits of vary alone) with an exponent of all ones turned
 * into a finite one by clearing its top bit (clear in 1.5, so it varies); integers a
 * random base. specials: a few -0.0 and NaNs on top. */
static void gen_vary_keys(pp_dtype t, uint64_t vary, int specials, size_t n, th_rng *r, unsigned char *out) {
  const int wide = pp_dtype_size(t) == 8, fl = t == PP_F32 || t == PP_F64;
  const uint64_t expo = wide ? 0x7ff0000000000000ull : 0x7f800000u;
  const uint64_t base = fl ? num_bits(t, 1.5) : th_next(r);
  for (size_t i = 0; i < n; i++) {
    uint64_t x = (base & ~vary) | (th_next(r) & vary);
    if (!wide) x &= 0xffffffffu;
    if (fl && (x & expo) == expo) x &= ~(expo & ~(expo >> 1)); /* the top exponent bit, 0 in 1.5 */
    put_bits(t, out, i, x);
  }
  for (size_t i = 0; specials && i < n; i += 997) {
    put_bits(t, out, i, nan_bits(t, i / 997));
    if (i + 1 < n) put_bits(t, out, i + 1, num_bits(t, -0.0));
  }
}

/* The number of digit positions (bytes) where the sort images of n keys (sort.cuh: the
 * bits, a signed key's sign flipped, a float's sign flipped or, negative, every bit)
 * differ; no key -0.0 or NaN. A descending sort inverts the images: the same count. */
static int image_digits(pp_dtype t, const unsigned char *keys, size_t n) {
  const int wide = pp_dtype_size(t) == 8;
  const uint64_t sign = wide ? (uint64_t)1 << 63 : (uint64_t)1 << 31;
  uint64_t any = 0, all = ~(uint64_t)0;
  for (size_t i = 0; i < n; i++) {
    uint64_t x = get_bits(t, keys, i);
    if (t == PP_I32 || t == PP_I64) x ^= sign;
    if (t == PP_F32 || t == PP_F64) x = x & sign ? ~x : x | sign;
    if (!wide) x &= 0xffffffffu;
    any |= x;
    all &= x;
  }
  int d = 0;
  for (int b = 0; b < (wide ? 8 : 4); b++) d += ((any ^ all) >> (8 * b) & 0xff) != 0;
  return d;
}

/* Positions (8-byte above all, where the GPU radix sort carries them as 4-byte words and
 * widens them in the pass that stores them last) with keys whose images vary in 0 to 4
 * (8-byte keys: 8) digit positions, so that the GPU makes 1 (0 forces one), 2, 3 or 4
 * passes: the last pass alone, the first and the last, and with an odd count a first pass
 * that writes its 4-byte words into the 8-byte output, which the last pass overwrites.
 * Sizes around the one-block sort (4096 keys) and the tiles of 4-byte keys with 4-byte
 * values (384 x 23) and of 8-byte keys with 4-byte values (384 x 12), then many tiles;
 * on CUDA also past PP_SORT_PACK_FROM (3 x 2^23), where 4-byte keys and their positions
 * travel packed. The output is compared exactly with the serial stable sort's. */
static void test_sort_copy_digits(pp_context *ctx) {
  static const struct {
    pp_dtype t;
    uint64_t vary; /* the bits that vary */
    int specials;  /* -0.0 and NaNs: the passes read stored bits, not images */
    int digits;    /* the digit positions where the images vary (checked; -1: any) */
  } cases[] = {
      {PP_U32, 0, 0, 0},                     /* all keys equal: one forced pass */
      {PP_I32, 0x0000ff00u, 0, 1},           /* one pass, input to output */
      {PP_F32, 0x000000ffu, 0, 1},           /* one pass */
      {PP_U32, 0x00ff00ffu, 0, 2},           /* the first pass and the last */
      {PP_F32, 0x7f00ff00u, 0, 2},           /* the first pass and the last */
      {PP_I32, 0xffff00ffu, 0, 3},           /* both signs */
      {PP_F32, 0x7fffff00u, 0, 3},
      {PP_U32, 0xffffffffu, 0, 4},
      {PP_F32, 0x7fffffffu, 0, 4},           /* images between the passes */
      {PP_F32, 0xffffffffu, 1, -1},          /* both signs, -0.0 and NaNs: stored bits */
      {PP_U64, 0, 0, 0},                     /* all keys equal */
      {PP_I64, 0x0000000000ff0000ull, 0, 1},
      {PP_F64, 0x00ff0000000000ffull, 0, 2},
      {PP_U64, 0x000000ff00ff00ffull, 0, 3},
      {PP_I64, 0xff0000ff00ff00ffull, 0, 4}, /* both signs */
      {PP_F64, 0x7fffffffffffffffull, 0, 8},
      {PP_F64, 0xffffffffffffffffull, 1, -1}, /* -0.0 and NaNs */
  };
  static const size_t sizes4[] = {2, 4095, 4096, 4097, 8831, 8832, 8833, 17665, 100003};
  static const size_t sizes8[] = {3, 4096, 4097, 4607, 4608, 4609, 9217, 100003};
  const size_t packed_n = ((size_t)3 << 23) + 5;
  uint64_t stream = 40000;
  for (size_t c = 0; c < TH_COUNT(cases); c++) {
    const pp_dtype t = cases[c].t;
    const int wide = pp_dtype_size(t) == 8;
    const size_t *sizes = wide ? sizes8 : sizes4;
    const size_t ns = wide ? TH_COUNT(sizes8) : TH_COUNT(sizes4);
    char pattern[80];
    snprintf(pattern, sizeof pattern, "bits 0x%" PRIx64 " vary%s", cases[c].vary,
             cases[c].specials ? ", -0.0 and NaNs" : "");
    for (int o = 0; o < 2; o++)
      for (size_t si = 0; si <= ns; si++) {
        const size_t n = si < ns ? sizes[si] : packed_n;
        /* packed (2 or more passes): f32 (the bench's argsort) and 3 passes, one order each,
           for time: the serial reference takes seconds at this size */
        const int packed_case = !wide && (t == PP_F32 || cases[c].digits == 3) && cases[c].digits != 1;
        if (si == ns && (!packed_case || (size_t)o != c % 2 || th_quick() || pp_backend_of(ctx) != PP_BACKEND_CUDA))
          continue;
        if (!th_sampled()) continue;
        th_rng r = th_rng_make(stream);
        unsigned char *keys = th_xmalloc(n * pp_dtype_size(t));
        gen_vary_keys(t, cases[c].vary, cases[c].specials, n, &r, keys);
        const int digits = image_digits(t, keys, n);
        if (cases[c].digits >= 0 && n > 1000) /* the keys are what the case says */
          CHECK(digits == cases[c].digits, "sort_copy keys %s %s: images vary in %d digits, want %d",
                pp_dtype_string(t), pattern, digits, cases[c].digits);
        /* 8-byte positions always; 4-byte ones at every other size below packed_n */
        for (int vm = V_POS8; vm >= V_POS4; vm--)
          if (vm == V_POS8 || (si < ns && (si + (size_t)o) % 2 == 0))
            check_sort_copy(ctx, t, (pp_order)o, vm, (pp_sort_algo)(stream % 2), keys, n, pattern);
        free(keys);
        stream++;
      }
  }
}

static void test_sort_copy(pp_context *ctx) {
  if (!have_entry(ctx->ops->sort_copy != NULL, "sort_copy")) return;
  test_sort_copy_small(ctx);
  test_sort_copy_tiles(ctx);
  test_sort_copy_large(ctx);
  test_sort_copy_digits(ctx);
}

int main(int argc, char **argv) {
  static const th_step steps[] = {test_merge_pairs, test_merge_pairs_ties,
                                  test_merge_pairs_sampled, test_sort_copy};
  return th_run(argc, argv, steps, TH_COUNT(steps));
}
