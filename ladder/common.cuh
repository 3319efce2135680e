/*
 * common.cuh — what every ladder shares, on the model of llm.c's dev/cuda/common.h: one
 * CUDA error check that names file:line, ceil_div, the arguments every ladder takes (its
 * name first or not, --n as the rest of the command reads it), the device check that turns
 * "no GPU" into ctest's skip code, the session the timed ladders open (device, stream,
 * events, the library's context, the L2 flush buffer), and timing with CUDA events
 * (median of the runs).
 *
 * A ladder is one .cu file (its CPU reference, its numbered steps, and a main-like entry in
 * ladder.h); the helpers here hold no state of their own. The size parser, the clock and
 * the median are the command's (cli/common.h), so `--n 2^20` means what it means in
 * `parprim bench` and `parprim demo`.
 */
#ifndef PP_LADDER_COMMON_CUH
#define PP_LADDER_COMMON_CUH

#include "common.h" /* cli/common.h: cli_parse_size, cli_now_ms, cli_median */
#include "parprim.h"

#include <cuda_runtime.h>

#include <initializer_list>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exit status of a ladder when no CUDA device is usable: ctest's SKIP_RETURN_CODE. */
#define LADDER_EXIT_SKIP 77

/* ---- CUDA errors ------------------------------------------------------------------- */

/* Reports a failed CUDA call on stderr as "CUDA error: FILE:LINE: CALL failed: TEXT (NAME)"
 * and returns false; returns true for cudaSuccess. After an illegal address or a failed
 * launch the context is unusable, so callers stop the ladder rather than go on. */
static inline bool ladder_cuda_ok(cudaError_t e, const char *call, const char *file, int line) {
  if (e == cudaSuccess) return true;
  fprintf(stderr, "CUDA error: %s:%d: %s failed: %s (%s)\n", file, line, call,
          cudaGetErrorString(e), cudaGetErrorName(e));
  return false;
}

/* The one check: a bool expression, true when the call succeeded. */
#define LADDER_CUDA_OK(call) ladder_cuda_ok((call), #call, __FILE__, __LINE__)
/* Inside a function that returns bool: return false when the call failed. */
#define LADDER_CUDA_TRY(call)                                                              \
  do {                                                                                     \
    if (!LADDER_CUDA_OK(call)) return false;                                               \
  } while (0)

/* Inside a ladder that unwinds on failure (C++ exceptions): throw LadderCudaFailure, which
 * the ladder's entry catches (the message is already out). */
struct LadderCudaFailure {};
#define LADDER_CUDA_CHECK(call)                                                            \
  do {                                                                                     \
    if (!LADDER_CUDA_OK(call)) throw LadderCudaFailure{};                                  \
  } while (0)

/* ---- arithmetic ---------------------------------------------------------------------- */

static inline __host__ __device__ size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }
static inline size_t min_size(size_t a, size_t b) { return b < a ? b : a; }

/* ---- arguments ----------------------------------------------------------------------- */

/* Index of the first option: argv[0] is skipped when it is the ladder's name (does not
 * start with '-'), as main() skips the program's name (ladder.h). */
static inline int ladder_first_arg(int argc, char **argv) {
  return argc > 0 && argv[0] && argv[0][0] != '-' ? 1 : 0;
}

/* Options as "--name VALUE" or "--name=VALUE": ladder_opt_len is the length of the name
 * part of arg (before a '=' when arg starts with "--"), *eq the '=' or NULL. */
static inline size_t ladder_opt_len(const char *arg, const char **eq) {
  *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
  return *eq ? (size_t)(*eq - arg) : strlen(arg);
}
/* arg's name part (its first len characters) is the option `name`. */
static inline bool ladder_is_opt(const char *arg, size_t len, const char *name) {
  return strlen(name) == len && strncmp(arg, name, len) == 0;
}
/* The option's value: after its '=' (eq), else the next argument (*i moves past it);
 * false, and *v untouched, when there is none. */
static inline bool ladder_take_value(int argc, char **argv, int *i, const char *eq,
                                     const char **v) {
  if (eq) {
    *v = eq + 1;
    return true;
  }
  if (*i + 1 >= argc || !argv[*i + 1]) return false;
  *v = argv[++*i];
  return true;
}

/* A flag (--check, --csv) given as "--flag=VALUE": prints "FLAG takes no value" to stderr
 * and returns false; true when it has no value (eq NULL). */
static inline bool ladder_flag_has_no_value(const char *arg, size_t len, const char *eq) {
  if (!eq) return true;
  fprintf(stderr, "%.*s takes no value\n", (int)len, arg);
  return false;
}

/* Parses the value of `flag` as a size (cli_parse_size: 1048576, 0x100000, 2^20, 1<<20,
 * 1M) within [lo, hi]; on bad text or a value outside prints
 * "FLAG needs a number in [LO, HI] (got 'TEXT')" to stderr and returns false. */
