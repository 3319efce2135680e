/*
 * bench_topk.c — `parprim bench topk`: pp_topk and pp_topk_rows (k largest) against CUB
 * on CUDA, on the same inputs in the same process.
 *
 * Cases: for each n of the size list, one array of n values of --dtype (f32 by
 * default) with k = 100 when n <= 2^22 and k = 10, 1000, 100000 above (or --k); then the
 * two row cases, 4096 rows x 32768 with k = 64 and 128 rows x 131072 with k = 1024 (a
 * sixteenth of the rows on the CPU backend). Bytes model: the input read once.
 *
 * Peers: CUB has no top-k, so the peer sorts everything (DeviceRadixSort descending for
 * one array, DeviceSegmentedSort descending per row) and its first k are the answer; our
 * values are compared with them bit for bit. On the CPU the peer is a serial binary-heap
 * selection (f32 only), and for one array a second row against the threaded standard
 * answer, std::nth_element and std::sort of the first k with std::execution::par (TBB),
 * when the build has TBB. The targets set for the H100 and torch.topk's times there are fixed
 * numbers, printed as a note under each row: they were not measured here.
 *
 * One array on CUDA also gets a second row against cub::DeviceTopK (CCCL >= 3.3, built in
 * when cmake/bench_peers.cmake finds it; bench/peer_topk.h), with our time from the
 * first row: MaxPairs with the positions as values, so it writes what pp_topk writes, k
 * values and their indices. Its values come unsorted and, on ties at the k-th, not always
 * the same ones; both are sorted on the host before they are compared with ours.
 */
#include "bench_impl.h"

#ifdef PP_HAVE_CUDA
#include "peer_topk.h"
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_TOPK_SEED 0x746f706bull

typedef struct topk_case {
  pp_dtype t;
  size_t rows, cols, k, es; /* rows == 0: one array of cols */
  bench_ws in;
  void *vals, *peer_out;     /* pp_malloc'd: rows*k ours, the peer's sorted copy (CUDA) */
  uint64_t *idx, *peer_idx;  /* ours; DeviceTopK's (CUDA, one array) */
  float *cpu_peer;           /* CPU peer's result, k (per row) floats */
} topk_case;

static pp_status call_ours(bench_env *env, void *arg, size_t slot) {
  topk_case *c = arg;
  const void *in = ws_slot(&c->in, slot);
  pp_status s = c->rows ? pp_topk_rows(env->ctx, c->t, in, c->rows, c->cols, c->k, true, c->vals, c->idx)
                        : pp_topk(env->ctx, c->t, in, c->cols, c->k, true, c->vals, c->idx);
  if (s != PP_OK && s != PP_ERR_UNSUPPORTED) pp_ok(env, s, c->rows ? "pp_topk_rows" : "pp_topk");
  return s;
}

#ifdef PP_HAVE_CUDA
static pp_status call_cub(bench_env *env, void *arg, size_t slot) {
  topk_case *c = arg;
  const void *in = ws_slot(&c->in, slot);
  int rc = c->rows ? bench_topk_cub_segsort(c->t, in, c->peer_out, c->rows, c->cols, env->stream)
                   : bench_topk_cub_sort(c->t, in, c->peer_out, c->cols, env->stream);
  if (rc != 0) {
    bench_fail(env, "CUB peer: %s", bench_topk_error());
    return PP_ERR_DEVICE;
  }
  return PP_OK;
}
#endif

#ifdef PP_HAVE_CUDA
static pp_status call_cub_topk(bench_env *env, void *arg, size_t slot) {
  topk_case *c = arg;
  if (bench_cub_topk(c->t, ws_slot(&c->in, slot), c->cols, c->k, true, c->peer_out, c->peer_idx,
                     env->stream) != 0) {
    bench_fail(env, "CUB DeviceTopK: %s", bench_cub_topk_error());
    return PP_ERR_DEVICE;
  }
  return PP_OK;
}

#define TOPK_CMP(T)                                                                            \
  static int cmp_##T(const void *a, const void *b) {                                           \
    T x = *(const T *)a, y = *(const T *)b;                                                    \
    return (x > y) - (x < y);                                                                  \
  }
TOPK_CMP(uint8_t)
TOPK_CMP(int32_t)
TOPK_CMP(uint32_t)
TOPK_CMP(int64_t)
TOPK_CMP(uint64_t)
TOPK_CMP(float)
TOPK_CMP(double)

