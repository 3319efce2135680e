/* test_large.c — inputs beyond 2^31 and 2^32 elements (ctest label "large"; run on the GPU
 * machine, not in CI). Sizes and positions are chosen so that any 32-bit index or count
 * in a kernel or in the core gives a wrong answer rather than a lucky one. */
#include "harness.h"

#include <math.h>

#define N_U8 (((size_t)1 << 32) + 37)  /* more elements than a 32-bit count holds */
#define N_F32 (((size_t)1 << 31) + 11) /* more than a 32-bit signed index holds */

/* Data generated on the host, then copied to pp_malloc memory, so the CUDA run reads
 * device memory as a real user's would. */
static void *to_backend(pp_context *ctx, const void *host, size_t bytes) {
  return th_dev_from_host(ctx, host, bytes);
}

static void test_u8(pp_context *ctx) {
  size_t n = N_U8;
  uint8_t *h = th_xmalloc(n);
  uint64_t sum = 0;
  for (size_t i = 0; i < n; i++) {
    h[i] = (uint8_t)(i % 251);
    sum += h[i];
  }
  size_t top = ((size_t)1 << 32) + 5; /* the only 255, past 2^32 */
  sum += 255 - h[top];
  h[top] = 255;
  void *d = to_backend(ctx, h, n);
  free(h);

  uint8_t got = 0;
  pp_status s = pp_reduce(ctx, PP_SUM, PP_U8, d, n, &got);
  CHECK(s == PP_OK && got == (uint8_t)sum, "u8 SUM over 2^32+37: %s, got %u want %u",
        pp_last_error(ctx), got, (unsigned)(uint8_t)sum);
  s = pp_reduce(ctx, PP_MAX, PP_U8, d, n, &got);
  CHECK(s == PP_OK && got == 255, "u8 MAX over 2^32+37: got %u", got);
  uint64_t at = 0;
  s = pp_argreduce(ctx, PP_MAX, PP_U8, d, n, &got, &at);
  CHECK(s == PP_OK && got == 255 && at == top, "u8 argmax: got %u at %llu want at %zu", got,
        (unsigned long long)at, top);
  th_dev_free(ctx, d);
}

static void test_f32(pp_context *ctx) {
  size_t n = N_F32;
  float *h = th_xmalloc(n * sizeof(float));
  for (size_t i = 0; i < n; i++) h[i] = 1.0f;
  size_t low = n - 3; /* the minimum, past 2^31 */
  h[low] = -1.0f;
  void *d = to_backend(ctx, h, n * sizeof(float));
  free(h);

  float sum = 0;
  pp_status s = pp_reduce(ctx, PP_SUM, PP_F32, d, n, &sum);
  /* every partial sum is an integer below 2^53, so a double accumulation is exact and the
     result is the f32 nearest to n - 2 */
  float want = (float)((double)n - 2.0);
  CHECK(s == PP_OK && sum == want, "f32 SUM of 2^31+11 ones: got %.9g want %.9g", (double)sum,
        (double)want);
  float v = 0;
  uint64_t at = 0;
  s = pp_argreduce(ctx, PP_MIN, PP_F32, d, n, &v, &at);
  CHECK(s == PP_OK && v == -1.0f && at == low, "f32 argmin: got %g at %llu want at %zu", (double)v,
        (unsigned long long)at, low);
  th_dev_free(ctx, d);
}

int main(int argc, char **argv) {
  static const th_step steps[] = {test_u8, test_f32};
  return th_run(argc, argv, steps, TH_COUNT(steps));
}
