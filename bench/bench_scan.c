/*
 * bench_scan.c — `parprim bench scan`, `select`, `select_flagged` and `partition`: one
 * pass over rotating slots, against CUB's DeviceScan / DeviceSelect / DevicePartition on
 * CUDA and a memcpy of the input on the CPU, whose result is checked against a serial
 * reference here.
 */
#include "bench_impl.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ==================================================================================== */
/* scan, select, select_flagged, partition: one pass over rotating slots               */
/* ==================================================================================== */

typedef struct pass_case {
  pp_dtype t;
  size_t n, es;               /* elements, and their size (select_flagged: record size) */
  pp_op op;                   /* scan */
  bool inclusive;             /* scan */
  unsigned char value[8];     /* select, partition: keep x > value */
  bool partition;             /* select_like: partition rather than select */
  bench_ws in, flags, out;    /* flags: select_flagged only */
  bench_ws peer_out;          /* CUB's output, or the CPU memcpy's target */
  uint64_t *count, *peer_count; /* pp_malloc'd */
} pass_case;

/* Half the random data passes: x > 0 for floats and signed types (uniform around 0), the
 * middle of the range for unsigned ones. */
static const char *threshold_for(pp_dtype t, void *value) {
  uint64_t half = 0;
  memset(value, 0, 8);
  switch (t) {
  case PP_U8:
    half = UINT8_MAX / 2;
    break;
  case PP_U32:
    half = UINT32_MAX / 2;
    break;
  case PP_U64:
    half = UINT64_MAX / 2;
    break;
  default:
    return "x>0"; /* zero bits are 0 and +0.0 */
  }
  memcpy(value, &half, pp_dtype_size(t)); /* little-endian hosts */
  return "x>max/2";
}

static pp_status call_scan(bench_env *env, void *arg, size_t slot) {
  pass_case *c = arg;
  return ours_status(env,
                     pp_scan(env->ctx, c->op, c->t, ws_slot(&c->in, slot), ws_slot(&c->out, slot),
                             c->n, c->inclusive),
                     "pp_scan");
}

/* select and partition take the same arguments; the case says which it runs. */
static pp_status call_select_like(bench_env *env, void *arg, size_t slot) {
  pass_case *c = arg;
  pp_status (*fn)(pp_context *, pp_dtype, const void *, size_t, pp_cmp, const void *, void *,
                  uint64_t *) = c->partition ? pp_partition : pp_select;
  return ours_status(env,
                     fn(env->ctx, c->t, ws_slot(&c->in, slot), c->n, PP_GT, c->value,
                        ws_slot(&c->out, slot), c->count),
                     c->partition ? "pp_partition" : "pp_select");
}

static pp_status call_select_flagged(bench_env *env, void *arg, size_t slot) {
  pass_case *c = arg;
  return ours_status(env,
                     pp_select_flagged(env->ctx, c->es, ws_slot(&c->in, slot),
                                       ws_slot(&c->flags, slot), c->n, ws_slot(&c->out, slot),
                                       c->count),
                     "pp_select_flagged");
}

static pp_status call_cub_scan(bench_env *env, void *arg, size_t slot) {
  pass_case *c = arg;
  return gpu_status(env,
                    bench_cub_scan(c->t, c->op, c->inclusive, ws_slot(&c->in, slot),
                                   ws_slot(&c->peer_out, slot), c->n, env->stream),
                    "CUB scan");
}

static pp_status call_cub_select_like(bench_env *env, void *arg, size_t slot) {
  pass_case *c = arg;
  int (*fn)(pp_dtype, const void *, const void *, void *, uint64_t *, size_t, void *) =
      c->partition ? bench_cub_partition : bench_cub_select;
  return gpu_status(env,
                    fn(c->t, c->value, ws_slot(&c->in, slot), ws_slot(&c->peer_out, slot),
                       c->peer_count, c->n, env->stream),
                    c->partition ? "CUB partition" : "CUB select");
}

