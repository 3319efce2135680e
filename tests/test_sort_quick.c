/* test_sort_quick.c — pp_sort with PP_SORT_QUICK, on what is particular to the quicksort
 * (src/cuda/sort_quick.cu, src/cpu/sort_quick.c); test_sort covers the contract shared by
 * every algorithm. Each result is compared bit for bit with a serial stable reference
 * (a sort of (order image, index) pairs), keys and values, so stability is checked
 * everywhere, not only on ties that happen to be visible.
 *
 *  - sizes around the GPU's tile and leaf size (4096 keys) and the CPU's insertion-sort and
 *    task thresholds, on every dtype, both orders, keys alone and with 4- and 8-byte
 *    values, through device pointers one element past an aligned start;
 *  - inputs that break naive pivots: sorted, reversed, all equal, three values, organ
 *    pipe, sawtooth, 90% one value (a long run equal to the pivot), and the special
 *    floats and integer extremes;
 *  - a "median killer" per backend: keys placed where that backend's pivot sampler looks,
 *    so that every pivot is nearly the smallest key and each level peels off only a few
 *    keys; the recursion then reaches its depth limit and the fallback sort (BIG items on
 *    the GPU, a merge sort on the CPU) must finish the job. The killers replicate the
 *    samplers' position hash; should a sampler change, its killer becomes one more random
 *    input (still checked, but no longer reaching the fallback): update both together;
 *  - on the GPU, 2^24 + 5 pairs (a dozen levels of device-side launches).
 */
#include "harness.h"

#include <inttypes.h>
#include <stdbool.h>

/* ---- order images (API.md): what the reference sorts by -------------------------------- */

