/* test_large_scan.c — the scan family beyond 2^31 and 2^32 elements (ctest label "large";
 * run on the GPU machine, not in CI: it needs about 9 GB of host memory and 17 GB of
 * device memory, or 26 GB of host memory on the CPU backend).
 *
 * Inputs are generated on the host from a formula, copied to pp_malloc memory, and the
 * outputs are read back and checked element by element, so any 32-bit index, offset or
 * count anywhere (a kernel, a carry, a staging copy) gives a wrong answer rather than a
 * lucky one. Closed forms at chosen indices check the element-by-element reference too.
 * An allocation that fails is reported as a failure, never as a pass.
 */
#define _POSIX_C_SOURCE 200809L /* sysconf */
#include "harness.h"

#include <inttypes.h>
#include <math.h>
#include <unistd.h>

#define N_U8 (((size_t)1 << 32) + 37) /* more elements than a 32-bit count holds */
#ifndef N_F32 /* -DN_F32=... only to try the program on a small machine */
#define N_F32 (((size_t)1 << 31) + 11) /* more than a 32-bit signed index holds */
#endif
#define F32_MARK (N_F32 - 11) /* 2^31: specials are planted just past it */

static pp_context *g_ctx;

/* Counts as failed: the checks that could not run must not look like a pass. */
static void give_up(void) {
  th_finish(g_ctx);
  exit(1);
}

/* malloc may promise memory the machine does not have (overcommit) and the test would
 * then be killed halfway with no word of why: so compare with the machine's RAM first.
 * pp_malloc is host memory on the CPU backend, so there the device buffers count too. */
static void check_ram(size_t host_bytes, size_t dev_bytes, const char *part) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return; /* unknown: just try */
  size_t ram = (size_t)pages * (size_t)page;
  size_t need = host_bytes + (pp_backend_of(g_ctx) == PP_BACKEND_CPU ? dev_bytes : 0);
  if (need > ram) {
    CHECK(0, "%s needs %.1f GB of host memory, this machine has %.1f GB: not run", part,
          (double)need / 1e9, (double)ram / 1e9);
    give_up();
  }
}

static void *host_alloc(size_t bytes, const char *what) {
  void *p = malloc(bytes);
  if (!p) {
    CHECK(0, "cannot allocate %zu bytes of host memory for %s", bytes, what);
    give_up();
  }
  return p;
}

static void *dev_alloc(size_t bytes, const char *what) {
  void *p = NULL;
  pp_status s = pp_malloc(g_ctx, &p, bytes);
  if (s != PP_OK || !p) {
    CHECK(0, "pp_malloc of %zu bytes for %s failed: %s (%s)", bytes, what, pp_status_string(s),
          pp_last_error(g_ctx));
    give_up();
  }
  return p;
}

static int copy(void *dst, const void *src, size_t bytes, const char *what) {
  pp_status s = pp_copy(g_ctx, dst, src, bytes);
  return CHECK(s == PP_OK, "pp_copy of %zu bytes (%s): %s (%s)", bytes, what, pp_status_string(s),
               pp_last_error(g_ctx));
}

/* ---- u8: the base pattern i % 251 (0..250) with values 251..255 planted ----------------- */

static const size_t planted_at[] = {
    0, 250, ((size_t)1 << 31) - 1, (size_t)1 << 31, ((size_t)1 << 32) - 1, (size_t)1 << 32,
    ((size_t)1 << 32) + 1, ((size_t)1 << 32) + 20, N_U8 - 1};
#define N_PLANTED (sizeof planted_at / sizeof planted_at[0])

static uint8_t planted_value(size_t k) { return (uint8_t)(251 + k % 5); }

/* sum of (j % 251) for j in [0, m), mod 256 */
static uint8_t base_prefix(size_t m) {
  uint64_t q = m / 251, r = m % 251;
  return (uint8_t)(q * (250 * 251 / 2) + (r ? r * (r - 1) / 2 : 0));
}

/* inclusive SUM at i by closed form: the base sum plus each planted replacement at or
 * before i, all mod 256 */
