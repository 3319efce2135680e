/*
 * bench_sort.c — `parprim bench sort`: the radix sort (keys and pairs) against CUB's
 * DeviceRadixSort, and the comparison sorts (merge, sample, quick) against CUB's
 * DeviceMergeSort; on the CPU against std::sort / std::stable_sort (peer_std.cpp).
 * Sorting is in place, so every run starts from a fresh copy of the unsorted input.
 */
#include "bench_impl.h"

#include <stdlib.h>
#include <string.h>

/* ==================================================================================== */
/* sort: in place, so every run starts from a fresh copy of the unsorted input          */
/* ==================================================================================== */

typedef struct sort_case {
  pp_dtype t;
  size_t n, ks, vs;                  /* key size; value size, 0 for keys only */
  bool desc;
  pp_sort_algo algo;                 /* AUTO: the radix sort, CUB's radix sort as the peer;
                                        the comparison sorts: CUB's merge sort (keys only) */
  void *keys_src, *vals_src;         /* the unsorted input, never written after setup */
  void *keys, *vals;                 /* ours, sorted in place */
  void *peer_keys[2], *peer_vals[2]; /* CUB's double buffer; the CPU peer sorts [0] */
  int peer_current;                  /* which of CUB's buffers holds its result */
  void *scratch;                     /* CPU pairs peer: packed records */
} sort_case;

static pp_status sort_refill(bench_env *env, sort_case *c, void *keys, void *vals) {
  pp_status s = refill(env, keys, c->keys_src, c->n * c->ks);
  if (s == PP_OK && c->vs)
    s = refill(env, vals, c->vals_src, c->n * c->vs);
  return s;
}

static pp_status prep_sort(bench_env *env, void *arg, size_t slot) {
  sort_case *c = arg;
  (void)slot;
  return sort_refill(env, c, c->keys, c->vals);
}

static pp_status prep_peer_sort(bench_env *env, void *arg, size_t slot) {
  sort_case *c = arg;
  (void)slot;
  return sort_refill(env, c, c->peer_keys[0], c->peer_vals[0]);
}

static pp_status call_sort(bench_env *env, void *arg, size_t slot) {
  sort_case *c = arg;
  pp_sort_opts o = {c->desc ? PP_DESCENDING : PP_ASCENDING, c->algo};
  (void)slot;
  return ours_status(env, pp_sort(env->ctx, c->t, c->keys, c->vs ? c->vals : NULL, c->vs, c->n, &o),
                     "pp_sort");
}

/* CUB sorts out of place between the two buffers of its DoubleBuffer (keys start in
 * [0]); only the sort is timed, as for ours, and the refill of [0] happens outside the
 * clock. CUB's temporary storage was sized before (sort_ready). */
static pp_status call_cub_sort(bench_env *env, void *arg, size_t slot) {
  sort_case *c = arg;
  (void)slot;
  if (c->algo != PP_SORT_AUTO) { /* in place in [0] */
    c->peer_current = 0;
    return gpu_status(env, bench_cub_merge_sort(c->t, c->peer_keys[0], c->n, c->desc, env->stream),
                      "CUB merge sort");
  }
  return gpu_status(env,
                    bench_cub_sort(c->t, c->peer_keys, c->peer_vals, c->vs, c->n, c->desc,
                                   &c->peer_current, env->stream),
                    "CUB radix sort");
}

static pp_status call_std_sort(bench_env *env, void *arg, size_t slot) {
  sort_case *c = arg;
  (void)slot;
  if (bench_std_sort(c->t, c->peer_keys[0], c->vs ? c->peer_vals[0] : NULL, c->vs, c->n,
                     c->desc, c->scratch) == 0)
    return PP_OK;
  bench_fail(env, "std::sort peer: unsupported key type or value size");
  return PP_ERR_INVALID_ARGUMENT;
}

/* The threaded standard answer (CPU, TBB in the build): std::sort / std::stable_sort with
 * std::execution::par into the peer's buffer, as call_std_sort does serially. */
static pp_status call_par_sort(bench_env *env, void *arg, size_t slot) {
  sort_case *c = arg;
  (void)slot;
  if (bench_par_sort(c->t, c->peer_keys[0], c->vs ? c->peer_vals[0] : NULL, c->vs, c->n, c->desc,
                     c->scratch, env->dev.multiprocessors) == 0)
    return PP_OK;
  bench_fail(env, "parallel std::sort peer failed");
  return PP_ERR_INVALID_ARGUMENT;
}

