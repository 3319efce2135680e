/*
 * bench_reduce.c — `parprim bench reduce`, `argreduce` and `memcpy`: one read of n
 * elements (reduce, argreduce) against CUB's DeviceReduce on CUDA and a memcpy of the same
 * bytes on the CPU; memcpy is the roofline every one-pass primitive is read against.
 */
#include "bench_impl.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* ==================================================================================== */
/* reduce and argreduce                                                                 */
/* ==================================================================================== */

typedef struct red_case {
  pp_op op;
  pp_dtype t;
  size_t n;
  bench_ws in, dst;         /* dst: target of the CPU memcpy peer */
  void *out, *peer_out;     /* one element of t each, pp_malloc'd */
  void *idx, *peer_idx;     /* argreduce: uint64_t ours, int64_t CUB's */
} red_case;

static pp_status call_reduce(bench_env *env, void *arg, size_t slot) {
  red_case *c = arg;
  pp_status s = pp_reduce(env->ctx, c->op, c->t, ws_slot(&c->in, slot), c->n, c->out);
  if (s != PP_OK && s != PP_ERR_UNSUPPORTED)
    pp_ok(env, s, "pp_reduce");
  return s;
}

static pp_status call_argreduce(bench_env *env, void *arg, size_t slot) {
  red_case *c = arg;
  pp_status s =
      pp_argreduce(env->ctx, c->op, c->t, ws_slot(&c->in, slot), c->n, c->out, c->idx);
  if (s != PP_OK && s != PP_ERR_UNSUPPORTED)
    pp_ok(env, s, "pp_argreduce");
  return s;
}

static pp_status call_cub_reduce(bench_env *env, void *arg, size_t slot) {
  red_case *c = arg;
  int rc = bench_cub_reduce(c->t, c->op, ws_slot(&c->in, slot), c->n, c->peer_out, env->stream);
  return gpu_ok(env, rc, "CUB reduce") ? PP_OK : PP_ERR_DEVICE;
}

static pp_status call_cub_argreduce(bench_env *env, void *arg, size_t slot) {
  red_case *c = arg;
  int rc = bench_cub_argreduce(c->t, c->op, ws_slot(&c->in, slot), c->n, c->peer_out,
                               c->peer_idx, env->stream);
  return gpu_ok(env, rc, "CUB argreduce") ? PP_OK : PP_ERR_DEVICE;
}

static pp_status call_host_memcpy(bench_env *env, void *arg, size_t slot) {
  red_case *c = arg;
  (void)env;
  parallel_memcpy(ws_slot(&c->dst, slot), ws_slot(&c->in, slot), c->n * pp_dtype_size(c->t));
  return PP_OK;
}

static void red_teardown(bench_env *env, red_case *c) {
  bench_ws *const ws[] = {&c->in, &c->dst};
  void **const small[] = {&c->out, &c->peer_out, &c->idx, &c->peer_idx};
  ws_free_list(env, ws, COUNT_OF(ws));
  free_small_list(env, small, COUNT_OF(small));
}

static case_result red_setup(bench_env *env, red_case *c, const char *prim) {
  size_t es = pp_dtype_size(c->t), slots, stride;
  if (c->n > SIZE_MAX / es) {
    bench_note(env, "%s n=%zu skipped: n * %zu overflows size_t", prim, c->n, es);
    return CASE_SKIPPED;
  }
  size_t ws = ws_plan(c->n * es, &slots, &stride);
  if (ws == 0 || ws > SIZE_MAX / 2) {
    bench_note(env, "%s n=%zu skipped: too large", prim, c->n);
    return CASE_SKIPPED;
  }
  /* the CPU memcpy peer needs a target as large as the input */
  if (!fits(env, prim, c->n, env->cuda ? ws : 2 * ws))
    return CASE_SKIPPED;
  alloc_result a = ws_alloc(env, &c->in, c->n * es, c->t, CLI_SEED + (uint64_t)c->t);
  if (a == ALLOC_OK && !env->cuda)
    a = ws_alloc(env, &c->dst, c->n * es, c->t, CLI_SEED); /* pre-faults every page */
  if (a != ALLOC_OK)
    return a == ALLOC_SKIP ? CASE_SKIPPED : CASE_FAILED;
  bool ok = alloc_small(env, &c->out, 8) && alloc_small(env, &c->peer_out, 8) &&
            alloc_small(env, &c->idx, 8) && alloc_small(env, &c->peer_idx, 8);
  return ok ? CASE_RAN : CASE_FAILED;
}

/* Our result against CUB's. Float SUM orders differ, so they agree to within the bound
 * of a pairwise sum over values in [-1, 1): n * eps * (log2 n + 2). */