static uint8_t closed_scan(size_t i) {
  uint8_t s = base_prefix(i + 1);
  for (size_t k = 0; k < N_PLANTED; k++)
    if (planted_at[k] <= i) s = (uint8_t)(s + planted_value(k) - planted_at[k] % 251);
  return s;
}

static void test_u8(void) {
  const size_t n = N_U8;
  printf("u8: n = 2^32 + 37 = %zu, x[i] = i %% 251 with 251..255 at %zu places "
         "(0, 2^31-1, 2^31, 2^32-1, 2^32, 2^32+1, 2^32+20, n-1, ...)\n", n, N_PLANTED);
  fflush(stdout);
  check_ram(n, 2 * n, "the u8 part");
  uint8_t *h = host_alloc(n, "the u8 input / results");
  for (size_t i = 0; i < n; i++) h[i] = (uint8_t)(i % 251);
  for (size_t k = 0; k < N_PLANTED; k++) h[planted_at[k]] = planted_value(k);
  uint8_t *din = dev_alloc(n, "the u8 input");
  uint8_t *dout = dev_alloc(n, "the u8 output");
  if (!copy(din, h, n, "u8 input")) give_up();

  /* inclusive SUM scan, wrapping every few elements */
  pp_status s = pp_scan(g_ctx, PP_SUM, PP_U8, din, dout, n, true);
  if (CHECK(s == PP_OK, "pp_scan SUM u8 inclusive over 2^32+37: %s (%s)", pp_status_string(s),
            pp_last_error(g_ctx)) &&
      copy(h, dout, n, "u8 scan result")) {
    size_t bad = 0, first = 0;
    uint8_t run = 0;
    size_t pk = 0;
    for (size_t i = 0; i < n; i++) {
      uint8_t x = (uint8_t)(i % 251);
      if (pk < N_PLANTED && i == planted_at[pk]) x = planted_value(pk++);
      run = (uint8_t)(run + x);
      if (h[i] != run && bad++ == 0) first = i;
    }
    CHECK(bad == 0, "pp_scan SUM u8: %zu of %zu outputs wrong, first at %zu: got %u, want %u",
          bad, n, first, bad ? h[first] : 0, (unsigned)closed_scan(first));
    printf("checked all %zu scan outputs against a running sum\n", n);
    const size_t at[] = {0, 1, 250, 251, 252, ((size_t)1 << 31) - 2, ((size_t)1 << 31) - 1,
                         (size_t)1 << 31, ((size_t)1 << 32) - 2, ((size_t)1 << 32) - 1,
                         (size_t)1 << 32, ((size_t)1 << 32) + 1, ((size_t)1 << 32) + 19,
                         ((size_t)1 << 32) + 20, n - 2, n - 1};
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++)
      CHECK(h[at[k]] == closed_scan(at[k]), "pp_scan SUM u8 out[%zu] = %u, closed form %u",
            at[k], h[at[k]], (unsigned)closed_scan(at[k]));
    printf("checked %zu outputs (around 2^31, 2^32 and the last, %u) against the closed form\n",
           sizeof at / sizeof at[0], (unsigned)closed_scan(n - 1));
  }

  /* select >= 251: exactly the planted values, in order; count known */
  uint64_t count = 0;
  uint8_t v = 251;
  s = pp_select(g_ctx, PP_U8, din, n, PP_GE, &v, dout, &count);
  if (CHECK(s == PP_OK && count == N_PLANTED,
            "pp_select u8 >= 251 over 2^32+37: %s (%s), count %" PRIu64 " want %zu",
            pp_status_string(s), pp_last_error(g_ctx), count, N_PLANTED) &&
      copy(h, dout, N_PLANTED, "u8 select result")) {
    for (size_t k = 0; k < N_PLANTED; k++)
      CHECK(h[k] == planted_value(k), "pp_select u8 >= 251: out[%zu] = %u, want %u", k, h[k],
            planted_value(k));
    printf("pp_select >= 251: count %" PRIu64 ", values in order checked\n", count);
  }

  /* select < 251: everything else, a count beyond 2^32, in order */
  count = 0;
  s = pp_select(g_ctx, PP_U8, din, n, PP_LT, &v, dout, &count);
  if (CHECK(s == PP_OK && count == n - N_PLANTED,
            "pp_select u8 < 251 over 2^32+37: %s (%s), count %" PRIu64 " want %zu",
            pp_status_string(s), pp_last_error(g_ctx), count, n - N_PLANTED) &&
      copy(h, dout, n - N_PLANTED, "u8 select result")) {
    size_t bad = 0, first = 0, k = 0, pk = 0;
    for (size_t i = 0; i < n; i++) {
      if (pk < N_PLANTED && i == planted_at[pk]) {
        pk++;
        continue;
      }
      if (h[k] != (uint8_t)(i % 251) && bad++ == 0) first = k;
      k++;
    }
    CHECK(bad == 0, "pp_select u8 < 251: %zu of %zu kept values wrong or out of order, first "
          "at out[%zu]", bad, n - N_PLANTED, first);
    printf("pp_select < 251: count %" PRIu64 " (> 2^32), all kept values checked in order\n",
           count);
  }
  th_dev_free(g_ctx, din);
  th_dev_free(g_ctx, dout);
  free(h);
}