static pp_status call_cub_select_flagged(bench_env *env, void *arg, size_t slot) {
  pass_case *c = arg;
  return gpu_status(env,
                    bench_cub_select_flagged(c->es, ws_slot(&c->in, slot),
                                             ws_slot(&c->flags, slot),
                                             ws_slot(&c->peer_out, slot), c->peer_count, c->n,
                                             env->stream),
                    "CUB select flagged");
}

static pp_status call_pass_memcpy(bench_env *env, void *arg, size_t slot) {
  pass_case *c = arg;
  (void)env;
  parallel_memcpy(ws_slot(&c->peer_out, slot), ws_slot(&c->in, slot), c->n * c->es);
  return PP_OK;
}

static bool scan_ready(bench_env *env, void *arg) {
  pass_case *c = arg;
  return gpu_ok(env, bench_cub_scan_prepare(c->t, c->op, c->inclusive, c->n, env->stream),
                "CUB temp storage");
}

static bool select_like_ready(bench_env *env, void *arg) {
  pass_case *c = arg;
  return gpu_ok(env,
                (c->partition ? bench_cub_partition_prepare : bench_cub_select_prepare)(
                    c->t, c->n, env->stream),
                "CUB temp storage");
}

static bool select_flagged_ready(bench_env *env, void *arg) {
  pass_case *c = arg;
  return gpu_ok(env, bench_cub_select_flagged_prepare(c->es, c->n, env->stream),
                "CUB temp storage");
}

/* ---- host references (the CPU backend's check) --------------------------------------- */

/* Integer scans wrap in t: summed in the unsigned type of the same width. */
#define SCAN_INT_REF(T, U, LOWEST, HIGHEST)                                                    \
  {                                                                                            \
    const T *x = in;                                                                           \
    T *y = out;                                                                                \
    T acc = op == PP_MIN ? (T)(HIGHEST) : op == PP_MAX ? (T)(LOWEST) : (T)0;                   \
    for (size_t i = 0; i < n; i++) {                                                           \
      T v = x[i];                                                                              \
      T next = op == PP_SUM   ? (T)(U)((U)acc + (U)v)                                          \
               : op == PP_MIN ? (v < acc ? v : acc)                                            \
                              : (v > acc ? v : acc);                                           \
      y[i] = inclusive ? next : acc;                                                           \
      acc = next;                                                                              \
    }                                                                                          \
  }

/* Float sums run compensated (Neumaier) in double: the reference must be far more
 * accurate than the tolerance the results are held to. */
#define SCAN_FLOAT_REF(T)                                                                      \
  {                                                                                            \
    const T *x = in;                                                                           \
    T *y = out;                                                                                \
    double sum = 0.0, comp = 0.0;                                                              \
    T m = op == PP_MIN ? (T)INFINITY : (T)-INFINITY;                                           \
    for (size_t i = 0; i < n; i++) {                                                           \
      T v = x[i];                                                                              \
      if (op == PP_SUM) {                                                                      \
        T before = (T)(sum + comp);                                                            \
        double s2 = sum + (double)v;                                                           \
        comp += fabs(sum) >= fabs((double)v) ? (sum - s2) + (double)v : ((double)v - s2) + sum; \
        sum = s2;                                                                              \
        y[i] = inclusive ? (T)(sum + comp) : before;                                           \
      } else {                                                                                 \
        T next = op == PP_MIN ? (v < m ? v : m) : (v > m ? v : m);                             \
        y[i] = inclusive ? next : m;                                                           \
        m = next;                                                                              \
      }                                                                                        \
    }                                                                                          \
  }

