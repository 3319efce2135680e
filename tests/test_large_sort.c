/* test_large_sort.c — pp_sort beyond 2^31 and 2^32 elements (ctest label "large"; run on
 * the GPU machine, which has the memory: about 10 GiB of host memory for the u8 case and
 * 48 GiB for the u32 pairs, half of it device memory on the CUDA run).
 *
 * Both inputs are functions of the index, so every element of the result can be checked,
 * not sampled:
 *  - u8 keys, 2^32 + 37 of them: the sorted array must be each byte value repeated as often
 *    as it occurs, the counts known in advance; sorted ascending, then descending;
 *  - u32 keys with u32 values, 2^31 + 19 pairs, key_of(i) a hash with many repeats and
 *    values the original index: the result must be sorted by key, equal keys in increasing
 *    value (stability), every value a distinct index below n (a permutation), and every
 *    key equal to key_of(its value) (keys and values moved together).
 * Any 32-bit count, index or offset in a kernel, the core or the staging gives a wrong
 * answer here rather than a lucky one. */
#include "harness.h"

#include <inttypes.h>

/* (overridable when compiling, for a quick run of the same code at a small size) */
#ifndef N_U8
#define N_U8 (((size_t)1 << 32) + 37)
#endif
#ifndef N_PAIRS
#define N_PAIRS (((size_t)1 << 31) + 19)
#endif

/* Every byte value, in uneven numbers (every seventh index halved). */
static uint8_t u8_of(size_t i) {
  uint8_t v = (uint8_t)(((uint64_t)i * 0x9E3779B97F4A7C15ull) >> 56);
  return i % 7 == 0 ? v / 2 : v;
}

/* The low byte is the same in every key: 2^24 distinct keys for 2^31 pairs, each repeated
 * about 128 times, so stability is tested all over the array; and a radix sort that skips
 * the constant digit makes an odd number of passes, which ends with a copy back. */
static uint32_t key_of(size_t i) {
  uint64_t z = ((uint64_t)i + 0x632BE59BD9B4E019ull) * 0xBF58476D1CE4E5B9ull;
  z ^= z >> 31;
  z *= 0x94D049BB133111EBull;
  z ^= z >> 29;
  return ((uint32_t)(z >> 32) & ~(uint32_t)0xff) | 0x5a;
}

/* Sorts n elements of t in host memory h with pp_sort, through pp_malloc memory as a real
 * GPU user's data would be. */
static pp_status sort_via_backend(pp_context *ctx, pp_dtype t, void *h, size_t es, void *hv,
                                  size_t vs, size_t n, pp_order o) {
  void *dk = th_dev_from_host(ctx, h, n * es), *dv = hv ? th_dev_from_host(ctx, hv, n * vs) : NULL;
  pp_sort_opts opts = {o, PP_SORT_AUTO};
  pp_status s = pp_sort(ctx, t, dk, dv, vs, n, &opts);
  if (s == PP_OK) s = pp_synchronize(ctx);
  if (s == PP_OK) {
    th_copy(ctx, h, dk, n * es);
    if (hv) th_copy(ctx, hv, dv, n * vs);
  }
  th_dev_free(ctx, dk);
  if (dv) th_dev_free(ctx, dv);
  return s;
}

static void test_u8(pp_context *ctx) {
  const size_t n = N_U8;
  uint8_t *h = th_xmalloc(n);
  uint64_t count[256] = {0};
#pragma omp parallel for reduction(+ : count[:256]) schedule(static)
  for (size_t i = 0; i < n; i++) {
    h[i] = u8_of(i);
    count[h[i]]++;
  }
  h[n - 1] = 0; /* the smallest value, last: it must travel all the way */
  count[u8_of(n - 1)]--;
  count[0]++;

  for (int o = 0; o < 2; o++) {
    pp_status s = sort_via_backend(ctx, PP_U8, h, 1, NULL, 0, n, (pp_order)o);
    CHECK(s == PP_OK, "pp_sort u8 %s over 2^32+37: %s: %s", o ? "desc" : "asc",
          pp_status_string(s), pp_last_error(ctx));
    if (s != PP_OK) break;
    /* the run of value v must start where the counts of the values before it end */
    size_t bad = n;
    size_t start = 0;
    for (int r = 0; r < 256; r++) {
      int v = o ? 255 - r : r;
      size_t end = start + count[v];
      size_t first_bad = n;
#pragma omp parallel for reduction(min : first_bad) schedule(static)
      for (size_t i = start; i < end; i++)
        if (h[i] != v && i < first_bad) first_bad = i;
      if (first_bad < bad) bad = first_bad;
      start = end;
    }
    CHECK(start == n && bad == n,
          "pp_sort u8 %s over 2^32+37: element %zu is %u, not the value its position needs",
          o ? "desc" : "asc", bad, bad < n ? h[bad] : 0);
  }
  free(h);
}

