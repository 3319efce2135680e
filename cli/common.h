/*
 * common.h — what every part of the `parprim` command shares: the size, backend, dtype
 * and op parsers (so `--n 2^20` means the same in `parprim bench`, `parprim ladder`,
 * `parprim demo` and the file commands), the clock and median of the timings, the random
 * data generator, and value formatting. `parprim demo` and `parprim bench` generate their
 * inputs with one generator, so a size and a seed name the same data in both.
 *
 * Plain C11 with a C linkage block: the ladders (the .cu files in ladder/, compiled by nvcc)
 * include it too. Internal to the command: not installed.
 */
#ifndef PP_CLI_COMMON_H
#define PP_CLI_COMMON_H

#include "parprim.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Seed of every generated input, printed in reports so a run can be reproduced. */
#define CLI_SEED UINT64_C(0x5eed0fa11ab1e5)

/* The sizes --n accepts, for the help texts (K, M, G are powers of 1024). */
#define CLI_SIZE_FORMS "1048576, 0x100000, 2^20, 1<<20 or 1M"

/* Milliseconds from CLOCK_MONOTONIC. */
double cli_now_ms(void);
/* Median of v[0..n); reorders v. 0 for n == 0. */
double cli_median(double *v, size_t n);

/* A usage error of `parprim CMD`: prints "parprim CMD: " and fmt (with arg) on stderr, a
 * blank line and the command's usage, and returns 2, the command's exit code for it. */
int cli_usage_error(const char *cmd, void (*usage)(FILE *f), const char *fmt, const char *arg);

/* Parsers return 0 on success, -1 (and leave *out alone) on bad text.
 * Sizes: decimal, 0x hex, 2^k, 1<<k, or a number with K, M, G (powers of 1024); no sign,
 * no space, nothing left over, and the value must fit in size_t. */
int cli_parse_size(const char *s, size_t *out);
int cli_parse_backend(const char *s, pp_backend *out); /* cpu, cuda, auto */
int cli_parse_dtype(const char *s, pp_dtype *out);     /* u8, i32, u32, i64, u64, f32, f64 */
int cli_parse_op(const char *s, pp_op *out);           /* sum, min, max */
const char *cli_op_string(pp_op op);                    /* "sum", "min", "max" */

/* SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
 * OOPSLA 2014): a bijective 64-bit mix; cli_splitmix64(key + i) is the i-th value of the
 * stream that key names. */
uint64_t cli_splitmix64(uint64_t x);
/* Fill dst[0..count) with pseudo-random values of t: element i gets the value of global
 * index first + i under seed, so any chunking of one array gives the same data.
 * Floats are uniform in [-1, 1) (never NaN, inf or a denormal), integers cover their
 * whole range. */
void cli_fill_random(pp_dtype t, void *dst, size_t count, uint64_t seed, uint64_t first);
/* Element i of an array of t, as a double (64-bit integers rounded). */
double cli_value_at(pp_dtype t, const void *p, size_t i);
/* One element of t as text, exact for integers and round-trippable for floats. */
void cli_format_value(pp_dtype t, const void *p, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* PP_CLI_COMMON_H */