static bool values_agree(pp_dtype t, pp_op op, size_t n, const void *a, const void *b) {
  if (op == PP_SUM && (t == PP_F32 || t == PP_F64)) {
    double x, y, eps = t == PP_F32 ? 0x1p-24 : 0x1p-53;
    if (t == PP_F32) {
      float fx, fy;
      memcpy(&fx, a, 4);
      memcpy(&fy, b, 4);
      x = fx;
      y = fy;
    } else {
      memcpy(&x, a, 8);
      memcpy(&y, b, 8);
    }
    return fabs(x - y) <= (double)n * eps * (log2((double)n + 1) + 2);
  }
  return memcmp(a, b, pp_dtype_size(t)) == 0; /* inputs have no NaN and no -0.0 */
}

/* After both timed loops ended on the same slot, compare their outputs. */
static const char *red_check(bench_env *env, red_case *c, const char *prim, bool arg) {
  unsigned char ours[8], peer[8];
  uint64_t idx = 0;
  int64_t peer_idx = 0;
  size_t es = pp_dtype_size(c->t);
  if (!pp_ok(env, pp_copy(env->ctx, ours, c->out, es), "pp_copy (result)") ||
      !pp_ok(env, pp_copy(env->ctx, peer, c->peer_out, es), "pp_copy (CUB result)") ||
      (arg && (!pp_ok(env, pp_copy(env->ctx, &idx, c->idx, 8), "pp_copy (index)") ||
               !pp_ok(env, pp_copy(env->ctx, &peer_idx, c->peer_idx, 8), "pp_copy (CUB index)"))))
    return "-";
  bool same = values_agree(c->t, c->op, c->n, ours, peer) && (!arg || (int64_t)idx == peer_idx);
  if (same)
    return "ok";
  char a[64], b[64];
  cli_format_value(c->t, ours, a, sizeof a);
  cli_format_value(c->t, peer, b, sizeof b);
  bench_fail(env, "%s %s %s n=%zu: parprim gives %s (index %" PRIu64 "), CUB %s (index %" PRId64
                  ")",
             prim, cli_op_string(c->op), pp_dtype_string(c->t), c->n, a, idx, b, peer_idx);
  return "MISMATCH";
}

static bool red_prepare_peer(bench_env *env, red_case *c, bool arg) {
  if (!env->cuda)
    return true;
  int rc = arg ? bench_cub_argreduce_prepare(c->t, c->op, c->n, env->stream)
               : bench_cub_reduce_prepare(c->t, c->op, c->n, env->stream);
  return gpu_ok(env, rc, "CUB temp storage");
}

/* The threaded standard answer for reduce SUM (CPU, TBB in the build): std::reduce with
 * std::execution::par (f32 summed in double, as ours). */
static pp_status call_par_reduce(bench_env *env, void *arg, size_t slot) {
  red_case *c = arg;
  unsigned char out[8];
  if (bench_par_reduce(c->t, ws_slot(&c->in, slot), c->n, out, env->dev.multiprocessors) == 0)
    return PP_OK;
  bench_fail(env, "std::reduce peer failed");
  return PP_ERR_INVALID_ARGUMENT;
}

static case_result red_measure(bench_env *env, red_case *c, const char *prim, bool arg) {
  bench_row r = {.prim = prim, .op = cli_op_string(c->op), .t = c->t, .n = c->n,
                 .bytes_model = "reads n*size", .check = "-"};
  r.bytes = r.peer_bytes = (double)c->n * (double)pp_dtype_size(c->t);
  pp_status s = bench_time(env, arg ? call_argreduce : call_reduce, c, &r.ms);
  if (s == PP_ERR_UNSUPPORTED) {
    char nb[32];
    bench_note(env, "%s %s %s n=%s: not implemented on the %s backend", prim, r.op,
               pp_dtype_string(c->t), size_text(c->n, nb, sizeof nb),
               pp_backend_string(pp_backend_of(env->ctx)));
    return CASE_SKIPPED;
  }
  if (s != PP_OK || !red_prepare_peer(env, c, arg))
    return CASE_FAILED;
  bench_call peer = !env->cuda ? call_host_memcpy : arg ? call_cub_argreduce : call_cub_reduce;
  if (bench_time(env, peer, c, &r.peer_ms) != PP_OK)
    return CASE_FAILED;
  r.peer = env->cuda ? "CUB" : "memcpy";
  if (!env->cuda)
    r.peer_bytes *= 2; /* memcpy reads and writes */
  else
    r.check = red_check(env, c, prim, arg);
  print_row(env, &r);
  if (!env->cuda && !arg && c->op == PP_SUM && bench_cpu_tbb_name()) {
    /* a second row: our time against std::reduce par (its result is not checked) */
    bench_row par = r;
    par.peer = "std::reduce par";
    par.peer_bytes = r.bytes;
    par.same_work = true;
    if (bench_time(env, call_par_reduce, c, &par.peer_ms) == PP_OK) print_row(env, &par);
  }
  return CASE_RAN;
}

static case_result red_case_run(bench_env *env, const char *prim, bool arg, pp_op op,
                                pp_dtype t, size_t n) {
  red_case c = {.op = op, .t = t, .n = n};
  case_result res = red_setup(env, &c, prim);
  if (res == CASE_RAN)
    res = red_measure(env, &c, prim, arg);
  red_teardown(env, &c);
  return res;
}

