/*
 * bench_merge.c — `parprim bench merge`: two sorted halves of n against CUB's
 * DeviceMerge::MergeKeys on CUDA and std::merge on the CPU (peer_std.cpp).
 */
#include "bench_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ==================================================================================== */
/* merge: two sorted halves of n                                                        */
/* ==================================================================================== */

typedef struct merge_case {
  pp_dtype t;
  size_t n, na, nb, es;
  bool desc;
  bench_ws in, out, peer_out; /* in: per slot, a (na elements) then b (nb), each sorted */
} merge_case;

/* Element j of a sorted run of `count` values: x = (k + u_k) / count with k = j (count-1-j
 * when descending) and u_k uniform in [0, 1) is monotone in j, and so is its image in t:
 * -1 + 2x for floats, x spread over the whole range for integers. Runs from two seeds
 * interleave at random, with ties where images round together. */
static void store_sorted(pp_dtype t, void *dst, size_t i, size_t j, size_t count, uint64_t key,
                         bool desc) {
  size_t k = desc ? count - 1 - j : j, es = pp_dtype_size(t);
  double u = (double)(cli_splitmix64(key + k) >> 11) * 0x1p-53;
  double x = ((double)k + u) / (double)count;
  if (t == PP_F32) {
    ((float *)dst)[i] = (float)(2.0 * x - 1.0);
  } else if (t == PP_F64) {
    ((double *)dst)[i] = 2.0 * x - 1.0;
  } else {
    int bits = (int)es * 8;
    double top = ldexp(1.0, bits), scaled = ldexp(x, bits);
    uint64_t v = scaled >= top ? UINT64_MAX >> (64 - bits) : (uint64_t)scaled;
    if (t == PP_I32 || t == PP_I64)
      v ^= UINT64_C(1) << (bits - 1); /* bits of v - 2^(bits-1): the same order, signed */
    memcpy((char *)dst + i * es, &v, es); /* little-endian hosts */
  }
}

/* Every slot gets its own pair of runs; generated in host chunks like ws_fill. */
static bool ws_fill_sorted(bench_env *env, merge_case *c) {
  size_t es = c->es, chunk = FILL_CHUNK / es, longest = c->na > c->nb ? c->na : c->nb;
  void *host = malloc((longest < chunk ? longest : chunk) * es + 1);
  if (!host) {
    bench_fail(env, "out of host memory staging the input");
    return false;
  }
  bool ok = true;
  for (size_t slot = 0; ok && slot < c->in.slots; slot++)
    for (int part = 0; ok && part < 2; part++) {
      size_t count = part ? c->nb : c->na;
      char *base = (char *)ws_slot(&c->in, slot) + (part ? c->na * es : 0);
      uint64_t key = cli_splitmix64(CLI_SEED + 2 * (uint64_t)slot + (uint64_t)part);
      for (size_t first = 0; ok && first < count; first += chunk) {
        size_t cnt = count - first < chunk ? count - first : chunk;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (cnt > 65536)
#endif
        for (size_t i = 0; i < cnt; i++)
          store_sorted(c->t, host, i, first + i, count, key, c->desc);
        ok = pp_ok(env, pp_copy(env->ctx, base + first * es, host, cnt * es), "pp_copy (input)");
      }
    }
  free(host);
  return ok;
}

static pp_status call_merge(bench_env *env, void *arg, size_t slot) {
  merge_case *c = arg;
  const char *in = ws_slot(&c->in, slot);
  return ours_status(env,
                     pp_merge(env->ctx, c->t, in, c->na, in + c->na * c->es, c->nb,
                              ws_slot(&c->out, slot), c->desc ? PP_DESCENDING : PP_ASCENDING),
                     "pp_merge");
}

static pp_status call_cub_merge(bench_env *env, void *arg, size_t slot) {
  merge_case *c = arg;
  const char *in = ws_slot(&c->in, slot);
  return gpu_status(env,
                    bench_cub_merge(c->t, c->desc, in, c->na, in + c->na * c->es, c->nb,
                                    ws_slot(&c->peer_out, slot), env->stream),
                    "CUB merge");
}

