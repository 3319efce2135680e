/* app.c — a program outside the tree, built against an installed parprim the way a user
 * builds one (pkg-config or the CMake package). The header it compiled with and the
 * library it runs with must be the same version, and a few calls must give the right
 * answers on whichever backend AUTO picks. */
#include <parprim.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  char header[32];
  snprintf(header, sizeof header, "%d.%d.%d", PARPRIM_VERSION_MAJOR, PARPRIM_VERSION_MINOR,
           PARPRIM_VERSION_PATCH);
  if (strcmp(header, pp_version()) != 0) {
    fprintf(stderr, "header %s, library %s\n", header, pp_version());
    return 1;
  }
  pp_context *ctx;
  if (pp_create(&ctx, PP_BACKEND_AUTO) != PP_OK) {
    fprintf(stderr, "pp_create: %s\n", pp_last_error(NULL));
    return 1;
  }
  enum { N = 1000 };
  int32_t keys[N];
  for (int i = 0; i < N; i++) keys[i] = (i * 7919) % N - N / 2; /* a permutation of -500..499 */
  int64_t sum = 0;
  int64_t wide[N];
  for (int i = 0; i < N; i++) wide[i] = keys[i];
  int ok = pp_sort(ctx, PP_I32, keys, NULL, 0, N, NULL) == PP_OK &&
           pp_reduce(ctx, PP_SUM, PP_I64, wide, N, &sum) == PP_OK;
  for (int i = 0; ok && i < N; i++) ok = keys[i] == i - N / 2;
  ok = ok && sum == -N / 2;
  printf("parprim %s (%s backend, CUDA %s in the library): %s\n", pp_version(),
         pp_backend_string(pp_backend_of(ctx)), pp_has_cuda_backend() ? "built" : "not built",
         ok ? "ok" : "WRONG");
  if (!ok) fprintf(stderr, "%s\n", pp_last_error(ctx));
  pp_destroy(ctx);
  return ok ? 0 : 1;
}