static void scan_reference(pp_dtype t, pp_op op, bool inclusive, const void *in, void *out,
                           size_t n) {
  switch (t) {
  case PP_U8:
    SCAN_INT_REF(uint8_t, uint8_t, 0, UINT8_MAX)
    break;
  case PP_I32:
    SCAN_INT_REF(int32_t, uint32_t, INT32_MIN, INT32_MAX)
    break;
  case PP_U32:
    SCAN_INT_REF(uint32_t, uint32_t, 0, UINT32_MAX)
    break;
  case PP_I64:
    SCAN_INT_REF(int64_t, uint64_t, INT64_MIN, INT64_MAX)
    break;
  case PP_U64:
    SCAN_INT_REF(uint64_t, uint64_t, 0, UINT64_MAX)
    break;
  case PP_F32:
    SCAN_FLOAT_REF(float)
    break;
  case PP_F64:
    SCAN_FLOAT_REF(double)
    break;
  }
}

#undef SCAN_INT_REF
#undef SCAN_FLOAT_REF

/* First i where a float SUM scan is off by more than (ceil(log2(n+1)) + 32) * eps * the
 * sum of |x| up to i, times factor (2 when both sides are approximations), or n. */
static size_t scan_float_mismatch(pp_dtype t, const void *in, const void *got, const void *want,
                                  size_t n, double factor) {
  double eps = t == PP_F32 ? FLT_EPSILON : DBL_EPSILON;
  double k = (ceil(log2((double)n + 1.0)) + 32.0) * eps * factor;
  double abs_prefix = 0.0;
#define FLOAT_MISMATCH(T)                                                                      \
  {                                                                                            \
    const T *x = in, *g = got, *w = want;                                                      \
    for (size_t i = 0; i < n; i++) {                                                           \
      abs_prefix += fabs((double)x[i]);                                                        \
      if (!(fabs((double)g[i] - (double)w[i]) <= k * abs_prefix))                              \
        return i;                                                                              \
    }                                                                                          \
  }
  if (t == PP_F32)
    FLOAT_MISMATCH(float)
  else
    FLOAT_MISMATCH(double)
#undef FLOAT_MISMATCH
  return n;
}

/* mask[i] = x[i] > *value */
static void greater_mask(pp_dtype t, const void *in, size_t n, const void *value, uint8_t *mask) {
#define GT_MASK(T)                                                                             \
  {                                                                                            \
    const T *x = in;                                                                           \
    T v;                                                                                       \
    memcpy(&v, value, sizeof v);                                                               \
    for (size_t i = 0; i < n; i++)                                                             \
      mask[i] = x[i] > v;                                                                      \
  }
  DTYPE_SWITCH(t, GT_MASK)
#undef GT_MASK
}

/* The kept records in order, then (partition) the others in order; returns the count. */
static uint64_t split_reference(const void *in, const uint8_t *mask, size_t n, size_t es,
                                bool with_rest, void *out) {
  const char *x = in;
  char *y = out;
  uint64_t kept = 0;
  for (size_t i = 0; i < n; i++)
    if (mask[i])
      memcpy(y + kept++ * es, x + i * es, es);
  size_t rest = (size_t)kept;
  for (size_t i = 0; with_rest && i < n; i++)
    if (!mask[i])
      memcpy(y + rest++ * es, x + i * es, es);
  return kept;
}

/* The CPU backend's expected output of select / select_flagged / partition for the last
 * slot: computed here from a host copy of the input (and flags). NULL when no copy. */
static void *split_expected(bench_env *env, pass_case *c, bool with_rest, uint64_t *count) {
  size_t slot = last_slot(env), bytes = c->n * c->es;
  void *in = host_copy(env, ws_slot(&c->in, slot), bytes, "pp_copy (input)");
  uint8_t *mask = c->flags.base ? host_copy(env, ws_slot(&c->flags, slot), c->n, "pp_copy (flags)")
                                : malloc(c->n ? c->n : 1);
  void *want = malloc(bytes ? bytes : 1);
  if (in && mask && want) {
    if (!c->flags.base)
      greater_mask(c->t, in, c->n, c->value, mask);
    *count = split_reference(in, mask, c->n, c->es, with_rest, want);
  } else {
    if (in && !want)
      bench_note(env, "check skipped: no host memory for the reference");
    free(want);
    want = NULL;
  }
  free(in);
  free(mask);
  return want;
}