static bool sort_ready(bench_env *env, void *arg) {
  sort_case *c = arg;
  if (c->algo != PP_SORT_AUTO)
    return gpu_ok(env, bench_cub_merge_sort_prepare(c->t, c->desc, c->n, env->stream),
                  "CUB merge sort temp storage");
  return gpu_ok(env, bench_cub_sort_prepare(c->t, c->vs, c->desc, c->n, env->stream),
                "CUB temp storage");
}

/* Ours must be sorted and hold the peer's keys (-0.0 == +0.0) and, for pairs, its values
 * bit for bit: both sorts are stable, and the generated keys hold no -0.0, the one case
 * where two stable sorts could place equal keys' values differently. */
static const char *sort_check(bench_env *env, void *arg, bench_row *r) {
  sort_case *c = arg;
  int cur = env->cuda ? c->peer_current : 0;
  size_t n = c->n, bad;
  const char *res = check_sorted_keys(env, r, c->keys, c->peer_keys[cur], n, c->desc);
  if (c->vs && strcmp(res, "ok") == 0) {
    void *got = host_copy(env, c->vals, n * c->vs, "pp_copy (values)");
    void *want = got ? host_copy(env, c->peer_vals[cur], n * c->vs, "pp_copy (peer values)") : NULL;
    if (!want)
      res = "-";
    else if ((bad = first_difference(got, want, n, c->vs)) < n)
      res = mismatch(env, r, "keys agree, value %zu differs", bad);
    free(got);
    free(want);
  }
  return res;
}

static void sort_teardown(bench_env *env, sort_case *c) {
  void **const all[] = {&c->keys_src, &c->vals_src, &c->keys, &c->vals, &c->peer_keys[0],
                        &c->peer_keys[1], &c->peer_vals[0], &c->peer_vals[1], &c->scratch};
  free_small_list(env, all, COUNT_OF(all));
}

/* Only the input is generated: every other buffer is written by the refill (or the peer)
 * in the warm-up before any timed run reads it. */
static case_result sort_setup(bench_env *env, sort_case *c) {
  size_t rec = c->ks + c->vs, n = c->n;
  size_t scratch = !env->cuda && c->vs ? bench_std_sort_scratch_bytes(c->t, c->vs, n) : 0;
  if (n > SIZE_MAX / 8 / rec || scratch > SIZE_MAX / 2) {
    bench_note(env, "sort n=%zu skipped: too large", n);
    return CASE_SKIPPED;
  }
  /* input, ours, and the peer's one (CPU) or two (CUB) buffers */
  if (!fits(env, "sort", n, (env->cuda ? 4 : 3) * n * rec + scratch))
    return CASE_SKIPPED;
  pp_dtype vt = c->vs == 8 ? PP_U64 : PP_U32;
  alloc_result a = flat_alloc(env, &c->keys_src, n * c->ks, true, c->t, CLI_SEED + (uint64_t)c->t);
  if (a == ALLOC_OK)
    a = flat_alloc(env, &c->keys, n * c->ks, false, c->t, 0);
  if (a == ALLOC_OK)
    a = flat_alloc(env, &c->peer_keys[0], n * c->ks, false, c->t, 0);
  if (a == ALLOC_OK && env->cuda)
    a = flat_alloc(env, &c->peer_keys[1], n * c->ks, false, c->t, 0);
  if (a == ALLOC_OK && c->vs)
    a = flat_alloc(env, &c->vals_src, n * c->vs, true, vt, CLI_SEED + 50);
  if (a == ALLOC_OK && c->vs)
    a = flat_alloc(env, &c->vals, n * c->vs, false, vt, 0);
  if (a == ALLOC_OK && c->vs)
    a = flat_alloc(env, &c->peer_vals[0], n * c->vs, false, vt, 0);
  if (a == ALLOC_OK && c->vs && env->cuda)
    a = flat_alloc(env, &c->peer_vals[1], n * c->vs, false, vt, 0);
  if (a == ALLOC_OK && scratch)
    a = flat_alloc(env, &c->scratch, scratch, false, PP_U8, 0);
  return a == ALLOC_OK ? CASE_RAN : a == ALLOC_SKIP ? CASE_SKIPPED : CASE_FAILED;
}