int bench_run_reduce(bench_env *env, const size_t *sizes, int nsizes) {
  static const pp_dtype others[] = {PP_I32, PP_U32, PP_I64, PP_U64, PP_F64, PP_U8};
  const bench_opts *o = env->o;
  pp_op op = o->has_op ? o->op : PP_SUM;
  pp_dtype first = o->has_dtype ? o->dtype : PP_F32;
  size_t largest = 0;
  for (int i = 0; i < nsizes; i++)
    if (red_case_run(env, "reduce", false, op, first, sizes[i]) == CASE_RAN && sizes[i] > largest)
      largest = sizes[i];
  /* the other types at 2^28 (the size the targets are set at) when it is in the list, and
     at the largest size */
  size_t anchor = (size_t)1 << 28;
  bool anchor_listed = false;
  for (int i = 0; i < nsizes; i++) anchor_listed |= sizes[i] == anchor && anchor != largest;
  for (size_t k = 0; !o->has_dtype && largest && k < sizeof others / sizeof others[0]; k++) {
    if (anchor_listed) red_case_run(env, "reduce", false, op, others[k], anchor);
    red_case_run(env, "reduce", false, op, others[k], largest);
  }
  return 0;
}

int bench_run_argreduce(bench_env *env, const size_t *sizes, int nsizes) {
  const bench_opts *o = env->o;
  if (o->has_op && o->op == PP_SUM) {
    bench_note(env, "argreduce skipped: --op sum does not apply (min or max)");
    return 0;
  }
  pp_dtype t = o->has_dtype ? o->dtype : PP_F32;
  for (int k = PP_MIN; k <= PP_MAX; k++) {
    if (o->has_op && o->op != (pp_op)k)
      continue;
    for (int i = 0; i < nsizes; i++)
      red_case_run(env, "argreduce", true, (pp_op)k, t, sizes[i]);
  }
  return 0;
}

/* ==================================================================================== */
/* memcpy: the roofline reference                                                       */
/* ==================================================================================== */

static pp_status call_pp_copy(bench_env *env, void *arg, size_t slot) {
  red_case *c = arg;
  pp_status s = pp_copy(env->ctx, ws_slot(&c->dst, slot), ws_slot(&c->in, slot),
                        c->n * pp_dtype_size(c->t));
  if (s != PP_OK && s != PP_ERR_UNSUPPORTED)
    pp_ok(env, s, "pp_copy");
  return s;
}

static pp_status call_cuda_memcpy(bench_env *env, void *arg, size_t slot) {
  red_case *c = arg;
  int rc = bench_gpu_memcpy(ws_slot(&c->dst, slot), ws_slot(&c->in, slot),
                            c->n * pp_dtype_size(c->t), env->stream);
  return gpu_ok(env, rc, "cudaMemcpyAsync") ? PP_OK : PP_ERR_DEVICE;
}

static case_result memcpy_case(bench_env *env, pp_dtype t, size_t n) {
  red_case c = {.op = PP_SUM, .t = t, .n = n};
  size_t es = pp_dtype_size(t), slots, stride;
  size_t ws = n <= SIZE_MAX / es ? ws_plan(n * es, &slots, &stride) : 0;
  if (ws == 0 || ws > SIZE_MAX / 2) {
    bench_note(env, "memcpy n=%zu skipped: too large", n);
    return CASE_SKIPPED;
  }
  if (!fits(env, "memcpy", n, 2 * ws))
    return CASE_SKIPPED;
  alloc_result a = ws_alloc(env, &c.in, n * es, t, CLI_SEED);
  if (a == ALLOC_OK)
    a = ws_alloc(env, &c.dst, n * es, t, CLI_SEED + 1);
  case_result res = a == ALLOC_OK ? CASE_RAN : a == ALLOC_SKIP ? CASE_SKIPPED : CASE_FAILED;
  bench_row r = {.prim = "memcpy", .op = "copy", .t = t, .n = n,
                 .bytes_model = "reads+writes 2*n*size", .check = "-",
                 .peer = env->cuda ? "cudaMemcpy" : "memcpy"};
  r.bytes = r.peer_bytes = 2.0 * (double)n * (double)es;
  if (res == CASE_RAN && (bench_time(env, call_pp_copy, &c, &r.ms) != PP_OK ||
                          bench_time(env, env->cuda ? call_cuda_memcpy : call_host_memcpy, &c,
                                     &r.peer_ms) != PP_OK))
    res = CASE_FAILED;
  if (res == CASE_RAN)
    print_row(env, &r);
  red_teardown(env, &c);
  return res;
}

int bench_run_memcpy(bench_env *env, const size_t *sizes, int nsizes) {
  pp_dtype t = env->o->has_dtype ? env->o->dtype : PP_F32;
  for (int i = 0; i < nsizes; i++)
    memcpy_case(env, t, sizes[i]);
  return 0;
}
