/*
 * test_merge.c — pp_merge against a serial reference written here.
 *
 * Usage: test_merge [cpu|cuda]
 *
 * The reference order is test_sort.c's (th_sort_data.h): API.md's order as a comparison of
 * values. pp_merge is stable — of equal keys, a's come first, each input's in its order —
 * so the expected output, the reference sort of a followed by b, is exact to the bit and
 * compared byte for byte. Every dtype x order x pairs of sizes (empty sides, lopsided,
 * around the GPU tiles, millions) x data patterns, a and b each in host or pp_malloc
 * memory, aligned or offset, with guard bytes that must stay untouched; ties across a and
 * b whose bits show which input came first; on CUDA, merges of 2^26 keys where the
 * partition kernel's searches start on samples, and of about 2^25 keys, where its search
 * changes from several lanes a split to one.
 *
 * Environment: PARPRIM_TEST_SORT_THIN=k (k > 1, for compute-sanitizer) keeps the ties
 * only, as test_sort leaves out its huge sizes.
 */
#include "harness.h"
#include "th_sort_data.h"

static long g_merges;

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
      {65535, 65537}, {150000, 7}, {7, 150000},    {100003, 99999},
      /* around GPU tiles of 256 x 17 and 512 x 17 four-byte keys (4352, 8704) and of
         256 x 7 and 512 x 7 eight-byte keys (1792, 3584): one full tile, one key over, one
         key short of two */
      {2176, 2176},   {2177, 2176}, {1792, 0},     {896, 897},    {1791, 1792},
      {4351, 4353},   {4352, 4353}, {8704, 1},     {3583, 3586}};
  const size_t ns = sizeof sizes / sizeof sizes[0];
  unsigned mem = 0;
  uint64_t stream = 300000;
  for (size_t k = 0; k < sort_grid_count(ns); k++) {
    const sort_grid g = sort_grid_at(k, ns);
    const size_t na = sizes[g.si][0], nb = sizes[g.si][1];
    if (na + nb > 5000 && g.p != (int)(g.si + 3 * g.ti + 5 * (size_t)g.o) % N_PATTERNS) continue; /* time */
    merge_pattern(ctx, all_types[g.ti], (pp_order)g.o, g.p, na, nb, mem++ % 8, stream++);
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
  /* where the GPU's blocks stop finding their own splits on 132 SMs (two tiles of 4352 per
     SM: 1148928 keys) and one tile more, all offset by one element */
  merge_pattern(ctx, PP_U32, PP_DESCENDING, P_DUPS, 574464, 574464, 5, stream++);
  merge_pattern(ctx, PP_F32, PP_ASCENDING, P_RANDOM, 574464, 574465 + 4352, 4, stream++);
}

/* CUDA: merges of 2^26 keys and more, where the partition kernel's searches start on
 * samples of a and b: ties across a and b whose bits differ (-0.0 in a, +0.0 in b: a's
 * first), a descending run against a short one, and a short run against a long one; then
 * both sides of 8192 tiles, where the partition changes from several lanes a split to one.
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
  /* 8192 tiles of 256 x 17 four-byte keys, the most whose partition searches each split
     with several lanes, and one key more, searched by one thread a split without samples;
     then the same for tiles of 256 x 7 eight-byte keys: runs that interleave unevenly,
     with ties across them, offset by one element */
  const size_t nu = (size_t)8192 * 4352 / 2;
  uint32_t *ua = th_xmalloc((nu + 1) * 4), *ub = th_xmalloc(nu * 4);
  for (size_t i = 0; i <= nu; i++) ua[i] = (uint32_t)(i * 5 / 3);
  for (size_t j = 0; j < nu; j++) ub[j] = (uint32_t)(j * 5 / 2 + (j & 1));
  check_merge(ctx, PP_U32, PP_ASCENDING, ua, nu, ub, nu, 5, "8192 tiles, uneven interleaving");
  check_merge(ctx, PP_U32, PP_ASCENDING, ub, nu, ua, nu + 1, 6, "8192 tiles + 1 key, uneven interleaving");
  free(ua);
  free(ub);
  const size_t nd = (size_t)8192 * 1792 / 2;
  double *da = th_xmalloc((nd + 1) * 8), *db = th_xmalloc(nd * 8);
  for (size_t i = 0; i <= nd; i++) da[i] = -(double)(i / 3);
  for (size_t j = 0; j < nd; j++) db[j] = -(double)(j * 2 / 5) - 0.5 * (double)(j % 5 == 4);
  check_merge(ctx, PP_F64, PP_DESCENDING, da, nd, db, nd, 4, "8192 tiles of f64, uneven interleaving");
  check_merge(ctx, PP_F64, PP_DESCENDING, db, nd, da, nd + 1, 7, "8192 tiles + 1 key of f64");
  free(da);
  free(db);
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


int main(int argc, char **argv) {
  pp_context *ctx = th_init(argc, argv);
  const char *e = getenv("PARPRIM_TEST_SORT_THIN");
  const int thin = e && *e && strtol(e, NULL, 10) > 1;
  if (thin) printf("thinned: the ties only\n");
  if (!thin) test_merge(ctx);
  test_merge_ties(ctx);
  if (!thin) test_merge_large(ctx);
  printf("%ld merges checked\n", g_merges);
  return th_finish(ctx);
}