/* The comparison of t's values (-0.0 == +0.0), and element i as a double for messages. */
static int (*cmp_of(pp_dtype t))(const void *, const void *) {
  switch (t) {
  case PP_U8: return cmp_uint8_t;
  case PP_I32: return cmp_int32_t;
  case PP_U32: return cmp_uint32_t;
  case PP_I64: return cmp_int64_t;
  case PP_U64: return cmp_uint64_t;
  case PP_F32: return cmp_float;
  case PP_F64: return cmp_double;
  }
  return cmp_double;
}

/* DeviceTopK's k values, sorted here, against ours sorted the same way, and its indices
 * inside the input. */
static const char *cub_topk_check(bench_env *env, topk_case *c) {
  const size_t bytes = c->k * c->es;
  unsigned char *ours = malloc(bytes), *peer = malloc(bytes);
  uint64_t *idx = malloc(c->k * sizeof(uint64_t));
  const char *verdict = "-";
  if (!ours || !peer || !idx)
    bench_note(env, "topk: no host memory to check DeviceTopK's result");
  else if (pp_ok(env, pp_copy(env->ctx, ours, c->vals, bytes), "pp_copy (values)") &&
           pp_ok(env, pp_copy(env->ctx, peer, c->peer_out, bytes), "pp_copy (DeviceTopK values)") &&
           pp_ok(env, pp_copy(env->ctx, idx, c->peer_idx, c->k * sizeof(uint64_t)),
                 "pp_copy (DeviceTopK indices)")) {
    int (*cmp)(const void *, const void *) = cmp_of(c->t);
    qsort(ours, c->k, c->es, cmp);
    qsort(peer, c->k, c->es, cmp);
    size_t i = 0, j = 0;
    while (i < c->k && cmp(ours + i * c->es, peer + i * c->es) == 0) i++;
    while (j < c->k && idx[j] < c->cols) j++;
    verdict = "ok";
    if (i < c->k) {
      bench_fail(env, "topk k=%zu: sorted value %zu: ours %.9g, DeviceTopK %.9g", c->k, i,
                 cli_value_at(c->t, ours, i), cli_value_at(c->t, peer, i));
      verdict = "MISMATCH";
    } else if (j < c->k) {
      bench_fail(env, "topk k=%zu: DeviceTopK index %zu is %llu, beyond n", c->k, j,
                 (unsigned long long)idx[j]);
      verdict = "MISMATCH";
    }
  }
  free(ours);
  free(peer);
  free(idx);
  return verdict;
}

/* The second row of a one-array case: our time from the first, cub::DeviceTopK's beside it.
 * c->peer_out (n elements) holds its k values. */
static void cub_topk_row(bench_env *env, topk_case *c, const bench_row *ours) {
  const char *name = bench_cub_topk_name();
  if (!name || c->rows || ours->ours_missing) return;
  bench_row r = *ours;
  r.peer = "CUB DeviceTopK";
  r.check = "-";
  if (!pp_ok(env, pp_malloc(env->ctx, (void **)&c->peer_idx, c->k * sizeof(uint64_t)), "pp_malloc"))
    return;
  if (bench_cub_topk_prepare(c->t, c->cols, c->k, true, true, env->stream) != 0) {
    bench_fail(env, "CUB DeviceTopK: %s", bench_cub_topk_error());
    return;
  }
  if (bench_time(env, call_cub_topk, c, &r.peer_ms) != PP_OK) return;
  if (bench_sync(env)) r.check = cub_topk_check(env, c);
  print_row(env, &r);
  bench_note(env, "  %s, pairs (values and indices, as ours): its k come unsorted and, on ties "
                  "at the k-th, not always the same; pp_topk's are sorted and deterministic. "
                  "Target: ratio >= 1.5",
             name);
}
#endif

/* Serial selection with a min-heap of the k largest seen (f32). */
static void heap_down(float *h, size_t k, size_t i) {
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < k && h[l] < h[m]) m = l;
    if (r < k && h[r] < h[m]) m = r;
    if (m == i) return;
    float t = h[i];
    h[i] = h[m];
    h[m] = t;
    i = m;
  }
}

static void heap_topk(const float *x, size_t n, size_t k, float *out) {
  for (size_t i = 0; i < k; i++) out[i] = x[i];
  for (size_t i = k / 2; i-- > 0;) heap_down(out, k, i);
  for (size_t i = k; i < n; i++)
    if (x[i] > out[0]) {
      out[0] = x[i];
      heap_down(out, k, 0);
    }
  /* heap sort: pop the minimum to the back, leaving the largest first */
  for (size_t e = k; e > 1; e--) {
    float t = out[0];
    out[0] = out[e - 1];
    out[e - 1] = t;
    heap_down(out, e - 1, 0);
  }
}

