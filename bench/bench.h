/*
 * bench.h — the parprim benchmark harness (`parprim bench`), plus the few helpers the
 * command-line tool shares with it (size parsing, the clock, the random data generator),
 * so that `parprim demo` and `parprim bench` generate and parse exactly alike.
 *
 * Plain C11; nothing here needs CUDA. The CUDA side of the harness (events, the CUB
 * peers) sits behind bench/gpu.h.
 */
#ifndef PP_BENCH_H
#define PP_BENCH_H

#include "parprim.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* `parprim bench [primitive ...] [--n N]... [--reps R] [--csv|--json] [--backend B]
 * [--dtype T] [--op OP]`; argv[0] is the subcommand name. Returns the process exit code:
 * 0 all ran and matched, 1 a call failed or a result disagreed with the peer, 2 usage,
 * 77 the backend asked for has no device here (ctest's skip code). */
int pp_bench_main(int argc, char **argv);
void pp_bench_usage(FILE *f);

/* Seed of every generated input, printed in reports so a run can be reproduced. */
#define BENCH_SEED UINT64_C(0x5eed0fa11ab1e5)

/* Milliseconds from CLOCK_MONOTONIC. */
double bench_now_ms(void);
/* Median of v[0..n); reorders v. 0 for n == 0. */
double bench_median(double *v, size_t n);

/* Parsers return 0 on success, -1 (and leave *out alone) on bad text.
 * Sizes: decimal, 0x hex, 2^k, 1<<k, or a number with K, M, G (powers of 1024). */
int bench_parse_size(const char *s, size_t *out);
int bench_parse_backend(const char *s, pp_backend *out); /* cpu, cuda, auto */
int bench_parse_dtype(const char *s, pp_dtype *out);     /* u8, i32, u32, i64, u64, f32, f64 */
int bench_parse_op(const char *s, pp_op *out);           /* sum, min, max */
const char *bench_op_string(pp_op op);                    /* "sum", "min", "max" */

/* Fill dst[0..count) with pseudo-random values of t: element i gets the value of global
 * index first + i under seed, so any chunking of one array gives the same data.
 * Floats are uniform in [-1, 1) (never NaN, inf or a denormal), integers cover their
 * whole range. */
void bench_fill_random(pp_dtype t, void *dst, size_t count, uint64_t seed, uint64_t first);
/* One element of t as text, exact for integers and round-trippable for floats. */
void bench_format_value(pp_dtype t, const void *p, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* PP_BENCH_H */