static pp_status call_std_merge(bench_env *env, void *arg, size_t slot) {
  merge_case *c = arg;
  const char *in = ws_slot(&c->in, slot);
  if (bench_std_merge(c->t, c->desc, in, c->na, in + c->na * c->es, c->nb,
                      ws_slot(&c->peer_out, slot)) == 0)
    return PP_OK;
  bench_fail(env, "std::merge peer: unsupported type");
  return PP_ERR_INVALID_ARGUMENT;
}

static bool merge_ready(bench_env *env, void *arg) {
  merge_case *c = arg;
  return gpu_ok(env, bench_cub_merge_prepare(c->t, c->desc, c->na, c->nb, env->stream),
                "CUB temp storage");
}

/* Sorted, and the peer's keys (-0.0 == +0.0: CUB's merge is not stable). */
static const char *merge_check(bench_env *env, void *arg, bench_row *r) {
  merge_case *c = arg;
  size_t slot = last_slot(env);
  return check_sorted_keys(env, r, ws_slot(&c->out, slot), ws_slot(&c->peer_out, slot), c->n,
                           c->desc);
}

static case_result merge_setup(bench_env *env, merge_case *c) {
  size_t slots, stride;
  if (c->n > SIZE_MAX / c->es) {
    bench_note(env, "merge n=%zu skipped: n * %zu overflows size_t", c->n, c->es);
    return CASE_SKIPPED;
  }
  size_t ws = ws_plan(c->n * c->es, &slots, &stride);
  if (ws == 0 || ws > SIZE_MAX / 3) {
    bench_note(env, "merge n=%zu skipped: too large", c->n);
    return CASE_SKIPPED;
  }
  if (!fits(env, "merge", c->n, 3 * ws))
    return CASE_SKIPPED;
  alloc_result a = ws_alloc_fill(env, &c->in, c->n * c->es, false, c->t, 0);
  if (a == ALLOC_OK && !ws_fill_sorted(env, c))
    a = ALLOC_FAIL;
  if (a == ALLOC_OK)
    a = ws_alloc(env, &c->out, c->n * c->es, c->t, CLI_SEED + 7);
  if (a == ALLOC_OK)
    a = ws_alloc(env, &c->peer_out, c->n * c->es, c->t, CLI_SEED + 8);
  return a == ALLOC_OK ? CASE_RAN : a == ALLOC_SKIP ? CASE_SKIPPED : CASE_FAILED;
}

int bench_run_merge(bench_env *env, const size_t *sizes, int nsizes) {
  const bench_opts *o = env->o;
  pp_dtype t = o->has_dtype ? o->dtype : PP_F32;
  for (int i = 0; i < nsizes; i++) {
    size_t n = sizes[i];
    merge_case c = {.t = t, .n = n, .na = n / 2, .nb = n - n / 2, .es = pp_dtype_size(t),
                    .desc = o->desc};
    bench_row r = {.prim = "merge", .op = o->desc ? "desc" : "asc", .t = t, .n = n,
                   .bytes_model = "reads+writes 2*n*size", .check = "-", .same_work = true,
                   .peer = env->cuda ? "CUB" : "std::merge"};
    r.bytes = r.peer_bytes = 2.0 * (double)n * (double)c.es;
    case_hooks h = {.ours = call_merge, .peer = env->cuda ? call_cub_merge : call_std_merge,
                    .peer_ready = env->cuda ? merge_ready : NULL, .check = merge_check};
    case_result res = merge_setup(env, &c);
    if (res == CASE_RAN)
      measure_case(env, &r, &h, &c);
    bench_ws *const ws[] = {&c.in, &c.out, &c.peer_out};
    ws_free_list(env, ws, COUNT_OF(ws));
  }
  return 0;
}