static inline bool ladder_parse_size(const char *flag, const char *text, size_t lo, size_t hi,
                                     size_t *out) {
  size_t v = 0;
  if (text && cli_parse_size(text, &v) == 0 && v >= lo && v <= hi) {
    *out = v;
    return true;
  }
  fprintf(stderr, "%s needs a number in [%zu, %zu] (got '%s')\n", flag, lo, hi, text ? text : "");
  return false;
}

/* The options of the ladders that take no others (histogram, topk). */
struct LadderArgs {
  size_t n;
  int reps;
  bool check, csv;
};
enum LadderParse { LADDER_PARSE_OK, LADDER_PARSE_HELP, LADDER_PARSE_BAD };

/* --n N (in [1, n_max]), --reps R (in [1, 100000]), --check, --csv (only when csv_ok),
 * --help / -h, over the defaults already in *a. On LADDER_PARSE_BAD the reason is on
 * stderr; the caller prints its usage. */
static inline LadderParse ladder_parse_args(int argc, char **argv, const char *name,
                                            size_t n_max, bool csv_ok, LadderArgs *a) {
  for (int i = ladder_first_arg(argc, argv); i < argc; i++) {
    const char *arg = argv[i];
    size_t v = 0;
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) return LADDER_PARSE_HELP;
    if (!strcmp(arg, "--check")) {
      a->check = true;
    } else if (csv_ok && !strcmp(arg, "--csv")) {
      a->csv = true;
    } else if (!strcmp(arg, "--n") && i + 1 < argc) {
      if (!ladder_parse_size("--n", argv[++i], 1, n_max, &a->n)) return LADDER_PARSE_BAD;
    } else if (!strcmp(arg, "--reps") && i + 1 < argc) {
      if (!ladder_parse_size("--reps", argv[++i], 1, 100000, &v)) return LADDER_PARSE_BAD;
      a->reps = (int)v;
    } else {
      fprintf(stderr, "ladder %s: unknown argument '%s'\n", name, arg);
      return LADDER_PARSE_BAD;
    }
  }
  return LADDER_PARSE_OK;
}

/* ---- the device ---------------------------------------------------------------------- */

/* True when a CUDA device is usable; otherwise prints "SKIP: no CUDA device" (the ladder
 * then returns LADDER_EXIT_SKIP) and clears the runtime's sticky error. */
static inline bool ladder_have_device(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) return true;
  cudaGetLastError();
  printf("SKIP: no CUDA device\n");
  return false;
}

/* What every ladder does before its work, from its parse result: usage on stdout and 0
 * after --help, usage on stderr and 2 after bad usage, "SKIP: no CUDA device" and
 * LADDER_EXIT_SKIP without a usable device; -1 to go on. */
static inline int ladder_early_exit(LadderParse parsed, void (*usage)(FILE *)) {
  if (parsed == LADDER_PARSE_HELP) {
    usage(stdout);
    return 0;
  }
  if (parsed == LADDER_PARSE_BAD) {
    usage(stderr);
    return 2;
  }
  return ladder_have_device() ? -1 : LADDER_EXIT_SKIP;
}

/* ---- the session of a timed ladder ---------------------------------------------------- */

/* What the reduce, scan and sort ladders hold for the whole command. Zero it before
 * ladder_open_device; ladder_session_close frees what is there. */
struct LadderSession {
  int device;
  cudaDeviceProp prop;
  cudaStream_t stream;
  cudaEvent_t start, stop;
  pp_context *ctx;      // the production steps' context; NULL when there is none
  char ctx_skip[1024];  // why the production steps are skipped, when they are
  char ctx_fail[1024];  // why they fail (no context), when they do
  void *l2_flush;       // written before each timed run, so that no run finds its input in L2
  size_t l2_flush_bytes;
};

/* The current device and its properties, a blocking stream (its work waits for the
 * cudaMemcpy uploads, which from pageable memory return before the data is on the
 * device) and the two timing events. False after reporting a failed call. */
static inline bool ladder_open_device(LadderSession *ss) {
  LADDER_CUDA_TRY(cudaGetDevice(&ss->device));
  LADDER_CUDA_TRY(cudaGetDeviceProperties(&ss->prop, ss->device));
  LADDER_CUDA_TRY(cudaStreamCreateWithFlags(&ss->stream, cudaStreamDefault));
  LADDER_CUDA_TRY(cudaEventCreate(&ss->start));
  LADDER_CUDA_TRY(cudaEventCreate(&ss->stop));
  return true;
}

/* The library's CUDA context on ss->stream for the production steps. Without one (no CUDA
 * backend: ctx_skip says so; pp_create or pp_set_stream failed: ctx_fail says why) those
 * steps are skipped or fail, and the rest of the ladder still runs. */
