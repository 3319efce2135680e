/* test_large_topk.c — pp_topk beyond 2^32 elements (ctest label "large"; run on the GPU
 * machine, not in CI: about 4.3 GB of host memory and 4.3 GB of device memory, or 8.6 GB
 * of host memory on the CPU backend).
 *
 * n = 2^32 + 37 u8 values from a formula (0..127), with larger values planted below 2^31,
 * between 2^31 and 2^32, and past 2^32. The k largest must be the planted values and then
 * the first 127s by index; the k smallest the first zeros by index. Those indices are
 * found by a serial scan here, so a 32-bit index, count or offset anywhere (including the
 * index half of the GPU's composite keys, which is 64 bits wide at this n) shows up as a
 * wrong value or index. An allocation that fails counts as a failure, never as a pass.
 */
#define _POSIX_C_SOURCE 200809L /* sysconf */
#include "harness.h"

#include <inttypes.h>
#include <unistd.h>

#define N (((size_t)1 << 32) + 37)
#define K_TIES 300

static uint8_t base_value(size_t i) { return (uint8_t)(((uint64_t)i * 2654435761u) >> 13) & 0x7F; }

int main(int argc, char **argv) {
  pp_context *ctx = th_init(argc, argv);
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  size_t need = N * (pp_backend_of(ctx) == PP_BACKEND_CPU ? 2 : 1) + ((size_t)1 << 28);
  if (pages > 0 && page > 0 && need > (size_t)pages * (size_t)page) {
    CHECK(0, "needs %zu bytes of RAM, the machine has %zu", need, (size_t)pages * (size_t)page);
    return th_finish(ctx);
  }
  uint8_t *h = malloc(N);
  if (!CHECK(h != NULL, "host allocation of %zu bytes", (size_t)N)) return th_finish(ctx);
  for (size_t i = 0; i < N; i++) h[i] = base_value(i);
  /* planted: (index, value), all above the formula's 127 */
  const size_t at[4] = {5, ((size_t)1 << 31) + 1, ((size_t)1 << 32) + 3, N - 1};
  const uint8_t val[4] = {200, 201, 200, 255};
  for (int q = 0; q < 4; q++) h[at[q]] = val[q];
  /* expected largest: 255, 201, then the two 200s by index, then 127s by index */
  uint64_t want_l[K_TIES];
  uint8_t want_lv[K_TIES];
  want_l[0] = at[3]; want_lv[0] = 255;
  want_l[1] = at[1]; want_lv[1] = 201;
  want_l[2] = at[0]; want_lv[2] = 200;
  want_l[3] = at[2]; want_lv[3] = 200;
  size_t m = 4;
  for (size_t i = 0; i < N && m < K_TIES; i++)
    if (h[i] == 127) {
      want_l[m] = i;
      want_lv[m++] = 127;
    }
  /* expected smallest: the first zeros by index */
  uint64_t want_s[K_TIES];
  size_t z = 0;
  for (size_t i = 0; i < N && z < K_TIES; i++)
    if (h[i] == 0) want_s[z++] = i;
  CHECK(m == K_TIES && z == K_TIES, "the formula gives enough 127s and zeros");

  void *d = th_dev_from_host(ctx, h, N);
  uint8_t got_v[K_TIES];
  uint64_t got_i[K_TIES];
  pp_status s = pp_topk(ctx, PP_U8, d, N, K_TIES, true, got_v, got_i);
  if (CHECK_STATUS(s, PP_OK, "pp_topk largest, n = 2^32 + 37: %s", pp_last_error(ctx))) {
    size_t bad = K_TIES;
    for (size_t j = 0; j < K_TIES && bad == K_TIES; j++)
      if (got_v[j] != want_lv[j] || got_i[j] != want_l[j]) bad = j;
    CHECK(bad == K_TIES, "largest: position %zu: got %u at %" PRIu64 ", want %u at %" PRIu64, bad,
          bad < K_TIES ? got_v[bad] : 0, bad < K_TIES ? got_i[bad] : 0,
          bad < K_TIES ? want_lv[bad] : 0, bad < K_TIES ? want_l[bad] : 0);
  }
  s = pp_topk(ctx, PP_U8, d, N, K_TIES, false, got_v, got_i);
  if (CHECK_STATUS(s, PP_OK, "pp_topk smallest, n = 2^32 + 37: %s", pp_last_error(ctx))) {
    size_t bad = K_TIES;
    for (size_t j = 0; j < K_TIES && bad == K_TIES; j++)
      if (got_v[j] != 0 || got_i[j] != want_s[j]) bad = j;
    CHECK(bad == K_TIES, "smallest: position %zu: got %u at %" PRIu64 ", want 0 at %" PRIu64, bad,
          bad < K_TIES ? got_v[bad] : 0, bad < K_TIES ? got_i[bad] : 0,
          bad < K_TIES ? want_s[bad] : 0);
  }
  /* one row of 2^32 + 37 through pp_topk_rows (the row kernel's 64-bit index path) */
  s = pp_topk_rows(ctx, PP_U8, d, 1, N, 4, true, got_v, got_i);
  if (CHECK_STATUS(s, PP_OK, "pp_topk_rows 1 x (2^32 + 37): %s", pp_last_error(ctx)))
    CHECK(got_i[0] == want_l[0] && got_i[1] == want_l[1] && got_i[2] == want_l[2] &&
              got_i[3] == want_l[3],
          "rows: indices %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64, got_i[0], got_i[1],
          got_i[2], got_i[3]);
  th_dev_free(ctx, d);
  free(h);
  return th_finish(ctx);
}