/* ---- checks ---------------------------------------------------------------------------- */

static const char *scan_check(bench_env *env, void *arg, bench_row *r) {
  pass_case *c = arg;
  if (r->ours_missing)
    return "unsupported";
  size_t slot = last_slot(env), bytes = c->n * c->es;
  bool fsum = c->op == PP_SUM && is_float(c->t);
  void *got = host_copy(env, ws_slot(&c->out, slot), bytes, "pp_copy (result)");
  void *in = NULL, *want = NULL;
  /* the CPU reference needs the input, and so does the float tolerance */
  if (got && (!env->cuda || fsum))
    in = host_copy(env, ws_slot(&c->in, slot), bytes, "pp_copy (input)");
  bool have_in = in || (env->cuda && !fsum);
  if (got && have_in && env->cuda) {
    want = host_copy(env, ws_slot(&c->peer_out, slot), bytes, "pp_copy (CUB result)");
  } else if (got && have_in) {
    want = malloc(bytes ? bytes : 1);
    if (want)
      scan_reference(c->t, c->op, c->inclusive, in, want, c->n);
    else
      bench_note(env, "check skipped: no host memory for the reference");
  }
  const char *res = "-";
  if (want) {
    size_t bad = fsum ? scan_float_mismatch(c->t, in, got, want, c->n, env->cuda ? 2.0 : 1.0)
                      : first_difference(got, want, c->n, c->es);
    res = "ok";
    if (bad < c->n) {
      char a[64], b[64];
      res = mismatch(env, r, "index %zu: parprim %s, %s %s%s", bad,
                     elem_text(c->t, got, bad, a, sizeof a), env->cuda ? "CUB" : "reference",
                     elem_text(c->t, want, bad, b, sizeof b),
                     fsum ? " (beyond the float tolerance)" : "");
    }
  }
  free(in);
  free(got);
  free(want);
  return res;
}

static double select_bytes(const pass_case *c, uint64_t count) {
  double flags = c->flags.base ? (double)c->n : 0.0;
  return (double)c->n * (double)c->es + flags + (double)count * (double)c->es;
}

/* select and select_flagged: the count exactly, then the kept records bit for bit. */
static const char *select_check(bench_env *env, void *arg, bench_row *r) {
  pass_case *c = arg;
  size_t slot = last_slot(env);
  uint64_t want_count = 0, got_count = 0;
  if (env->cuda) {
    if (!fetch_count(env, c->peer_count, &want_count))
      return "-";
    r->peer_bytes = select_bytes(c, want_count);
  }
  if (r->ours_missing)
    return "unsupported";
  if (!fetch_count(env, c->count, &got_count))
    return "-";
  r->bytes = select_bytes(c, got_count);
  void *want = env->cuda ? host_copy(env, ws_slot(&c->peer_out, slot),
                                     (size_t)want_count * c->es, "pp_copy (CUB result)")
                         : split_expected(env, c, false, &want_count);
  if (!want)
    return "-";
  const char *res = "ok";
  if (got_count != want_count) {
    res = mismatch(env, r, "count %" PRIu64 ", %s %" PRIu64, got_count,
                   env->cuda ? "CUB" : "reference", want_count);
  } else {
    void *got = host_copy(env, ws_slot(&c->out, slot), (size_t)got_count * c->es,
                          "pp_copy (result)");
    size_t bad = got ? first_difference(got, want, (size_t)got_count, c->es) : (size_t)got_count;
    if (!got)
      res = "-";
    else if (bad < got_count)
      res = mismatch(env, r, "kept record %zu differs (count %" PRIu64 " agrees)", bad, got_count);
    free(got);
  }
  free(want);
  return res;
}