static case_result sort_case_run(bench_env *env, pp_dtype t, size_t vs, size_t n, bool desc,
                                 pp_sort_algo algo) {
  static const char *const ops[2][2] = {{"keys", "keys-desc"}, {"pairs", "pairs-desc"}};
  /* the comparison sorts, keys only: [algo - PP_SORT_MERGE][desc] */
  static const char *const algo_ops[3][2] = {
      {"merge", "merge-desc"}, {"sample", "sample-desc"}, {"quick", "quick-desc"}};
  const bool radix = algo == PP_SORT_AUTO;
  sort_case c = {.t = t, .n = n, .ks = pp_dtype_size(t), .vs = vs, .desc = desc, .algo = algo};
  bench_row r = {.prim = "sort", .op = radix ? ops[vs != 0][desc] : algo_ops[algo - PP_SORT_MERGE][desc],
                 .t = t, .n = n, .bytes_model = "n keys per run", .check = "-", .unit = "Gkeys/s",
                 .same_work = true,
                 .peer = env->cuda ? (radix ? "CUB" : "CUB merge sort")
                                   : vs ? "std::stable_sort" : "std::sort"};
  r.bytes = r.peer_bytes = (double)n; /* the rate counts keys */
  case_hooks h = {.ours_prep = prep_sort, .ours = call_sort, .peer_prep = prep_peer_sort,
                  .peer = env->cuda ? call_cub_sort : call_std_sort,
                  .peer_ready = env->cuda ? sort_ready : NULL, .check = sort_check};
  case_result res = sort_setup(env, &c);
  if (res == CASE_RAN)
    res = measure_case(env, &r, &h, &c);
  if (res == CASE_RAN && !env->cuda && radix && bench_cpu_tbb_name()) {
    /* a second row: our time from the first against the parallel standard sort */
    bench_row par = r;
    par.peer = vs ? "std::stable_sort par" : "std::sort par";
    if (bench_time_prep(env, prep_peer_sort, call_par_sort, &c, &par.peer_ms) == PP_OK) {
      par.check = sort_check(env, &c, &par);
      print_row(env, &par);
    }
  }
  sort_teardown(env, &c);
  return res;
}

/* Default: u32 keys (the anchor) at every size, then f32 keys, u64 keys and u32/u32 pairs
 * up to 2^28, where they would only add minutes beyond. --dtype / --pairs pick one.
 * Then the comparison sorts (merge, sample, quick: keys only, u32 and f32 or --dtype) at
 * 2^24 and 2^28 (or the sizes given), against CUB's merge sort. */
int bench_run_sort(bench_env *env, const size_t *sizes, int nsizes) {
  typedef struct sort_variant {
    pp_dtype t;
    size_t vs;
  } sort_variant;
  static const sort_variant defaults[] = {{PP_U32, 0}, {PP_F32, 0}, {PP_U64, 0}, {PP_U32, 4}};
  const bench_opts *o = env->o;
  bool chosen = o->has_dtype || o->pairs;
  sort_variant one = {o->has_dtype ? o->dtype : PP_U32, o->pairs ? 4 : 0};
  size_t nv = chosen ? 1 : sizeof defaults / sizeof defaults[0];
  for (size_t v = 0; v < nv; v++) {
    sort_variant var = chosen ? one : defaults[v];
    for (int i = 0; i < nsizes; i++) {
      if (!chosen && v > 0 && !o->nsizes && sizes[i] > ANCHOR_N)
        continue;
      sort_case_run(env, var.t, var.vs, sizes[i], o->desc, PP_SORT_AUTO);
    }
  }
  static const pp_sort_algo algos[] = {PP_SORT_MERGE, PP_SORT_SAMPLE, PP_SORT_QUICK};
  static const pp_dtype algo_types[] = {PP_U32, PP_F32};
  for (size_t a = 0; a < sizeof algos / sizeof algos[0] && !o->pairs; a++)
    for (size_t v = 0; v < (o->has_dtype ? 1 : sizeof algo_types / sizeof algo_types[0]); v++)
      for (int i = 0; i < nsizes; i++) {
        if (!o->nsizes && sizes[i] != P2(24) && sizes[i] != P2(28))
          continue;
        sort_case_run(env, o->has_dtype ? o->dtype : algo_types[v], 0, sizes[i], o->desc, algos[a]);
      }
  return 0;
}