static pp_status call_cpu_peer(bench_env *env, void *arg, size_t slot) {
  topk_case *c = arg;
  const float *in = ws_slot(&c->in, slot);
  size_t rows = c->rows ? c->rows : 1;
  (void)env;
#pragma omp parallel for if (rows > 1)
  for (size_t r = 0; r < rows; r++) heap_topk(in + r * c->cols, c->cols, c->k, c->cpu_peer + r * c->k);
  return PP_OK;
}

/* Our values against the peer's first k of each row, bit for bit. */
static const char *check(bench_env *env, topk_case *c) {
  const size_t rows = c->rows ? c->rows : 1, nk = rows * c->k;
  unsigned char *ours = malloc(nk * c->es), *peer = malloc(nk * c->es);
  const char *verdict = "ok";
  if (!ours || !peer) {
    bench_fail(env, "out of host memory for the check");
    verdict = "MISMATCH";
  } else if (pp_copy(env->ctx, ours, c->vals, nk * c->es) != PP_OK) {
    pp_ok(env, PP_ERR_DEVICE, "pp_copy (results)");
    verdict = "MISMATCH";
  } else {
    if (env->cuda) {
      for (size_t r = 0; r < rows && !strcmp(verdict, "ok"); r++)
        if (pp_copy(env->ctx, peer + r * c->k * c->es, (char *)c->peer_out + r * c->cols * c->es,
                    c->k * c->es) != PP_OK)
          verdict = "MISMATCH";
    } else if (c->cpu_peer) {
      memcpy(peer, c->cpu_peer, nk * c->es);
    } else {
      verdict = "-";
    }
    if (!strcmp(verdict, "ok") && memcmp(ours, peer, nk * c->es) != 0) {
      bench_fail(env, "topk: values differ from the peer's");
      verdict = "MISMATCH";
    }
  }
  free(ours);
  free(peer);
  return verdict;
}

/* The threaded CPU peer of one array: copy, std::nth_element and std::sort of the first k
 * with std::execution::par (TBB; bench/peer_cpu_par.cpp), values only. A second row after
 * ours, with our time from the first; its values are checked against ours. */
typedef struct par_topk {
  topk_case *c;
  void *scratch, *vals;
} par_topk;

static pp_status call_par_topk(bench_env *env, void *arg, size_t slot) {
  par_topk *p = arg;
  if (bench_par_topk(p->c->t, ws_slot(&p->c->in, slot), p->c->cols, p->c->k, true, p->vals,
                     p->scratch, env->dev.multiprocessors) == 0)
    return PP_OK;
  bench_fail(env, "parallel nth_element peer failed");
  return PP_ERR_INVALID_ARGUMENT;
}

static void par_topk_row(bench_env *env, topk_case *c, const bench_row *ours) {
  par_topk p = {c, malloc(c->cols * c->es), malloc(c->k * c->es)};
  unsigned char *mine = malloc(c->k * c->es);
  bench_row r = *ours;
  r.peer = "std::nth_element+sort par";
  r.check = "-";
  if (!p.scratch || !p.vals || !mine) {
    bench_fail(env, "out of host memory");
  } else if (bench_time(env, call_par_topk, &p, &r.peer_ms) == PP_OK) {
    if (!r.ours_missing && call_ours(env, c, last_slot(env)) == PP_OK &&
        pp_copy(env->ctx, mine, c->vals, c->k * c->es) == PP_OK) {
      r.check = memcmp(mine, p.vals, c->k * c->es) == 0 ? "ok" : "MISMATCH";
      if (strcmp(r.check, "ok") != 0) bench_fail(env, "topk: values differ from nth_element's");
    }
    print_row(env, &r);
  }
  free(p.scratch);
  free(p.vals);
  free(mine);
}