/* The matching part exactly; the rest exactly too, read backwards on CUDA, where CUB
 * writes it in reverse. */
static const char *partition_check(bench_env *env, void *arg, bench_row *r) {
  pass_case *c = arg;
  if (r->ours_missing)
    return "unsupported";
  size_t slot = last_slot(env), n = c->n, es = c->es;
  uint64_t want_count = 0, got_count = 0;
  if (!fetch_count(env, c->count, &got_count) ||
      (env->cuda && !fetch_count(env, c->peer_count, &want_count)))
    return "-";
  void *want = env->cuda ? host_copy(env, ws_slot(&c->peer_out, slot), n * es,
                                     "pp_copy (CUB result)")
                         : split_expected(env, c, true, &want_count);
  void *got = want ? host_copy(env, ws_slot(&c->out, slot), n * es, "pp_copy (result)") : NULL;
  const char *res = got ? "ok" : "-";
  if (got && got_count != want_count) {
    res = mismatch(env, r, "count_true %" PRIu64 ", %s %" PRIu64, got_count,
                   env->cuda ? "CUB" : "reference", want_count);
  } else if (got) {
    size_t kept = (size_t)got_count, bad = first_difference(got, want, kept, es);
    if (bad < kept)
      res = mismatch(env, r, "matching element %zu differs", bad);
    for (size_t j = 0; bad == kept && j < n - kept; j++) {
      size_t w = env->cuda ? n - 1 - j : kept + j;
      if (memcmp((char *)got + (kept + j) * es, (char *)want + w * es, es) != 0) {
        res = mismatch(env, r, "non-matching element %zu (index %zu) differs", j, kept + j);
        break;
      }
    }
  }
  free(got);
  free(want);
  return res;
}

/* ---- setup and the entries ---------------------------------------------------------- */

static void pass_teardown(bench_env *env, pass_case *c) {
  bench_ws *const ws[] = {&c->in, &c->flags, &c->out, &c->peer_out};
  void **const small[] = {(void **)&c->count, (void **)&c->peer_count};
  ws_free_list(env, ws, COUNT_OF(ws));
  free_small_list(env, small, COUNT_OF(small));
}

/* Random 0/1 flags (the top bit of random bytes), over every slot and the padding. */
static bool ws_fill_flags(bench_env *env, bench_ws *w) {
  size_t chunk = FILL_CHUNK;
  uint8_t *host = malloc(w->bytes < chunk ? w->bytes : chunk);
  bool ok = host != NULL;
  if (!ok)
    bench_fail(env, "out of host memory staging the flags");
  for (size_t first = 0; ok && first < w->bytes; first += chunk) {
    size_t cnt = w->bytes - first < chunk ? w->bytes - first : chunk;
    cli_fill_random(PP_U8, host, cnt, CLI_SEED + 99, first);
    for (size_t i = 0; i < cnt; i++)
      host[i] >>= 7;
    ok = pp_ok(env, pp_copy(env->ctx, w->base + first, host, cnt), "pp_copy (flags)");
  }
  free(host);
  return ok;
}

/* Input (and flags) slots, and rotating output slots for ours and the peer. Outputs are
 * filled too: that touches every page on the CPU before the clock runs, and a stale
 * output can never pass for a result. */
