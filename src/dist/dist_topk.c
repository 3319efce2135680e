/*
 * dist_topk.c — pp_topk on a distributed context: the k largest (smallest) of the global
 * sequence, with global indices, on every rank.
 *
 * The global top k holds at most min(k, n_r) elements of rank r, and those are rank r's own
 * top min(k, n_r) under the same order (value, then lowest index first; NaN the largest).
 * So each rank selects that many candidates with the backend's top-k, turns their indices
 * global (+ off_r), and an all-gather-v brings every rank's candidates to every rank,
 * concatenated in rank order; one more top-k over the candidates gives the answer. Among
 * equal values the candidates' order is the global-index order (rank order, then each
 * rank's ascending indices), so the final top-k's tie rule (lowest position first) picks
 * the lowest global indices, as on one GPU. Traffic: sum_r min(k, n_r) x (element + 8)
 * bytes per rank.
 *
 * k is checked against the global n here, with the same message on every rank.
 *
 * Agreements (pp_dist_agree): one with the arguments; one after the scratch and the local
 * top-k, before the all-gathers (a collective waits for every rank, so a rank that failed
 * must say so first); one after the final top-k, whose scratch may fail on one rank alone,
 * before anything is written. When the candidates are few (p k of them fit a few MiB) the
 * scratch is taken for p k of them before the first agreement, which then vouches for it:
 * every rank can make the all-gathers whatever its local top-k did, so the middle
 * agreement goes, and a local failure is reported by the last one.
 */
#include "dist_internal.h"

#include <stdlib.h>

/* x rounded up to 16 bytes: where the next array in one scratch block starts */
#define ALIGN16(x) (((x) + 15) & ~(size_t)15)

/* The most scratch taken before the first agreement (p k candidates and the rest). */
#define EARLY_SCRATCH_MAX ((size_t)16 << 20)

/* The scratch block for `mine` own candidates, ncand in all and the k answers: the six
 * arrays' sizes in parts[], their sum in *bytes; false when a size overflows. */
static bool scratch_parts(size_t mine, size_t ncand, size_t k, size_t es, size_t parts[6],
                          size_t *bytes) {
  if (ncand > SIZE_MAX / 16 || k > SIZE_MAX / 16 || mine > SIZE_MAX / 16) return false;
  parts[0] = ALIGN16(mine * es);
  parts[1] = ALIGN16(mine * 8);
  parts[2] = ALIGN16(ncand * es);
  parts[3] = ALIGN16(ncand * 8);
  parts[4] = ALIGN16(k * es);
  parts[5] = ALIGN16(k * 8);
  size_t sum = 0;
  for (int i = 0; i < 6; i++) {
    if (parts[i] > SIZE_MAX - sum) return false;
    sum += parts[i];
  }
  *bytes = sum;
  return true;
}