static void run_case(bench_env *env, pp_dtype t, size_t rows, size_t cols, size_t k,
                     double target_ms, double torch_ms) {
  topk_case c = {.t = t, .rows = rows, .cols = cols, .k = k, .es = pp_dtype_size(t)};
  const size_t n = (rows ? rows : 1) * cols, nk = (rows ? rows : 1) * k;
  char op[64];
  if (rows)
    snprintf(op, sizeof op, "rows%zux%zu-k%zu", rows, cols, k);
  else
    snprintf(op, sizeof op, "k%zu", k);
  if (!fits(env, "topk", n, 2 * n * c.es + nk * (c.es + 8) + n * c.es / 2)) return;
  if (ws_alloc(env, &c.in, n * c.es, t, BENCH_TOPK_SEED + n) != ALLOC_OK) return;
  bench_row r = {.prim = "topk", .op = op, .t = t, .n = n, .bytes_model = "reads n*size",
                 .bytes = (double)n * (double)c.es, .peer_bytes = (double)n * (double)c.es,
                 .check = "-"};
  if (!pp_ok(env, pp_malloc(env->ctx, &c.vals, nk * c.es), "pp_malloc") ||
      !pp_ok(env, pp_malloc(env->ctx, (void **)&c.idx, nk * 8), "pp_malloc"))
    goto done;
  pp_status s = bench_time(env, call_ours, &c, &r.ms);
  if (s == PP_ERR_UNSUPPORTED) r.ours_missing = true;
  else if (s != PP_OK) goto done;
#ifdef PP_HAVE_CUDA
  if (env->cuda) {
    r.peer = rows ? "CUB DeviceSegmentedSort (desc)" : "CUB DeviceRadixSort (desc)";
    if (!pp_ok(env, pp_malloc(env->ctx, &c.peer_out, n * c.es), "pp_malloc")) goto done;
    if (bench_topk_cub_prepare(t, n, rows, env->stream) != 0) {
      bench_fail(env, "CUB peer: %s", bench_topk_error());
      goto done;
    }
    if (bench_time(env, call_cub, &c, &r.peer_ms) != PP_OK) goto done;
  }
#endif
  if (!env->cuda) {
    r.peer = t == PP_F32 ? "serial heap selection" : "none (f32 only)";
    r.same_work = true;
    if (t == PP_F32) {
      c.cpu_peer = malloc(nk * sizeof(float));
      if (!c.cpu_peer) {
        bench_fail(env, "out of host memory");
        goto done;
      }
      if (bench_time(env, call_cpu_peer, &c, &r.peer_ms) != PP_OK) goto done;
    }
  }
  /* both last ran on the same slot: compare */
  if (!r.ours_missing) {
    pp_status a = call_ours(env, &c, last_slot(env));
    if (a == PP_OK && bench_sync(env)) r.check = check(env, &c);
  }
  print_row(env, &r);
  if (target_ms > 0 && env->cuda)
    bench_note(env, "  target on the H100: <= %.2f ms (ours: %.4f ms); torch.topk there: %.3f ms",
               target_ms, r.ms, torch_ms);
#ifdef PP_HAVE_CUDA
  if (env->cuda) cub_topk_row(env, &c, &r);
#endif
  if (!env->cuda && !rows && bench_cpu_tbb_name()) par_topk_row(env, &c, &r);
done:
#ifdef PP_HAVE_CUDA
  if (c.peer_out) pp_ok(env, pp_free(env->ctx, c.peer_out), "pp_free");
  if (c.peer_idx) pp_ok(env, pp_free(env->ctx, c.peer_idx), "pp_free");
#endif
  if (c.vals) pp_ok(env, pp_free(env->ctx, c.vals), "pp_free");
  if (c.idx) pp_ok(env, pp_free(env->ctx, c.idx), "pp_free");
  free(c.cpu_peer);
  ws_free(env, &c.in);
}

int bench_run_topk(bench_env *env, const size_t *sizes, int nsizes) {
  const bench_opts *o = env->o;
  const pp_dtype t = o->has_dtype ? o->dtype : PP_F32;
  const bool f32 = t == PP_F32;
#ifdef PP_HAVE_CUDA
  if (env->cuda && !bench_cub_topk_name())
    bench_note(env, "peer CUB DeviceTopK missing: %s", bench_cub_topk_error());
#endif
  for (int i = 0; i < nsizes; i++) {
    const size_t n = sizes[i];
    static const size_t big_ks[] = {10, 1000, 100000};
    size_t ks[3] = {100, 0, 0};
    int nks = 1;
    if (o->k) ks[0] = o->k;
    else if (n > ((size_t)1 << 22)) {
      memcpy(ks, big_ks, sizeof ks);
      nks = 3;
    }
    for (int q = 0; q < nks; q++) {
      if (ks[q] > n) continue;
      double target = 0, torch = 0;
      if (f32 && n == ((size_t)1 << 28) && !o->k) target = 1.0, torch = 5.3;
      if (f32 && n == ((size_t)1 << 20) && !o->k) target = 0.05, torch = 0.139;
      run_case(env, t, 0, n, ks[q], target, torch);
    }
  }
  /* the row cases */
  const size_t scale = env->cuda ? 1 : 16;
  run_case(env, t, 4096 / scale, 32768, o->k ? o->k : 64, f32 && !o->k && env->cuda ? 0.45 : 0, 1.77);
  run_case(env, t, 128 / scale, 131072, o->k ? o->k : 1024, f32 && !o->k && env->cuda ? 0.1 : 0, 0.32);
#ifdef PP_HAVE_CUDA
  if (env->cuda) {
    bench_topk_release();
    bench_cub_topk_release();
  }
#endif
  return 0;
}