static case_result pass_setup(bench_env *env, pass_case *c, const char *prim, bool flagged) {
  size_t slots, stride, fslots, fstride;
  if (c->n > SIZE_MAX / c->es) {
    bench_note(env, "%s n=%zu skipped: n * %zu overflows size_t", prim, c->n, c->es);
    return CASE_SKIPPED;
  }
  size_t ws = ws_plan(c->n * c->es, &slots, &stride);
  size_t fws = flagged ? ws_plan(c->n, &fslots, &fstride) : 0;
  if (ws == 0 || ws > SIZE_MAX / 4 || (flagged && (fws == 0 || fws > SIZE_MAX / 4))) {
    bench_note(env, "%s n=%zu skipped: too large", prim, c->n);
    return CASE_SKIPPED;
  }
  if (!fits(env, prim, c->n, 3 * ws + fws))
    return CASE_SKIPPED;
  pp_dtype fill_t = c->t;
  alloc_result a = ws_alloc(env, &c->in, c->n * c->es, fill_t, CLI_SEED + (uint64_t)c->t);
  if (a == ALLOC_OK && flagged) {
    a = ws_alloc(env, &c->flags, c->n, PP_U8, CLI_SEED);
    if (a == ALLOC_OK && !ws_fill_flags(env, &c->flags))
      a = ALLOC_FAIL;
  }
  if (a == ALLOC_OK)
    a = ws_alloc(env, &c->out, c->n * c->es, fill_t, CLI_SEED + 7);
  if (a == ALLOC_OK)
    a = ws_alloc(env, &c->peer_out, c->n * c->es, fill_t, CLI_SEED + 8);
  if (a != ALLOC_OK)
    return a == ALLOC_SKIP ? CASE_SKIPPED : CASE_FAILED;
  bool ok = alloc_small(env, (void **)&c->count, 8) && alloc_small(env, (void **)&c->peer_count, 8);
  return ok ? CASE_RAN : CASE_FAILED;
}

/* The row a pass case starts from; the check fills in what depends on the data. */
static bench_row pass_row(const bench_env *env, const pass_case *c, const char *prim,
                          const char *op, const char *model, double bytes) {
  bench_row r = {.prim = prim, .op = op, .t = c->t, .n = c->n, .bytes_model = model,
                 .check = "-", .peer = env->cuda ? "CUB" : "memcpy"};
  r.bytes = bytes;
  /* the CPU peer copies the input: it reads and writes n*size bytes */
  r.peer_bytes = env->cuda ? bytes : 2.0 * (double)c->n * (double)c->es;
  return r;
}

/* The threaded standard answers (CPU, TBB in the build; bench/peer_cpu_par.cpp): scan SUM
 * as std::exclusive_scan / std::inclusive_scan, select as std::copy_if, with
 * std::execution::par, into the peer's slots. */
static pp_status call_par_scan(bench_env *env, void *arg, size_t slot) {
  pass_case *c = arg;
  if (bench_par_scan(c->t, c->inclusive, ws_slot(&c->in, slot), ws_slot(&c->peer_out, slot), c->n,
                     env->dev.multiprocessors) == 0)
    return PP_OK;
  bench_fail(env, "parallel std scan peer failed");
  return PP_ERR_INVALID_ARGUMENT;
}

static pp_status call_par_select(bench_env *env, void *arg, size_t slot) {
  pass_case *c = arg;
  uint64_t count;
  if (bench_par_select_gt(c->t, c->value, ws_slot(&c->in, slot), c->n, ws_slot(&c->peer_out, slot),
                          &count, env->dev.multiprocessors) == 0)
    return PP_OK;
  bench_fail(env, "parallel std::copy_if peer failed");
  return PP_ERR_INVALID_ARGUMENT;
}

/* par: NULL, or the threaded standard answer, timed after ours and printed as a second row
 * with our time from the first (its output is not checked; the first row's check is). */
static case_result pass_case_run(bench_env *env, pass_case *c, bench_row *r, const case_hooks *h,
                                 bool flagged, bench_call par, const char *par_name) {
  case_result res = pass_setup(env, c, r->prim, flagged);
  if (res == CASE_RAN)
    res = measure_case(env, r, h, c);
  if (res == CASE_RAN && par && !r->ours_missing) {
    bench_row row = *r;
    row.peer = par_name;
    row.peer_bytes = r->bytes;
    row.same_work = true;
    row.check = "-";
    if (bench_time(env, par, c, &row.peer_ms) == PP_OK) print_row(env, &row);
  }
  pass_teardown(env, c);
  return res;
}

