/*
 * test_large_histogram.c — histograms of more than 2^32 bytes (label `large`: GPU memory,
 * not run on CI).
 *
 * Usage: test_large_histogram [cpu|cuda]
 *
 * The input is one 64 MiB block of random bytes repeated, plus a tail, so the expected
 * counts follow from the block's own counts without a pass over 4 GiB on the host. Checked:
 * pp_histogram_even on u8 with 256 bins (privatised shared memory), 65536 bins (three
 * shared-memory windows, one pass each) and 2^20 bins (global atomics);
 * pp_histogram_image contiguous with one channel and pitched with four; and an all-equal
 * input whose single count exceeds 2^32 (no 32-bit counter may wrap anywhere).
 */
#include "harness.h"

#include <inttypes.h>

#define BLOCK ((size_t)64 << 20)

static size_t first_diff(const uint64_t *a, const uint64_t *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return i;
  return n;
}

/* dev[0..bytes) = host block repeated; block_counts[v] += occurrences in what was written. */
static int fill_repeated(pp_context *ctx, uint8_t *dev, size_t bytes, const uint8_t *block,
                         uint64_t *counts) {
  uint64_t one[256] = {0};
  for (size_t i = 0; i < BLOCK; i++) one[block[i]]++;
  size_t whole = bytes / BLOCK, tail = bytes % BLOCK;
  for (size_t k = 0; k < whole; k++)
    if (!th_copy(ctx, dev + k * BLOCK, block, BLOCK)) return 0;
  if (tail && !th_copy(ctx, dev + whole * BLOCK, block, tail)) return 0;
  for (int v = 0; v < 256; v++) counts[v] = one[v] * whole;
  for (size_t i = 0; i < tail; i++) counts[block[i]]++;
  return 1;
}

static void check_counts(const uint64_t *got, const uint64_t *want, size_t bins, const char *what) {
  size_t d = first_diff(got, want, bins);
  CHECK(d == bins, "%s: bin %zu got %" PRIu64 " want %" PRIu64, what, d, d < bins ? got[d] : 0,
        d < bins ? want[d] : 0);
}

int main(int argc, char **argv) {
  pp_context *ctx = th_init(argc, argv);
  /* odd: a scalar tail on every path; the pitched image below also passes 2^32 bytes */
  const size_t n = ((size_t)1 << 32) + ((size_t)1 << 19) + 4099;
  uint8_t *dev = NULL;
  pp_status s = pp_malloc(ctx, (void **)&dev, n + 4096);
  if (s == PP_ERR_OUT_OF_MEMORY) {
    printf("SKIP: not enough memory for %zu bytes\n", n);
    pp_destroy(ctx);
    return TH_SKIP_CODE;
  }
  CHECK_STATUS(s, PP_OK, "pp_malloc(%zu)", n);
  if (s != PP_OK) return th_finish(ctx);
  uint8_t *block = th_xmalloc(BLOCK);
  th_rng r = th_rng_make(11);
  for (size_t i = 0; i < BLOCK; i++) block[i] = (uint8_t)th_next(&r);
  uint64_t want[256];
  const size_t big_bins = (size_t)1 << 20;
  uint64_t *got = th_xmalloc(big_bins * sizeof *got), *want_big = th_xmalloc(big_bins * 8);

  /* offset 1: unaligned start as well */
  if (fill_repeated(ctx, dev, n + 1, block, want)) {
    uint64_t w1[256];
    memcpy(w1, want, sizeof w1);
    w1[block[0]]--; /* the input starts at dev + 1 */
    const uint8_t *in = dev + 1;
    CHECK_STATUS(pp_histogram_even(ctx, PP_U8, in, n, 256, 0, 256, got), PP_OK, "even 256");
    check_counts(got, w1, 256, "even u8, 256 bins, n > 2^32");
    CHECK_STATUS(pp_histogram_image(ctx, in, n, 1, n, 1, got), PP_OK, "image");
    check_counts(got, w1, 256, "image, 1 channel, n > 2^32 bytes");
    const size_t bins_list[2] = {65536, big_bins};
    for (int k = 0; k < 2; k++) {
      size_t bins = bins_list[k], per = bins / 256;
      memset(want_big, 0, bins * 8);
      for (int v = 0; v < 256; v++) want_big[(size_t)v * per] = w1[v];
      CHECK_STATUS(pp_histogram_even(ctx, PP_U8, in, n, bins, 0, 256, got), PP_OK, "even big");
      check_counts(got, want_big, bins, bins == 65536 ? "even u8, 65536 bins, n > 2^32"
                                                      : "even u8, 2^20 bins, n > 2^32");
    }
    /* pitched RGBA: 2^16 pixels a row, 64 bytes of padding, enough rows to pass 2^32 */
    const size_t width = (size_t)1 << 16, row = width * 4, pitch = row + 64;
    const size_t height = (n - row) / pitch + 1;
    uint64_t w4[1024] = {0}, g4[1024];
    /* the bytes of the block at each image position: dev[p] = block[p % BLOCK] */
    for (size_t y = 0; y < height; y++) {
      size_t p0 = y * pitch; /* image byte p0 + x lives at dev[p0 + x] */
      for (size_t x = 0; x < row; x++) w4[(x % 4) * 256 + block[(p0 + x) % BLOCK]]++;
    }
    CHECK_STATUS(pp_histogram_image(ctx, dev, width, height, pitch, 4, g4), PP_OK, "image rgba");
    check_counts(g4, w4, 1024, "image, 4 channels, pitch, > 2^32 bytes");
  }

  /* all equal: one count beyond 2^32 */
  memset(block, 200, BLOCK);
  if (fill_repeated(ctx, dev, n, block, want)) {
    CHECK_STATUS(pp_histogram_even(ctx, PP_U8, dev, n, 256, 0, 256, got), PP_OK, "even eq");
    check_counts(got, want, 256, "all equal, 256 bins");
    CHECK_STATUS(pp_histogram_image(ctx, dev, n, 1, n, 1, got), PP_OK, "image eq");
    check_counts(got, want, 256, "all equal, image");
    CHECK_STATUS(pp_histogram_even(ctx, PP_U8, dev, n, big_bins, 0, 256, got), PP_OK, "even eq big");
    CHECK(got[200 * 4096] == n, "all equal, 2^20 bins: %" PRIu64 " want %zu", got[200 * 4096], n);
    CHECK_STATUS(pp_histogram_even(ctx, PP_U8, dev, n, 65536, 0, 256, got), PP_OK, "even eq 65536");
    CHECK(got[200 * 256] == n, "all equal, 65536 bins: %" PRIu64 " want %zu", got[200 * 256], n);
  }
  free(block);
  free(got);
  free(want_big);
  th_dev_free(ctx, dev);
  return th_finish(ctx);
}