static uint64_t image_of(pp_dtype t, uint64_t b, bool desc) {
  uint64_t k = b;
  switch (t) {
  case PP_I32: k = b ^ 0x80000000u; break;
  case PP_I64: k = b ^ 0x8000000000000000ull; break;
  case PP_F32: {
    const uint32_t x = (uint32_t)b, mag = x & 0x7fffffffu;
    uint32_t r = (x & 0x80000000u) ? ~x : (x | 0x80000000u);
    if (mag == 0) r = 0x80000000u;
    if (mag > 0x7f800000u) r = 0xffffffffu;
    k = r;
    break;
  }
  case PP_F64: {
    const uint64_t mag = b & 0x7fffffffffffffffull;
    uint64_t r = (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
    if (mag == 0) r = 0x8000000000000000ull;
    if (mag > 0x7ff0000000000000ull) r = ~0ull;
    k = r;
    break;
  }
  default: break;
  }
  const size_t es = pp_dtype_size(t);
  const uint64_t mask = es == 8 ? ~0ull : (1ull << (8 * es)) - 1;
  return (desc ? ~k : k) & mask;
}

static uint64_t get_bits(const void *p, size_t es, size_t i) {
  uint64_t v = 0;
  memcpy(&v, (const unsigned char *)p + i * es, es); /* little-endian */
  return v;
}
static void put_bits(void *p, size_t es, size_t i, uint64_t v) {
  memcpy((unsigned char *)p + i * es, &v, es);
}

typedef struct ref_pair {
  uint64_t img, idx;
} ref_pair;

static int cmp_ref(const void *a, const void *b) {
  const ref_pair *x = a, *y = b;
  if (x->img != y->img) return x->img < y->img ? -1 : 1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* perm[i]: the input index of output i in the stable sort. */
static uint64_t *reference_perm(pp_dtype t, const void *keys, size_t n, bool desc) {
  const size_t es = pp_dtype_size(t);
  ref_pair *r = th_xmalloc(n * sizeof *r);
  for (size_t i = 0; i < n; i++) {
    r[i].img = image_of(t, get_bits(keys, es, i), desc);
    r[i].idx = i;
  }
  qsort(r, n, sizeof *r, cmp_ref);
  uint64_t *perm = th_xmalloc(n * sizeof *perm);
  for (size_t i = 0; i < n; i++) perm[i] = r[i].idx;
  free(r);
  return perm;
}

static uint64_t value_of(size_t i, size_t vs) {
  return vs == 8 ? ((uint64_t)i | ((uint64_t)(i ^ 0x5a5a) << 40) | 0x8000000000000000ull) : (uint32_t)(i * 2654435761u);
}

/* Sorts a copy of keys (and values value_of(i)) with PP_SORT_QUICK through pp_malloc memory,
 * one element past an aligned start, and compares with the reference. */
static int check_quick(pp_context *ctx, pp_dtype t, const void *keys, size_t n, size_t vs, bool desc,
                       const char *what) {
  const size_t es = pp_dtype_size(t);
  uint64_t *perm = reference_perm(t, keys, n, desc);
  unsigned char *hk = th_xmalloc((n + 2) * es), *hv = vs ? th_xmalloc((n + 2) * vs) : NULL;
  memset(hk, 0xa5, (n + 2) * es);
  memcpy(hk + es, keys, n * es);
  if (vs) {
    memset(hv, 0xa5, (n + 2) * vs);
    for (size_t i = 0; i < n; i++) put_bits(hv + vs, vs, i, value_of(i, vs));
  }
  unsigned char *dk = th_dev_from_host(ctx, hk, (n + 2) * es);
  unsigned char *dv = vs ? th_dev_from_host(ctx, hv, (n + 2) * vs) : NULL;
  pp_sort_opts opts = {desc ? PP_DESCENDING : PP_ASCENDING, PP_SORT_QUICK};
  pp_status s = pp_sort(ctx, t, dk + es, vs ? dv + vs : NULL, vs, n, &opts);
  int ok = CHECK_STATUS(s, PP_OK, "%s: pp_sort quick %s n=%zu vs=%zu %s (%s)", what, pp_dtype_string(t), n, vs,
                        desc ? "desc" : "asc", pp_last_error(ctx));
  if (ok) {
    unsigned char *gk = th_xmalloc((n + 2) * es), *gv = vs ? th_xmalloc((n + 2) * vs) : NULL;
    th_copy(ctx, gk, dk, (n + 2) * es);
    if (vs) th_copy(ctx, gv, dv, (n + 2) * vs);
    size_t bad = n, badv = n;
    for (size_t i = 0; i < n && bad == n; i++)
      if (get_bits(gk + es, es, i) != get_bits(keys, es, perm[i])) bad = i;
    for (size_t i = 0; vs && i < n && badv == n; i++)
      if (get_bits(gv + vs, vs, i) != value_of(perm[i], vs)) badv = i;
    const bool fenced = get_bits(gk, es, 0) == get_bits(hk, es, 0) &&
                        get_bits(gk, es, n + 1) == get_bits(hk, es, n + 1) &&
                        (!vs || (get_bits(gv, vs, 0) == get_bits(hv, vs, 0) &&
                                 get_bits(gv, vs, n + 1) == get_bits(hv, vs, n + 1)));
    ok = CHECK(bad == n, "%s: %s n=%zu vs=%zu %s: keys differ first at %zu (got %#" PRIx64 ", want %#" PRIx64 ")",
               what, pp_dtype_string(t), n, vs, desc ? "desc" : "asc", bad,
               bad < n ? get_bits(gk + es, es, bad) : 0, bad < n ? get_bits(keys, es, perm[bad]) : 0);
    ok &= CHECK(badv == n, "%s: %s n=%zu vs=%zu %s: values differ first at %zu (stability)", what,
                pp_dtype_string(t), n, vs, desc ? "desc" : "asc", badv);
    ok &= CHECK(fenced, "%s: %s n=%zu vs=%zu: wrote outside the arrays", what, pp_dtype_string(t), n, vs);
    free(gk);
    free(gv);
  }
  th_dev_free(ctx, dk);
  if (dv) th_dev_free(ctx, dv);
  free(hk);
  free(hv);
  free(perm);
  return ok;
}

/* ---- inputs ---------------------------------------------------------------------------- */

enum pattern {
  P_RANDOM, P_SORTED, P_REVERSED, P_EQUAL, P_THREE, P_ORGAN, P_SAW, P_MOSTLY_ONE, P_SPECIAL, P_COUNT
};
static const char *const pattern_name[P_COUNT] = {"random", "sorted",   "reversed", "equal",  "three",
                                                  "organ",  "sawtooth", "90% one",  "special"};

static uint64_t special_bits(pp_dtype t, uint64_t r) {
  /* each special as {f32 bits, f64 bits} */
  static const uint64_t floats[12][2] = {
      {0, 0},                                       /* +0 */
      {0x80000000u, 0x8000000000000000ull},         /* -0 */
      {0x7f800000u, 0x7ff0000000000000ull},         /* +inf */
      {0xff800000u, 0xfff0000000000000ull},         /* -inf */
      {0x7fc00000u, 0x7ff8000000000000ull},         /* quiet NaN */
      {0xffc00001u, 0xfff8000000000123ull},         /* negative NaN with a payload */
      {0x3f800000u, 0x3ff0000000000000ull},         /* 1 */
      {0xbf800000u, 0xbff0000000000000ull},         /* -1 */
      {1, 1},                                       /* smallest subnormal */
      {0x80000001u, 0x8000000000000001ull},         /* its negative */
      {0x7fffffffu, 0x7fffffffffffffffull},         /* NaN, all payload bits */
      {0x00800000u, 0x0010000000000000ull},         /* smallest normal */
  };
  static const uint64_t ints[] = {0, 1, ~0ull, 0x7fffffffffffffffull, 0x8000000000000000ull,
                                  0x7fffffffu, 0x80000000u, 0xffffffffu, 2, 0xfffffffe, 0x7f, 0x80};
  if (t == PP_F32 || t == PP_F64) return floats[r % 12][t == PP_F64];
  return ints[r % 12];
}

/* n keys of t in the given pattern (sorted and reversed in the order images' order). */
static void *make_keys(pp_dtype t, size_t n, int pat, th_rng *rng) {
  const size_t es = pp_dtype_size(t);
  unsigned char *k = th_xmalloc(n * es);
  const uint64_t a = th_next(rng), b = th_next(rng), c = th_next(rng);
  for (size_t i = 0; i < n; i++) {
    uint64_t v = th_next(rng);
    switch (pat) {
    case P_EQUAL: v = a; break;
    case P_THREE: v = v % 3 == 0 ? a : v % 3 == 1 ? b : c; break;
    case P_SAW: v = i % 97; break;
    case P_MOSTLY_ONE: v = v % 10 ? a : v; break;
    case P_SPECIAL: v = special_bits(t, v); break;
    case P_ORGAN: v = i < n / 2 ? i : n - i; break;
    default: break;
    }
    put_bits(k, es, i, v);
  }
  if (pat == P_SORTED || pat == P_REVERSED) {
    uint64_t *perm = reference_perm(t, k, n, pat == P_REVERSED);
    unsigned char *s = th_xmalloc(n * es);
    for (size_t i = 0; i < n; i++) put_bits(s, es, i, get_bits(k, es, perm[i]));
    free(perm);
    free(k);
    k = s;
  }
  return k;
}

/* ---- median killers ---------------------------------------------------------------------- */

static uint64_t mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Order images (0, 1, 2, ... small; the rest large and random) such that every level's
 * pivot takes only `peel` keys off the front of the segment. rest[] holds the input
 * indices still in the segment, in input order (the partition is stable, so the child
 * above the pivot is exactly them, in that order). */
static uint64_t *killer_images(size_t n, bool gpu, int levels, th_rng *rng) {
  uint64_t *img = th_xmalloc(n * sizeof *img);
  size_t *rest = th_xmalloc(n * sizeof *rest), len = n;
  for (size_t i = 0; i < n; i++) {
    img[i] = (1ull << 40) + (th_next(rng) >> 24); /* above every small image */
    rest[i] = i;
  }
  uint64_t small = 0;
  size_t start = 0;
  for (int level = 0; level < levels; level++) {
    size_t pos[32];
    int small_slots;
    if (gpu) { /* sort_quick.cu quick_emit: 32 stratified samples, pivot of rank 16 */
      for (unsigned lane = 0; lane < 32; lane++) {
        const uint64_t r = mix64((uint64_t)start ^ ((uint64_t)len << 21) ^ ((uint64_t)level << 58) ^ lane) % len;
        pos[lane] = ((uint64_t)lane * len + r) / 32;
      }
      small_slots = 17; /* 16 below the pivot, then the pivot */
    } else { /* sort_quick.c: ninther of 9 stratified samples; s0 < s1 < s3 < s4 smallest
                makes the pivot s4, with three keys below it */
      for (unsigned i = 0; i < 9; i++) {
        const uint64_t r = mix64((uint64_t)start ^ ((uint64_t)len << 20) ^ i) % len;
        pos[i] = (size_t)i * (len / 9) + r / 9;
      }
      pos[2] = pos[3];
      pos[3] = pos[4]; /* the order the small images go to: s0, s1, s3, s4 */
      small_slots = 4;
    }
    for (int s = 0; s < small_slots; s++) img[rest[pos[s]]] = small++;
    /* the segment above the pivot: every key not just given a small image */
    size_t w = 0;
    for (size_t i = 0; i < len; i++) {
      bool taken = false;
      for (int s = 0; s < small_slots; s++) taken |= pos[s] == i;
      if (!taken) rest[w++] = rest[i];
    }
    start += len - w;
    len = w;
  }
  free(rest);
  return img;
}

static void check_killer(pp_context *ctx, bool gpu) {
  /* GPU: 22 levels (PP_QUICK_MAX_LEVELS) of 17 keys each, then a BIG item of ~1M keys;
   * CPU: depth 2 log2(n) + 8 = 42 levels of 4 keys, then the merge sort */
  const size_t n = gpu ? ((size_t)1 << 20) + 3 : ((size_t)1 << 17) + 3;
  const int levels = gpu ? 22 : 44;
  th_rng rng = th_rng_make(0x4b111e5);
  uint64_t *img = killer_images(n, gpu, levels, &rng);
  /* u32 ascending: the key is the image; u64 descending: the key is its complement */
  uint32_t *k32 = th_xmalloc(n * 4);
  uint64_t *k64 = th_xmalloc(n * 8);
  for (size_t i = 0; i < n; i++) {
    k32[i] = (uint32_t)(img[i] < (1ull << 32) ? img[i] : (img[i] >> 8) | 0x80000000u);
    k64[i] = ~img[i];
  }
  check_quick(ctx, PP_U32, k32, n, 4, false, "median killer");
  check_quick(ctx, PP_U64, k64, n, 8, true, "median killer");
  check_quick(ctx, PP_U64, k64, n, 0, true, "median killer");
  free(k32);
  free(k64);
  free(img);
}

int main(int argc, char **argv) {
  pp_context *ctx = th_init(argc, argv);
  const bool gpu = pp_backend_of(ctx) == PP_BACKEND_CUDA;
  /* `test_sort_quick cuda small`: leaves out the sizes from 2^20 up, for a run under
   * compute-sanitizer (the median killer's 2^20 keys stay: they are the fallback's test) */
  const bool small = (argc > 2 && strcmp(argv[2], "small") == 0) || th_quick();
  const pp_dtype types[] = {PP_U8, PP_I32, PP_U32, PP_I64, PP_U64, PP_F32, PP_F64};
  th_rng rng = th_rng_make(5);

  /* every dtype, order and value width around the tile / leaf size and the CPU thresholds */
  const size_t small_sizes[] = {2, 3, 33, 4095, 4097, 8193};
  for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++)
    for (size_t si = 0; si < sizeof small_sizes / sizeof *small_sizes; si++)
      for (int pat = 0; pat < P_COUNT; pat++)
        for (int d = 0; d < 2; d++)
          for (size_t vs = 0; vs <= 8; vs += 4) {
            if (small_sizes[si] < 33 && pat != P_RANDOM && pat != P_EQUAL) continue;
            void *k = make_keys(types[ti], small_sizes[si], pat, &rng);
            char what[64];
            snprintf(what, sizeof what, "%s", pattern_name[pat]);
            check_quick(ctx, types[ti], k, small_sizes[si], vs, d == 1, what);
            free(k);
          }

  /* several levels of recursion (several GPU tiles per segment; CPU tasks and, from
   * 262144 keys, partitions split over tasks) */
  const size_t mid_sizes[] = {12289, 65537, ((size_t)1 << 20) + 7};
  const pp_dtype mid_types[] = {PP_F32, PP_U64};
  for (size_t ti = 0; ti < 2; ti++)
    for (size_t si = 0; si < (small ? 2u : 3u); si++)
      for (int pat = 0; pat < P_COUNT; pat++) {
        void *k = make_keys(mid_types[ti], mid_sizes[si], pat, &rng);
        check_quick(ctx, mid_types[ti], k, mid_sizes[si], ti == 0 ? 4 : 8, pat % 2 == 1, pattern_name[pat]);
        if (si == 2) check_quick(ctx, mid_types[ti], k, mid_sizes[si], 0, pat % 2 == 0, pattern_name[pat]);
        free(k);
      }

  check_killer(ctx, gpu);

  if (gpu && !small) { /* a deep device-side recursion, and the long runs of COPY items */
    const size_t n = ((size_t)1 << 24) + 5;
    const int pats[] = {P_RANDOM, P_EQUAL, P_MOSTLY_ONE};
    for (int i = 0; i < 3; i++) {
      void *k = make_keys(PP_U32, n, pats[i], &rng);
      check_quick(ctx, PP_U32, k, n, 4, false, pattern_name[pats[i]]);
      free(k);
    }
  }
  return th_finish(ctx);
}
