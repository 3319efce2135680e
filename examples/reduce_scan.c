/* reduce_scan.c — the first calls everyone makes: a sum, a maximum and where it is, running
 * totals, and keeping the elements that pass a test. Host arrays go straight in: parprim
 * copies them to the GPU and back when the context runs on one.
 *
 *   reduce_scan            (PARPRIM_BACKEND=cpu|cuda picks the backend, else the GPU if usable)
 */
#include <parprim.h>
#include <stdio.h>

#define CHECK(call)                                                        \
  do {                                                                     \
    if ((call) != PP_OK) {                                                 \
      fprintf(stderr, "%s failed: %s\n", #call, pp_last_error(ctx));       \
      return 1;                                                            \
    }                                                                      \
  } while (0)

enum { N = 10 };

int main(void) {
  int32_t x[N] = {3, -1, 4, 1, -5, 9, 2, -6, 5, 3};
  pp_context *ctx;
  if (pp_create(&ctx, PP_BACKEND_AUTO) != PP_OK) {
    fprintf(stderr, "pp_create: %s\n", pp_last_error(NULL));
    return 1;
  }
  printf("parprim %s on the %s backend\n", pp_version(), pp_backend_string(pp_backend_of(ctx)));

  int32_t sum, max;
  uint64_t where;
  CHECK(pp_reduce(ctx, PP_SUM, PP_I32, x, N, &sum));
  CHECK(pp_argreduce(ctx, PP_MAX, PP_I32, x, N, &max, &where));
  printf("sum %d, max %d at index %llu\n", sum, max, (unsigned long long)where);

  int32_t inclusive[N], exclusive[N];
  CHECK(pp_scan(ctx, PP_SUM, PP_I32, x, inclusive, N, true));
  CHECK(pp_scan(ctx, PP_SUM, PP_I32, x, exclusive, N, false));
  printf("%-10s %-10s %s\n", "x", "inclusive", "exclusive");
  for (int i = 0; i < N; i++) printf("%-10d %-10d %d\n", x[i], inclusive[i], exclusive[i]);

  int32_t zero = 0, positive[N];
  uint64_t kept;
  CHECK(pp_select(ctx, PP_I32, x, N, PP_GT, &zero, positive, &kept));
  printf("%llu positive:", (unsigned long long)kept);
  for (uint64_t i = 0; i < kept; i++) printf(" %d", positive[i]);
  printf("\n");

  /* the same answers by hand, so a wrong result fails this program */
  int ok = sum == 15 && max == 9 && where == 5 && kept == 7 && inclusive[N - 1] == sum &&
           exclusive[0] == 0 && exclusive[N - 1] == sum - x[N - 1];
  pp_destroy(ctx);
  if (!ok) fprintf(stderr, "reduce_scan: unexpected result\n");
  return ok ? 0 : 1;
}
