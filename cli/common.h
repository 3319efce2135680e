/*
 * common.h — what every part of the `parprim` command shares: the size, backend, dtype
 * and op parsers (so `--n 2^20` means the same in `parprim bench`, `parprim ladder`,
 * `parprim demo` and the file commands), the scan of a subcommand's options, the reports
 * of a usage error or a failed call, the clock and median of the timings, the random data
 * generator, and value formatting. `parprim demo` and `parprim bench` generate their
 * inputs with one generator, so a size and a seed name the same data in both.
 *
 * Plain C11 with a C linkage block: the ladders (the .cu files in ladder/, compiled by nvcc)
 * include it too. Internal to the command: not installed.
 */
#ifndef PP_CLI_COMMON_H
#define PP_CLI_COMMON_H

#include "parprim.h"

#include <stdarg.h>
#include <stdbool.h>
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

/* An error of `parprim CMD` that does not stop it: counts one in *count and prints
 * "parprim CMD: error: " and the message on stderr, after flushing stdout so that the
 * report stands after the rows printed so far. */
void cli_verror(int *count, const char *cmd, const char *fmt, va_list ap);

/* A failed library call of `parprim CMD`: prints "parprim CMD: WHAT: STATUS: DETAIL" (DETAIL
 * from pp_last_error(ctx)) on stderr and returns 1, the command's exit code for it. */
int cli_call_failed(const char *cmd, pp_context *ctx, const char *what, pp_status s);
/* pp_create(ctx, backend) for `parprim CMD`: 0, or 1 after "parprim CMD: backend B: ...". */
int cli_create(const char *cmd, pp_context **ctx, pp_backend backend);
/* Copies host[0..bytes) into new pp_malloc memory of ctx (*dev) and waits for it: 0, or 1
 * after reporting the failure (cli_call_failed) with nothing left allocated. */
int cli_stage(const char *cmd, pp_context *ctx, const void *host, size_t bytes, void **dev);

/* ---- a subcommand's command line -------------------------------------------------------
 * Each subcommand lists its options in a table of cli_option and walks argv with
 * cli_scan_next, so that every command takes "--name V" and "--name=V" alike, answers -h,
 * --help and help with its usage on stdout, and words a bad type, backend, size or missing
 * value the same way. The common kinds are parsed into their target by the scan; the
 * command sees only its own options (by id) and, unless it names an operand, the
 * arguments that are no option of the table. */

typedef enum cli_opt_kind {
  CLI_KIND_FLAG,    /* no value: sets *(bool *)target */
  CLI_KIND_SWITCH,  /* no value: handed to the command by id */
  CLI_KIND_VALUE,   /* a value the command parses itself (cli_scan.val), by id */
  CLI_KIND_QUIET,   /* --quiet: no progress line (progress.h) */
  CLI_KIND_DTYPE,   /* *(pp_dtype *)target: u8, i32, u32, i64, u64, f32, f64 */
  CLI_KIND_BACKEND, /* *(pp_backend *)target: cpu, cuda, auto */
  CLI_KIND_NAME,    /* *(const char **)target: a file or directory name, not empty */
  CLI_KIND_SIZE,    /* *(size_t *)target: a size (cli_parse_size) in [min, max] */
  CLI_KIND_NUMBER   /* *(double *)target: a finite number */
} cli_opt_kind;

typedef struct cli_option {
  const char *name; /* "--type" */
  cli_opt_kind kind;
  void *target;
  bool *given;      /* optional: set true when the option is seen */
  bool required;    /* the scan reports "NAME is required" when it is not given */
  const char *text; /* NAME: what the value names ("a file name"); SIZE, NUMBER: the
                       message for a bad value, where %s stands for the value */
  size_t min, max;  /* SIZE: the accepted range; max 0: no upper bound */
  int id;           /* SWITCH, VALUE: what cli_scan_next returns for it (>= 0) */
} cli_option;

#define CLI_REQUIRED true
#define CLI_OPTIONAL false

#define CLI_FLAG(name_, flag_) {.name = name_, .kind = CLI_KIND_FLAG, .target = flag_}
#define CLI_SWITCH(name_, id_) {.name = name_, .kind = CLI_KIND_SWITCH, .id = id_}
#define CLI_VALUE(name_, id_) {.name = name_, .kind = CLI_KIND_VALUE, .id = id_}
#define CLI_QUIET {.name = "--quiet", .kind = CLI_KIND_QUIET}
#define CLI_DTYPE(name_, type_, given_, required_)                                         \
  {.name = name_, .kind = CLI_KIND_DTYPE, .target = type_, .given = given_,             \
   .required = required_}
#define CLI_BACKEND(name_, backend_) {.name = name_, .kind = CLI_KIND_BACKEND, .target = backend_}
#define CLI_NAME(name_, path_, what_)                                                     \
  {.name = name_, .kind = CLI_KIND_NAME, .target = path_, .text = what_}
#define CLI_SIZE(name_, size_, required_, min_, max_, bad_)                               \
  {.name = name_, .kind = CLI_KIND_SIZE, .target = size_, .required = required_,        \
   .text = bad_, .min = min_, .max = max_}
#define CLI_NUMBER(name_, number_, given_, bad_)                                          \
  {.name = name_, .kind = CLI_KIND_NUMBER, .target = number_, .given = given_, .text = bad_}

/* The walk over one subcommand's argv (argv[0] is the subcommand's name). */
typedef struct cli_scan {
  const char *cmd;        /* "sort": usage errors read "parprim sort: ..." */
  void (*usage)(FILE *f); /* the command's usage text */
  const cli_option *opts;
  int nopts;
  int argc;
  char **argv;
  const char **operand;   /* a command of one input file: where it goes (the scan reports
                             unknown options, a second operand and none); NULL: every
                             argument that is no option is the command's (CLI_SCAN_OTHER) */
  const char *no_operand; /* the message when there is no operand */
  int i;                  /* argv index of arg */
  const char *arg;        /* the argument just scanned */
  const char *val;        /* its value, for a VALUE option */
  int exit;               /* after CLI_SCAN_EXIT: 0 (help shown) or 2 (usage error shown) */
  uint64_t seen;          /* bit k: opts[k] was given (required options: k < 64) */
} cli_scan;

#define CLI_SCAN(cmd_, usage_, opts_, argc_, argv_, operand_, no_operand_)                \
  {.cmd = cmd_, .usage = usage_, .opts = opts_,                                           \
   .nopts = (int)(sizeof(opts_) / sizeof((opts_)[0])), .argc = argc_, .argv = argv_,     \
   .operand = operand_, .no_operand = no_operand_}

#define CLI_SCAN_END (-1)   /* argv is done and nothing required is missing */
#define CLI_SCAN_OTHER (-2) /* sc->arg is no option of the table: an operand, or unknown */
#define CLI_SCAN_EXIT (-3)  /* help or a usage error was printed: the exit code is sc->exit */

/* Scans on to the next argument the command must see: returns the id of a SWITCH or VALUE
 * option, CLI_SCAN_OTHER, CLI_SCAN_END or CLI_SCAN_EXIT. */
int cli_scan_next(cli_scan *sc);
/* The whole scan of a command whose table has no SWITCH or VALUE options and that names its
 * operand: -1 when argv is parsed, else the exit code. */
int cli_scan_all(cli_scan *sc);
/* A usage error of sc's command (cli_usage_error); returns 2. */
int cli_scan_error(const cli_scan *sc, const char *fmt, const char *arg);

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