static inline void ladder_open_context(LadderSession *ss) {
  if (!pp_has_cuda_backend()) {
    snprintf(ss->ctx_skip, sizeof ss->ctx_skip, "library built without the CUDA backend");
    return;
  }
  const pp_status st = pp_create(&ss->ctx, PP_BACKEND_CUDA);
  if (st != PP_OK) {
    ss->ctx = nullptr;
    snprintf(ss->ctx_fail, sizeof ss->ctx_fail, "pp_create(PP_BACKEND_CUDA): %s: %s",
             pp_status_string(st), pp_last_error(nullptr));
    return;
  }
  const pp_status st2 = pp_set_stream(ss->ctx, ss->stream);
  if (st2 != PP_OK) {
    snprintf(ss->ctx_fail, sizeof ss->ctx_fail, "pp_set_stream: %s: %s", pp_status_string(st2),
             pp_last_error(ss->ctx));
    pp_destroy(ss->ctx);
    ss->ctx = nullptr;
  }
}

/* The L2 flush buffer, twice the L2 (none when the device reports no L2). False after
 * reporting a failed cudaMalloc. */
static inline bool ladder_alloc_l2_flush(LadderSession *ss) {
  if (ss->prop.l2CacheSize > 0) {
    ss->l2_flush_bytes = 2 * (size_t)ss->prop.l2CacheSize;
    LADDER_CUDA_TRY(cudaMalloc(&ss->l2_flush, ss->l2_flush_bytes));
  }
  return true;
}

/* The start of the timed ladders: ladder_early_exit, then ladder_open_device (1 when it
 * fails); -1 to go on. */
static inline int ladder_start(LadderParse parsed, void (*usage)(FILE *), LadderSession *ss) {
  const int early = ladder_early_exit(parsed, usage);
  if (early >= 0) return early;
  return ladder_open_device(ss) ? -1 : 1;
}

static inline void ladder_session_close(LadderSession *ss) {
  if (ss->ctx) pp_destroy(ss->ctx);  // before the stream it queues work on goes away
  if (ss->l2_flush) cudaFree(ss->l2_flush);
  if (ss->start) cudaEventDestroy(ss->start);
  if (ss->stop) cudaEventDestroy(ss->stop);
  if (ss->stream) cudaStreamDestroy(ss->stream);
  memset(ss, 0, sizeof *ss);
}

/* Frees each of ptrs (NULL ones included): cudaFree on device buffers, free on host ones.
 * Errors here cannot be reported usefully; a failed run has reported one already. */
static inline void ladder_cuda_free(std::initializer_list<void *> ptrs) {
  for (void *p : ptrs) cudaFree(p);
}
static inline void ladder_host_free(std::initializer_list<void *> ptrs) {
  for (void *p : ptrs) free(p);
}

/* ---- output -------------------------------------------------------------------------- */

/* Text returned by value, so that several fit in one printf. */
struct LadderNum {
  char s[64];
};
struct LadderCsv {
  char s[2 * 1024 + 3];
};

/* v with the printf format f, or "-" for NaN (nothing measured). */
static inline LadderNum ladder_num(const char *f, double v) {
  LadderNum t;
  if (isnan(v))
    snprintf(t.s, sizeof t.s, "-");
  else
    snprintf(t.s, sizeof t.s, f, v);
  return t;
}

/* A CSV field: quoted, since step names and notes hold commas; quotes doubled (RFC 4180);
 * texts beyond 1024 bytes are cut. */
static inline LadderCsv ladder_csv(const char *t) {
  LadderCsv q;
  size_t k = 0;
  q.s[k++] = '"';
  for (; *t && k + 3 < sizeof q.s; ++t) {
    if (*t == '"') q.s[k++] = '"';
    q.s[k++] = *t;
  }
  q.s[k++] = '"';
  q.s[k] = '\0';
  return q;
}

/* ---- timing -------------------------------------------------------------------------- */

static inline int ladder_cmp_float(const void *a, const void *b) {
  const float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* Median of v[0..n) (reorders v); 0 for n == 0. */
static inline float ladder_median_f(float *v, size_t n) {
  if (n == 0) return 0.0f;
  qsort(v, n, sizeof *v, ladder_cmp_float);
  return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

/* The time of launch(i) on `stream` between two events, in ms (llm.c's benchmark_kernel
 * for one run; the ladders take the median of their runs with ladder_median_f). launch
 * returns false after reporting its own failure. */
template <class Launch>
static bool ladder_event_ms(cudaStream_t stream, cudaEvent_t start, cudaEvent_t stop, int i,
                            Launch launch, float *ms) {
  return LADDER_CUDA_OK(cudaEventRecord(start, stream)) && launch(i) &&
         LADDER_CUDA_OK(cudaEventRecord(stop, stream)) &&
         LADDER_CUDA_OK(cudaEventSynchronize(stop)) &&
         LADDER_CUDA_OK(cudaEventElapsedTime(ms, start, stop));
}

#endif /* PP_LADDER_COMMON_CUH */
