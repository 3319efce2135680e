/*
 * test_cpu_select.c — the CPU backend's compaction (src/cpu/scan.c) where its output is
 * large enough to be written with non-temporal stores (32 MiB and more): each thread
 * compacts a chunk into its own buffer, then streams it to the output while it fetches
 * the next chunk it has taken. test_select.c stays below that size, so this program runs
 * pp_select, pp_partition and pp_select_flagged past it: 8-byte and 4-byte elements, with
 * 1 to 3 threads, into outputs aligned to 64 bytes and one element off (the plain stores
 * before a buffer's first whole line and after its last), and compares every element's
 * bits, the order and the count with a serial reference written here; the slot after the
 * last element select may write keeps its sentinel.
 *
 * The data mix what decides a comparison: NaN (kept only by PP_NE), -0.0 and +0.0 (equal),
 * values just above and below the compared one, and long runs of kept and of rejected
 * elements, so that a chunk may keep nothing or everything.
 *
 * Usage: test_cpu_select [cpu|cuda]   (CPU only; PARPRIM_TEST_QUICK=1 runs one and two
 * threads, not three).
 */
#include "harness.h"

#include <math.h>
#include <omp.h>

static th_rng rng;

/* n doubles: runs of positive and negative values, zeros of both signs and NaN */
static void fill_f64(double *x, size_t n) {
  size_t i = 0;
  while (i < n) {
    const uint64_t r = th_next(&rng);
    size_t run = r % 8 == 0 ? (size_t)(r >> 8) % 100000 : 1; /* a long run now and then */
    const double v = r % 7 == 0   ? NAN
                     : r % 7 == 1 ? -0.0
                     : r % 7 == 2 ? 0.0
                     : r % 7 == 3 ? 0x1p-1074
                                  : (double)((int64_t)(r >> 16) % 2001 - 1000) / 7.0;
    for (; run > 0 && i < n; run--, i++) x[i] = run > 1 ? v + (double)(run % 3) : v;
  }
}

/* the reference: x[i] kept when keep(x[i]); kept ones in order to want, then (partition)
 * the others in order */
#define REF(NAME, T, KEEP)                                                                  \
  static size_t ref_##NAME(const T *x, size_t n, T *want, bool partition) {                 \
    size_t k = 0;                                                                           \
    for (size_t i = 0; i < n; i++)                                                          \
      if (KEEP(x[i])) want[k++] = x[i];                                                     \
    if (partition)                                                                          \
      for (size_t i = 0, r = k; i < n; i++)                                                 \
        if (!(KEEP(x[i]))) want[r++] = x[i];                                                \
    return k;                                                                               \
  }
#define F64_GT0(x) ((x) > 0.0)
#define F64_NE0(x) ((x) != 0.0)
#define F32_LE1(x) ((x) <= 1.0f)
#define U64_GT(x) ((x) > (UINT64_MAX >> 1))
#define FLAG_KEEP8(x) (((x) & 0xff) != 0) /* a record's flag is its low byte */
REF(f64_gt0, double, F64_GT0)
REF(f64_ne0, double, F64_NE0)
REF(f32_le1, float, F32_LE1)
REF(u64_gt, uint64_t, U64_GT)
REF(flag8, uint64_t, FLAG_KEEP8)

static const uint64_t SENTINEL = 0xA5A5A5A5A5A5A5A5ull;

/* got (after the count, SENTINEL in the slot past it for select) against want */
static void compare(const char *what, const void *got, const void *want, size_t es,
                    size_t count, size_t want_count, size_t n, bool partition, int threads,
                    size_t off) {
  CHECK(count == want_count, "%s n=%zu threads=%d off=%zu: count %zu, want %zu", what, n,
        threads, off, count, want_count);
  if (count != want_count) return;
  const size_t len = partition ? n : count;
  const unsigned char *g = got, *w = want;
  size_t bad = SIZE_MAX;
  for (size_t i = 0; i < len && bad == SIZE_MAX; i++)
    if (memcmp(g + i * es, w + i * es, es) != 0) bad = i;
  CHECK(bad == SIZE_MAX, "%s n=%zu threads=%d off=%zu: element %zu differs (kept %zu)", what,
        n, threads, off, bad, count);
  if (!partition && count < n)
    CHECK(memcmp(g + count * es, &SENTINEL, es) == 0,
          "%s n=%zu threads=%d off=%zu: wrote past the count", what, n, threads, off);
}