pp_status pp_dist_topk(pp_context *ctx, pp_status checked, pp_dtype t, const void *in,
                       size_t n, size_t k, bool largest, void *values_out,
                       uint64_t *indices_out) {
  static const char fn[] = "pp_topk";
  if (checked == PP_OK && (!ctx->ops->topk || !ctx->ops->dist_index_map))
    checked = pp_not_implemented(ctx, fn);
  const int p = ctx->dist->nranks;
  const size_t es = pp_dtype_size(t);
  /* few candidates: the scratch for p k of them now, vouched for by the first agreement
     (p, k and the dtype are the same on every rank once it passes, so is `early`) */
  size_t parts[6], scratch_bytes = 0;
  const bool early = checked == PP_OK && (size_t)p <= SIZE_MAX / (k ? k : 1) &&
                     scratch_parts(k, (size_t)p * k, k, es, parts, &scratch_bytes) &&
                     scratch_bytes <= EARLY_SCRATCH_MAX;
  char *scratch = NULL;
  if (early && scratch_bytes) {
    checked = ctx->ops->temp_alloc(ctx, (void **)&scratch, scratch_bytes);
    if (checked != PP_OK) checked = pp_fail(ctx, checked, "%s: %s", fn, ctx->error);
  }
  /* the candidates' counts and offsets, [4][p] */
  size_t *cnt = NULL;
  if (checked == PP_OK) {
    cnt = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : malloc(4 * (size_t)p * sizeof *cnt);
    if (!cnt) checked = pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "%s: no host memory for %d ranks", fn, p);
  }
  const pp_dist_val vals[] = {{"dtype", (uint64_t)t}, {"k", k}, {"largest", (uint64_t)largest},
                              {NULL, n}};
  pp_status st = pp_dist_agree(ctx, fn, checked, vals, 4);
  size_t off = 0, total = 0;
  if (st == PP_OK) st = pp_dist_offsets(ctx, fn, 3, &off, &total);
  if (st == PP_OK && k > total)
    st = pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: k (%zu) > n (%zu)", fn, k, total);
  if (st != PP_OK) {
    if (scratch) ctx->ops->temp_free(ctx, scratch);
    free(cnt);
    return st;
  }

  /* the candidates: c_q = min(k, n_q) from rank q, at cnt[p + q] of the gathered arrays */
  size_t ncand = 0, mine = n < k ? n : k;
  for (int q = 0; q < p; q++) {
    size_t nq = (size_t)pp_dist_value(ctx, q, 3);
    cnt[q] = nq < k ? nq : k;
    cnt[p + q] = ncand;
    ncand += cnt[q]; /* <= p * k, and <= total: no overflow */
  }
  /* one scratch block: my candidates (values, indices), everyone's, the answer (within the
     early block, whose sizes bound these) */
  size_t late_bytes = 0;
  if (st == PP_OK && !scratch_parts(mine, ncand, k, es, parts, &late_bytes))
    st = pp_fail(ctx, PP_ERR_OVERFLOW, "%s: the top-k scratch of %zu candidates overflows size_t",
                 fn, ncand);
  pp_args args = {0};
  const void *din;
  PP_STAGE(PP_ARG_IN, "in", in, n * es, es, din);
  if (st == PP_OK && !early && late_bytes)
    st = ctx->ops->temp_alloc(ctx, (void **)&scratch, late_bytes);
  char *mine_v = NULL, *mine_i = NULL, *all_v = NULL, *all_i = NULL, *out_v = NULL, *out_i = NULL;
  if (scratch) {
    mine_v = scratch;
    mine_i = mine_v + parts[0];
    all_v = mine_i + parts[1];
    all_i = all_v + parts[2];
    out_v = all_i + parts[3];
    out_i = out_v + parts[4];
  }
  /* this rank's candidates, with global indices */
  if (st == PP_OK && mine > 0)
    st = ctx->ops->topk(ctx, t, din, n, mine, largest, mine_v, (uint64_t *)mine_i);
  if (st == PP_OK && mine > 0)
    st = ctx->ops->dist_index_map(ctx, NULL, (const uint64_t *)mine_i, mine, off,
                                  (uint64_t *)mine_i);
  /* the all-gathers: every rank makes them (early: the scratch is there on every rank, so a
     rank whose local work failed sends what its scratch holds and reports at the end) */
  pp_status local = st;
  if (!early) local = st = pp_dist_agree(ctx, fn, st, NULL, 0);
  const bool gather = early || st == PP_OK; /* the same on every rank */
  if (gather) {
    pp_comm *c = ctx->dist->comm;
    for (int q = 0; q < p; q++) { /* byte counts and offsets of the values */
      cnt[2 * p + q] = cnt[q] * es;
      cnt[3 * p + q] = cnt[p + q] * es;
    }
    pp_status g = c->ops->allgatherv(c, ctx, mine_v, mine * es, all_v, cnt + 2 * p, cnt + 3 * p);
    for (int q = 0; q < p; q++) { /* ... and of the indices */
      cnt[2 * p + q] = cnt[q] * 8;
      cnt[3 * p + q] = cnt[p + q] * 8;
    }
    if (g == PP_OK)
      g = c->ops->allgatherv(c, ctx, mine_i, mine * 8, all_i, cnt + 2 * p, cnt + 3 * p);
    st = local != PP_OK ? local : g;
  }
  /* the answer among the candidates, and their global indices */
  if (st == PP_OK && k > 0)
    st = ctx->ops->topk(ctx, t, all_v, ncand, k, largest, out_v, (uint64_t *)out_i);
  if (st == PP_OK && k > 0)
    st = ctx->ops->dist_index_map(ctx, (const uint64_t *)all_i, (const uint64_t *)out_i, k, 0,
                                  (uint64_t *)out_i);
  /* the final top-k may fail on one rank alone (its scratch): every rank says so before any
     writes its outputs */
  if (gather) st = pp_dist_agree(ctx, fn, st, NULL, 0);
  if (st == PP_OK && k > 0) st = ctx->ops->copy(ctx, values_out, out_v, k * es);
  if (st == PP_OK && k > 0 && indices_out) st = ctx->ops->copy(ctx, indices_out, out_i, k * 8);
  if (scratch) ctx->ops->temp_free(ctx, scratch);
  free(cnt);
  return pp_args_finish(ctx, &args, st);
}
