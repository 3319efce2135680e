/*
 * filter_file.h — the text format of `parprim conv --filter FILE`:
 *
 *     # a 3 x 3 Laplacian
 *     3 3
 *     0  1 0
 *     1 -4 1
 *     0  1 0
 *
 * width and height (whole numbers 1..max_side), then exactly width * height weights row
 * by row, separated by any white space; '#' starts a comment that runs to the end of its
 * line. Everything else is an error with its line number: a token of more than
 * CLI_FILTER_MAX_TOKEN characters, a value that is not a finite number or does not fit in
 * a float, weights missing or extra, an empty file.
 */
#ifndef PP_CLI_FILTER_FILE_H
#define PP_CLI_FILTER_FILE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CLI_FILTER_MAX_TOKEN 127

typedef struct cli_filter_weights {
  size_t width, height;
  float *w; /* width * height, row by row; malloc'd */
} cli_filter_weights;

/* Parses len bytes of text (it need not end in a zero byte); name is the file's name in
 * messages. 0, or -1 with a message in err and *out empty. */
int cli_filter_parse(const char *text, size_t len, const char *name, size_t max_side,
                     cli_filter_weights *out, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* PP_CLI_FILTER_FILE_H */