/* ---- f32 partition over 2^31 + 11 elements -------------------------------------------- */

/* Integers in [-1000, 1000] from a hash of i, so that a block moved or shifted anywhere in
 * the output does not line up by accident; NaN, -0.0, +0.0 and +inf planted past 2^31. */
static float f32_at(size_t i) {
  switch ((int64_t)i - (int64_t)F32_MARK) {
  case 1: return NAN;      /* compares false: with the others */
  case 2: return -0.0f;    /* not > 0 */
  case 3: return 0.0f;
  case 4: return INFINITY; /* > 0 */
  case 9: return 1e-30f;   /* > 0 */
  default: break;
  }
  uint64_t z = (uint64_t)i * 0x9E3779B97F4A7C15ull;
  return (float)((int)((z >> 40) % 2001) - 1000);
}

static void test_f32_partition(void) {
  const size_t n = N_F32, bytes = n * sizeof(float);
  printf("f32: n = %zu, pp_partition x > 0 (hashed integers, NaN/-0/+0/inf "
         "planted past 2^31)\n", n);
  fflush(stdout);
  check_ram(bytes, 2 * bytes, "the f32 part");
  float *h = host_alloc(bytes, "the f32 input / results");
  size_t want_true = 0;
  for (size_t i = 0; i < n; i++) {
    h[i] = f32_at(i);
    want_true += h[i] > 0.0f;
  }
  float *din = dev_alloc(bytes, "the f32 input");
  float *dout = dev_alloc(bytes, "the f32 output");
  if (!copy(din, h, bytes, "f32 input")) give_up();
  uint64_t count = 0;
  float zero = 0.0f;
  pp_status s = pp_partition(g_ctx, PP_F32, din, n, PP_GT, &zero, dout, &count);
  if (CHECK(s == PP_OK && count == want_true,
            "pp_partition f32 > 0 over n: %s (%s), count_true %" PRIu64 " want %zu",
            pp_status_string(s), pp_last_error(g_ctx), count, want_true) &&
      copy(h, dout, bytes, "f32 partition result")) {
    size_t bad = 0, first = 0, t = 0, f = want_true;
    for (size_t i = 0; i < n; i++) {
      float x = f32_at(i);
      size_t at = x > 0.0f ? t++ : f++;
      if (memcmp(&h[at], &x, sizeof x) != 0 && !(isnan(x) && isnan(h[at])) && bad++ == 0)
        first = at;
    }
    CHECK(bad == 0, "pp_partition f32: %zu of %zu outputs wrong or out of order, first at "
          "out[%zu] = %g", bad, n, first, bad ? (double)h[first] : 0.0);
    printf("pp_partition: count_true %" PRIu64 ", all %zu outputs checked bit for bit, in "
           "order\n", count, n);
  }
  th_dev_free(g_ctx, din);
  th_dev_free(g_ctx, dout);
  free(h);
}

int main(int argc, char **argv) {
  g_ctx = th_init(argc, argv);
  test_u8();
  test_f32_partition();
  return th_finish(g_ctx);
}
