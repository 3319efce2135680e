/* topk_numbers.c — the k largest numbers of a text file, with the line each came from.
 *
 *   topk_numbers K numbers.txt
 *
 * One number per line. pp_topk finds them in one pass, without sorting the whole file.
 */
#include "numbers.h"

#include <parprim.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 3 || atol(argv[1]) <= 0) {
    fprintf(stderr, "usage: %s K FILE\n", argv[0]);
    return 2;
  }
  size_t k = (size_t)atol(argv[1]);
  size_t n = 0;
  double *v = read_numbers(argv[2], &n);
  if (!v) return 1;
  if (k > n) k = n;

  double *top = malloc((k + 1) * sizeof *top);
  uint64_t *line = malloc((k + 1) * sizeof *line);
  pp_context *ctx;
  if (!top || !line || pp_create(&ctx, PP_BACKEND_AUTO) != PP_OK) {
    fprintf(stderr, "pp_create: %s\n", pp_last_error(NULL));
    return 1;
  }
  pp_status s = pp_topk(ctx, PP_F64, v, n, k, true, top, line);
  if (s != PP_OK) fprintf(stderr, "pp_topk: %s\n", pp_last_error(ctx));
  pp_destroy(ctx);
  if (s != PP_OK) return 1;

  printf("%-6s %-8s %s\n", "rank", "line", "value");
  for (size_t i = 0; i < k; i++) {
    printf("%-6zu %-8llu %.15g\n", i + 1, (unsigned long long)line[i] + 1, top[i]);
    /* largest first, and each index points back at its own value */
    if ((i > 0 && top[i] > top[i - 1]) || memcmp(&v[line[i]], &top[i], sizeof top[i])) {
      fprintf(stderr, "unexpected result at rank %zu\n", i + 1);
      return 1;
    }
  }
  free(v), free(top), free(line);
  return 0;
}