static void test_u32_pairs(pp_context *ctx) {
  const size_t n = N_PAIRS;
  uint32_t *k = th_xmalloc(n * sizeof *k), *v = th_xmalloc(n * sizeof *v);
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) {
    k[i] = key_of(i);
    v[i] = (uint32_t)i;
  }
  pp_status s = sort_via_backend(ctx, PP_U32, k, 4, v, 4, n, PP_ASCENDING);
  CHECK(s == PP_OK, "pp_sort u32 pairs over 2^31+19: %s: %s", pp_status_string(s),
        pp_last_error(ctx));
  if (s == PP_OK) {
    /* one bit per index: each value must be a distinct index below n */
    uint8_t *seen = calloc(n / 8 + 1, 1);
    if (!seen) {
      printf("FATAL: out of host memory\n");
      exit(1);
    }
    size_t unsorted = n, unstable = n, wrong_key = n, bad_value = n;
#pragma omp parallel for reduction(min : unsorted, unstable, wrong_key, bad_value) schedule(static)
    for (size_t i = 0; i < n; i++) {
      if (i > 0 && k[i - 1] > k[i] && i < unsorted) unsorted = i;
      if (i > 0 && k[i - 1] == k[i] && v[i - 1] >= v[i] && i < unstable) unstable = i;
      if (v[i] >= n) {
        if (i < bad_value) bad_value = i;
        continue;
      }
      if (k[i] != key_of(v[i]) && i < wrong_key) wrong_key = i;
      uint8_t bit = (uint8_t)(1u << (v[i] % 8)), old;
#pragma omp atomic capture
      {
        old = seen[v[i] / 8];
        seen[v[i] / 8] |= bit;
      }
      if ((old & bit) && i < bad_value) bad_value = i;
    }
    free(seen);
    CHECK(unsorted == n, "pp_sort u32 pairs: keys out of order at %zu", unsorted);
    CHECK(unstable == n, "pp_sort u32 pairs: equal keys not in input order at %zu", unstable);
    CHECK(bad_value == n, "pp_sort u32 pairs: value at %zu is out of range or repeated",
          bad_value);
    CHECK(wrong_key == n, "pp_sort u32 pairs: key at %zu did not move with its value",
          wrong_key);
  }
  free(k);
  free(v);
}

/* CUDA: a pair sort that packs its pairs (4-byte keys and values from 3 x 2^23 pairs on)
 * needs 16n bytes of scratch; on a device that has 8n but not 16n free it must sort
 * unpacked, correctly, and leave no error text behind. A context of its own (whose memory
 * pool holds nothing yet) sorts with the rest of the device filled by pp_malloc blocks:
 * about 300 MiB stay free, between the 8n (200 MiB) and the 16n (400 MiB) it would ask. */
static void test_pairs_scarce_memory(pp_context *main_ctx) {
  if (pp_backend_of(main_ctx) != PP_BACKEND_CUDA) return;
  pp_context *ctx = NULL;
  pp_status s = pp_create(&ctx, PP_BACKEND_CUDA);
  CHECK(s == PP_OK, "pp_create(cuda) for the scarce-memory sort: %s", pp_status_string(s));
  if (s != PP_OK) return;
  const size_t n = ((size_t)3 << 23) + 3;
  uint32_t *k = th_xmalloc(n * sizeof *k), *v = th_xmalloc(n * sizeof *v);
  for (size_t i = 0; i < n; i++) {
    k[i] = key_of(i);
    v[i] = (uint32_t)i;
  }
  void *dk = th_dev_from_host(ctx, k, n * 4), *dv = th_dev_from_host(ctx, v, n * 4);
  /* fill the device: blocks of 256 MiB, then of 16 MiB; then give back 304 MiB */
  enum { MAX_BLOCKS = 4096 };
  static void *block[MAX_BLOCKS];
  size_t nb = 0, big = 0;
  for (size_t sz = (size_t)256 << 20; sz >= ((size_t)16 << 20); sz /= 16)
    while (nb < MAX_BLOCKS && pp_malloc(ctx, &block[nb], sz) == PP_OK) {
      nb++;
      if (sz == ((size_t)256 << 20)) big = nb;
    }
  size_t freed = 0;
  for (size_t i = 0; i < 3 && nb > big; i++, freed += 16) {
    pp_free(ctx, block[--nb]);
    block[nb] = NULL;
  }
  if (big > 0) {
    pp_free(ctx, block[big - 1]);
    block[big - 1] = NULL;
    freed += 256;
  }
  th_poison_error(ctx); /* its text must survive the failed attempt at 16n */
  char before[256];
  snprintf(before, sizeof before, "%s", pp_last_error(ctx));
  pp_sort_opts opts = {PP_ASCENDING, PP_SORT_RADIX};
  s = pp_sort(ctx, PP_U32, dk, dv, 4, n, &opts);
  if (s == PP_OK) s = pp_synchronize(ctx);
  CHECK(s == PP_OK, "pp_sort u32 pairs n=%zu with %zu MiB of the device free: %s: %s", n, freed,
        pp_status_string(s), pp_last_error(ctx));
  CHECK(strcmp(before, pp_last_error(ctx)) == 0, "pp_sort with scarce memory changed the error text to '%s'",
        pp_last_error(ctx));
  for (size_t i = 0; i < nb; i++) pp_free(ctx, block[i]);
  if (s == PP_OK) {
    th_copy(ctx, k, dk, n * 4);
    th_copy(ctx, v, dv, n * 4);
    size_t bad = n;
    for (size_t i = 1; i < n && bad == n; i++)
      if (k[i - 1] > k[i] || (k[i - 1] == k[i] && v[i - 1] >= v[i]) || k[i] != key_of(v[i])) bad = i;
    CHECK(bad == n, "pp_sort u32 pairs with scarce memory: wrong at %zu", bad);
  }
  th_dev_free(ctx, dk);
  th_dev_free(ctx, dv);
  pp_destroy(ctx);
  free(k);
  free(v);
}

int main(int argc, char **argv) {
  static const th_step steps[] = {test_pairs_scarce_memory, test_u8, test_u32_pairs};
  return th_run(argc, argv, steps, TH_COUNT(steps));
}
