/* numbers.h — read a text file of numbers (any whitespace between them) into a malloc'd
 * array of doubles, for the examples that sort and select them. */
#ifndef EXAMPLES_NUMBERS_H
#define EXAMPLES_NUMBERS_H

#include <stdio.h>
#include <stdlib.h>

/* The numbers of the file at path, *n of them; NULL after a message on stderr when the
 * file cannot be opened, holds something other than numbers, or memory runs out. */
static inline double *read_numbers(const char *path, size_t *n) {
  FILE *f = fopen(path, "r");
  if (!f) {
    perror(path);
    return NULL;
  }
  size_t cap = 1024;
  double *v = malloc(cap * sizeof *v), x;
  *n = 0;
  while (v && fscanf(f, "%lf", &x) == 1) {
    if (*n == cap) {
      double *more = realloc(v, (cap *= 2) * sizeof *v);
      if (!more) free(v);
      v = more;
    }
    if (v) v[(*n)++] = x;
  }
  int bad_input = !feof(f);
  fclose(f);
  if (!v || bad_input) {
    fprintf(stderr, "%s: %s\n", path, v ? "not a list of numbers" : "out of memory");
    free(v);
    return NULL;
  }
  return v;
}

#endif /* EXAMPLES_NUMBERS_H */