int bench_run_scan(bench_env *env, const size_t *sizes, int nsizes) {
  static const char *const names[3][2] = {
      {"ex-sum", "in-sum"}, {"ex-min", "in-min"}, {"ex-max", "in-max"}};
  const bench_opts *o = env->o;
  pp_dtype t = o->has_dtype ? o->dtype : PP_U32;
  pp_op op = o->has_op ? o->op : PP_SUM;
  for (int i = 0; i < nsizes; i++)
    for (int inc = 0; inc < 2; inc++) {
      pass_case c = {.t = t, .n = sizes[i], .es = pp_dtype_size(t), .op = op,
                     .inclusive = inc == 1};
      case_hooks h = {.ours = call_scan, .peer = env->cuda ? call_cub_scan : call_pass_memcpy,
                      .peer_ready = env->cuda ? scan_ready : NULL, .check = scan_check};
      bench_row r = pass_row(env, &c, "scan", names[op][inc], "reads+writes 2*n*size",
                             2.0 * (double)c.n * (double)c.es);
      const bool par = !env->cuda && op == PP_SUM && bench_cpu_tbb_name();
      pass_case_run(env, &c, &r, &h, false, par ? call_par_scan : NULL,
                    inc ? "std::inclusive_scan par" : "std::exclusive_scan par");
    }
  return 0;
}

static int run_select_like(bench_env *env, const size_t *sizes, int nsizes, bool partition) {
  const bench_opts *o = env->o;
  pp_dtype t = o->has_dtype ? o->dtype : PP_F32;
  for (int i = 0; i < nsizes; i++) {
    pass_case c = {.t = t, .n = sizes[i], .es = pp_dtype_size(t), .partition = partition};
    const char *op = threshold_for(t, c.value);
    case_hooks h = {.ours = call_select_like,
                    .peer = env->cuda ? call_cub_select_like : call_pass_memcpy,
                    .peer_ready = env->cuda ? select_like_ready : NULL,
                    .check = partition ? partition_check : select_check};
    /* select's bytes depend on the count: the check fills them in */
    bench_row r = partition ? pass_row(env, &c, "partition", op, "reads+writes 2*n*size",
                                       2.0 * (double)c.n * (double)c.es)
                            : pass_row(env, &c, "select", op, "reads n*size, writes count*size",
                                       (double)c.n * (double)c.es);
    const bool par = !env->cuda && !partition && bench_cpu_tbb_name();
    pass_case_run(env, &c, &r, &h, false, par ? call_par_select : NULL, "std::copy_if par");
  }
  return 0;
}

int bench_run_select(bench_env *env, const size_t *sizes, int nsizes) {
  return run_select_like(env, sizes, nsizes, false);
}

int bench_run_partition(bench_env *env, const size_t *sizes, int nsizes) {
  return run_select_like(env, sizes, nsizes, true);
}

/* Records of --dtype's size (f32 by default), moved as bits. */
int bench_run_select_flagged(bench_env *env, const size_t *sizes, int nsizes) {
  const bench_opts *o = env->o;
  pp_dtype t = o->has_dtype ? o->dtype : PP_F32;
  for (int i = 0; i < nsizes; i++) {
    pass_case c = {.t = t, .n = sizes[i], .es = pp_dtype_size(t)};
    case_hooks h = {.ours = call_select_flagged,
                    .peer = env->cuda ? call_cub_select_flagged : call_pass_memcpy,
                    .peer_ready = env->cuda ? select_flagged_ready : NULL,
                    .check = select_check};
    bench_row r = pass_row(env, &c, "select_flagged", "flags",
                           "reads n*size + n flag bytes, writes count*size",
                           (double)c.n * (double)(c.es + 1));
    pass_case_run(env, &c, &r, &h, true, NULL, NULL);
  }
  return 0;
}
