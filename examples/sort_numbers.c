/* sort_numbers.c — read a text file of numbers, sort them, print them one per line.
 *
 *   sort_numbers numbers.txt > sorted.txt
 *
 * Any whitespace separates the numbers; they are sorted as doubles, ascending.
 */
#include "numbers.h"

#include <parprim.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s FILE\n", argv[0]);
    return 2;
  }
  size_t n = 0;
  double *v = read_numbers(argv[1], &n);
  if (!v) return 1;

  double *check = malloc((n + 1) * sizeof *check);
  pp_context *ctx;
  if (!check || pp_create(&ctx, PP_BACKEND_AUTO) != PP_OK) {
    fprintf(stderr, "pp_create: %s\n", pp_last_error(NULL));
    return 1;
  }
  memcpy(check, v, n * sizeof *v);
  qsort(check, n, sizeof *check, by_value);
  /* keys only (values NULL), ascending: opts NULL */
  pp_status s = pp_sort(ctx, PP_F64, v, NULL, 0, n, NULL);
  if (s != PP_OK) fprintf(stderr, "pp_sort: %s\n", pp_last_error(ctx));
  pp_destroy(ctx);
  if (s != PP_OK) return 1;

  /* the C library's qsort must agree, number for number */
  for (size_t i = 0; i < n; i++) {
    if (v[i] != check[i]) {
      fprintf(stderr, "line %zu: %g, but qsort has %g\n", i + 1, v[i], check[i]);
      return 1;
    }
    printf("%.15g\n", v[i]);
  }
  fprintf(stderr, "%zu numbers sorted\n", n);
  free(v), free(check);
  return 0;
}