static void run(pp_context *ctx, int threads) {
  /* 8-byte outputs of 2^23 elements and more, 4-byte ones of 2^24: at least 32 MiB
   * even when half the input is kept */
  const size_t n8 = ((size_t)1 << 24) + 12345, n4 = ((size_t)1 << 25) + 77;
  const size_t bytes = n8 * 8 + 64;
  unsigned char *in = th_xmalloc(bytes), *out = th_xmalloc(bytes + 64),
                *want = th_xmalloc(bytes);
  unsigned char *out64 = (unsigned char *)(((uintptr_t)out + 63) & ~(uintptr_t)63);
  double *x = (double *)(void *)in;
  fill_f64(x, n8);
  const double zero = 0.0;
  const uint64_t half = UINT64_MAX >> 1;
  const float one = 1.0f;
  for (size_t off = 0; off < 2; off++) {
    for (int pass = 0; pass < 6; pass++) {
      const bool partition = pass == 1 || pass == 4;
      const size_t es = pass == 3 ? 4 : 8, n = pass == 3 ? n4 : n8;
      unsigned char *dst = out64 + off * es;
      for (size_t i = 0; i < n; i++) memcpy(dst + i * es, &SENTINEL, es);
      uint64_t count = 0;
      size_t want_count = 0;
      const char *what = "";
      if (pass == 0 || pass == 1) {
        what = partition ? "partition f64 > 0" : "select f64 > 0";
        want_count = ref_f64_gt0(x, n, (double *)(void *)want, partition);
        CHECK_STATUS((partition ? pp_partition : pp_select)(ctx, PP_F64, x, n, PP_GT, &zero,
                                                              dst, &count),
                     PP_OK, what);
      } else if (pass == 2) {
        what = "select f64 != 0";
        want_count = ref_f64_ne0(x, n, (double *)(void *)want, false);
        CHECK_STATUS(pp_select(ctx, PP_F64, x, n, PP_NE, &zero, dst, &count), PP_OK, what);
      } else if (pass == 3) { /* the doubles' bytes read as floats: NaN, zeros and runs too */
        what = "select f32 <= 1";
        want_count = ref_f32_le1((const float *)(const void *)in, n, (float *)(void *)want,
                                 false);
        CHECK_STATUS(pp_select(ctx, PP_F32, in, n, PP_LE, &one, dst, &count), PP_OK, what);
      } else if (pass == 4) {
        what = "partition u64 > max/2";
        want_count = ref_u64_gt((const uint64_t *)(const void *)in, n,
                                (uint64_t *)(void *)want, true);
        CHECK_STATUS(pp_partition(ctx, PP_U64, in, n, PP_GT, &half, dst, &count), PP_OK, what);
      } else {
        what = "select_flagged 8 bytes";
        uint8_t *flags = th_xmalloc(n);
        const uint64_t *r = (const uint64_t *)(const void *)in;
        for (size_t i = 0; i < n; i++) flags[i] = (uint8_t)(r[i] & 0xff);
        want_count = ref_flag8(r, n, (uint64_t *)(void *)want, false);
        CHECK_STATUS(pp_select_flagged(ctx, 8, in, flags, n, dst, &count), PP_OK, what);
        free(flags);
      }
      compare(what, dst, want, es, (size_t)count, want_count, n, partition, threads, off);
    }
  }
  free(in);
  free(out);
  free(want);
}

int main(int argc, char **argv) {
  pp_context *ctx = th_init(argc, argv);
  rng = th_rng_make(28);
  const bool cpu = pp_backend_of(ctx) == PP_BACKEND_CPU;
  for (int threads = 1; cpu && threads <= (th_quick() ? 2 : 3); threads++) {
    omp_set_num_threads(threads);
    run(ctx, threads);
  }
  if (cpu) return th_finish(ctx);
  printf("SKIP: CPU backend only\n");
  pp_destroy(ctx);
  return TH_SKIP_CODE;
}
