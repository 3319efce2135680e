/*
 * bench_harness.c — the machinery every family of `parprim bench` runs on
 * (bench_impl.h): working sets that rotate past the caches, the timing protocol, one
 * measurement (ours, the peer, the check), and the host-side helpers the checks share.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif


/* ==================================================================================== */
/* Memory: working sets that rotate past the caches                                     */
/* ==================================================================================== */


size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

/* 0 when the working set for `bytes` per input cannot even be sized. */
size_t ws_plan(size_t bytes, size_t *slots, size_t *stride) {
  *stride = round_up(bytes, SLOT_ALIGN);
  *slots = bytes >= ROTATE_BYTES ? 1 : ROTATE_BYTES / *stride + 1;
  if (*stride < bytes || *slots > SIZE_MAX / *stride)
    return 0;
  return *slots * *stride;
}

void *ws_slot(const bench_ws *w, size_t slot) {
  return w->base + (slot % w->slots) * w->stride;
}

/* Available memory where the backend allocates: device memory on CUDA, MemAvailable on
 * the CPU; 0 when unknown (then only allocation failures skip a size). */
static size_t available_bytes(bench_env *env) {
  if (env->cuda) {
    size_t free_b = 0, total_b = 0;
    return bench_gpu_mem_info(&free_b, &total_b) == 0 ? free_b : 0;
  }
  FILE *f = fopen("/proc/meminfo", "r");
  char line[256];
  unsigned long long kib = 0;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
      break;
  if (f)
    fclose(f);
  return (size_t)kib * 1024;
}

bool fits(bench_env *env, const char *prim, size_t n, size_t need) {
  size_t avail = available_bytes(env);
  /* headroom for the library's and CUB's temporaries and, on the CPU, everything else */
  if (avail == 0 || need <= avail / 10 * 8)
    return true;
  char nb[32];
  bench_note(env, "%s n=%s skipped: needs %.2f GiB, %.2f GiB available", prim,
             size_text(n, nb, sizeof nb), (double)need / (1u << 30),
             (double)avail / (1u << 30));
  return false;
}

/* Generates the whole working set (padding too) in host chunks, so host memory stays
 * small however large the input is. */
static bool ws_fill(bench_env *env, bench_ws *w, pp_dtype t, uint64_t seed) {
  size_t es = pp_dtype_size(t);
  size_t total = w->bytes / es, chunk = FILL_CHUNK / es;
  void *host = malloc((total < chunk ? total : chunk) * es);
  if (!host) {
    bench_fail(env, "out of host memory staging the input");
    return false;
  }
  bool ok = true;
  for (size_t first = 0; ok && first < total; first += chunk) {
    size_t cnt = total - first < chunk ? total - first : chunk;
    cli_fill_random(t, host, cnt, seed, first);
    ok = pp_ok(env, pp_copy(env->ctx, w->base + first * es, host, cnt * es), "pp_copy (input)");
  }
  free(host);
  return ok;
}

/* Plans and allocates the slots; fills them with random t when fill is set. */
alloc_result ws_alloc_fill(bench_env *env, bench_ws *w, size_t bytes, bool fill,
                           pp_dtype t, uint64_t seed) {
  w->bytes = ws_plan(bytes, &w->slots, &w->stride);
  void *p = NULL;
  pp_status s = pp_malloc(env->ctx, &p, w->bytes);
  if (s == PP_ERR_OUT_OF_MEMORY) {
    bench_note(env, "skipped: pp_malloc of %.2f GiB failed (%s)", (double)w->bytes / (1u << 30),
               pp_last_error(env->ctx));
    return ALLOC_SKIP;
  }
  if (!pp_ok(env, s, "pp_malloc (input)"))
    return ALLOC_FAIL;
  w->base = p;
  return !fill || ws_fill(env, w, t, seed) ? ALLOC_OK : ALLOC_FAIL;
}

alloc_result ws_alloc(bench_env *env, bench_ws *w, size_t bytes, pp_dtype t,
                      uint64_t seed) {
  return ws_alloc_fill(env, w, bytes, true, t, seed);
}

void ws_free(bench_env *env, bench_ws *w) {
  if (w->base)
    pp_ok(env, pp_free(env->ctx, w->base), "pp_free");
  w->base = NULL;
}

void ws_free_list(bench_env *env, bench_ws *const *ws, size_t n) {
  for (size_t i = 0; i < n; i++)
    ws_free(env, ws[i]);
}

void parallel_memcpy(void *dst, const void *src, size_t bytes) {
#ifdef _OPENMP
  int parts = omp_get_max_threads();
  size_t chunk = round_up((bytes + (size_t)parts - 1) / (size_t)parts, 4096);
#pragma omp parallel for schedule(static)
  for (int i = 0; i < parts; i++) {
    size_t off = (size_t)i * chunk;
    if (off < bytes)
      memcpy((char *)dst + off, (const char *)src + off, bytes - off < chunk ? bytes - off : chunk);
  }
#else
  memcpy(dst, src, bytes);
#endif
}

bool alloc_small(bench_env *env, void **p, size_t bytes) {
  return pp_ok(env, pp_malloc(env->ctx, p, bytes), "pp_malloc (output)");
}

void free_small(bench_env *env, void **p) {
  if (*p)
    pp_ok(env, pp_free(env->ctx, *p), "pp_free");
  *p = NULL;
}

void free_small_list(bench_env *env, void **const *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    free_small(env, p[i]);
}

/* One pp_malloc'd buffer; filled with random t when fill is set. */
alloc_result flat_alloc(bench_env *env, void **p, size_t bytes, bool fill, pp_dtype t,
                        uint64_t seed) {
  pp_status s = pp_malloc(env->ctx, p, bytes ? bytes : 1);
  if (s == PP_ERR_OUT_OF_MEMORY) {
    bench_note(env, "skipped: pp_malloc of %.2f GiB failed (%s)", (double)bytes / (1u << 30),
               pp_last_error(env->ctx));
    return ALLOC_SKIP;
  }
  if (!pp_ok(env, s, "pp_malloc"))
    return ALLOC_FAIL;
  bench_ws w = {.base = *p, .slots = 1, .stride = bytes, .bytes = bytes};
  return !fill || ws_fill(env, &w, t, seed) ? ALLOC_OK : ALLOC_FAIL;
}

/* ==================================================================================== */
/* Timing                                                                               */
/* ==================================================================================== */


bool bench_sync(bench_env *env) {
  if (env->cuda)
    return gpu_ok(env, bench_gpu_stream_sync(env->stream), "stream synchronize");
  return pp_ok(env, pp_synchronize(env->ctx), "pp_synchronize");
}

/* prep (may be NULL) runs first, outside the clock: on the CPU it has returned before the
 * clock starts; on CUDA it is queued on the stream before the start event, so the event
 * is reached only once prep's work is done. */
static pp_status time_one(bench_env *env, bench_call prep, bench_call call, void *arg,
                          size_t slot, double *ms) {
  if (prep) {
    pp_status s = prep(env, arg, slot);
    if (s != PP_OK)
      return s;
  }
  if (!env->cuda) {
    double t0 = cli_now_ms();
    pp_status s = call(env, arg, slot);
    if (s == PP_OK && !pp_ok(env, pp_synchronize(env->ctx), "pp_synchronize"))
      s = PP_ERR_DEVICE;
    *ms = cli_now_ms() - t0;
    return s;
  }
  if (!gpu_ok(env, bench_gpu_timer_start(env->timer, env->stream), "event record"))
    return PP_ERR_DEVICE;
  pp_status s = call(env, arg, slot);
  if (s != PP_OK)
    return s;
  if (!gpu_ok(env, bench_gpu_timer_stop(env->timer, env->stream), "event record") ||
      !gpu_ok(env, bench_gpu_timer_elapsed_ms(env->timer, ms), "event elapsed time"))
    return PP_ERR_DEVICE;
  return PP_OK;
}

/* Warm-up, then reps timed runs over slots WARMUP_RUNS, WARMUP_RUNS+1, ...; ours and the
 * peer get the same sequence, so they read the same slots and end on the same one
 * (last_slot). prep, when not NULL, runs before every run (warm-up too) outside the clock. */
pp_status bench_time_prep(bench_env *env, bench_call prep, bench_call call, void *arg,
                          double *median_ms) {
  int reps = env->o->reps;
  double *ms = malloc((size_t)reps * sizeof *ms);
  if (!ms) {
    bench_fail(env, "out of host memory");
    return PP_ERR_OUT_OF_MEMORY;
  }
  pp_status s = PP_OK;
  for (size_t w = 0; s == PP_OK && w < WARMUP_RUNS; w++) {
    if (prep)
      s = prep(env, arg, w);
    if (s == PP_OK)
      s = call(env, arg, w);
  }
  if (s == PP_OK && !bench_sync(env))
    s = PP_ERR_DEVICE;
  for (int r = 0; s == PP_OK && r < reps; r++)
    s = time_one(env, prep, call, arg, WARMUP_RUNS + (size_t)r, &ms[r]);
  if (s == PP_OK)
    *median_ms = cli_median(ms, (size_t)reps);
  free(ms);
  return s;
}

pp_status bench_time(bench_env *env, bench_call call, void *arg, double *median_ms) {
  return bench_time_prep(env, NULL, call, arg, median_ms);
}

/* The slot both timed loops of a measurement end on: the check reads their last runs. */
size_t last_slot(const bench_env *env) {
  return WARMUP_RUNS + (size_t)env->o->reps - 1;
}

/* ==================================================================================== */
/* One measurement, host copies, typed loops                                            */
/* ==================================================================================== */


/* Ours, then the peer, then the check. A backend without the primitive still gets the
 * peer timed: the row then shows what there is to match. */
case_result measure_case(bench_env *env, bench_row *r, const case_hooks *h, void *arg) {
  pp_status s = bench_time_prep(env, h->ours_prep, h->ours, arg, &r->ms);
  if (s == PP_ERR_UNSUPPORTED)
    r->ours_missing = true;
  else if (s != PP_OK)
    return CASE_FAILED;
  if (h->peer_ready && !h->peer_ready(env, arg))
    return CASE_FAILED;
  if (bench_time_prep(env, h->peer_prep, h->peer, arg, &r->peer_ms) != PP_OK)
    return CASE_FAILED;
  r->check = h->check(env, arg, r);
  print_row(env, r);
  return CASE_RAN;
}

/* Our calls report every status but PP_OK and PP_ERR_UNSUPPORTED (see bench_call). */
pp_status ours_status(bench_env *env, pp_status s, const char *fn) {
  if (s != PP_OK && s != PP_ERR_UNSUPPORTED)
    pp_ok(env, s, fn);
  return s;
}

pp_status gpu_status(bench_env *env, int rc, const char *what) {
  return gpu_ok(env, rc, what) ? PP_OK : PP_ERR_DEVICE;
}

/* Copy inside the backend's memory on the harness's stream (CUDA) or with all threads. */
pp_status refill(bench_env *env, void *dst, const void *src, size_t bytes) {
  if (env->cuda)
    return gpu_status(env, bench_gpu_memcpy(dst, src, bytes, env->stream), "refill copy");
  parallel_memcpy(dst, src, bytes);
  return PP_OK;
}

/* A host copy of `bytes` at src (backend memory), or NULL after saying why. */
void *host_copy(bench_env *env, const void *src, size_t bytes, const char *what) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    bench_note(env, "check skipped: no host memory for %s (%.2f GiB)", what,
               (double)bytes / (1u << 30));
    return NULL;
  }
  if (bytes && !pp_ok(env, pp_copy(env->ctx, p, src, bytes), what)) {
    free(p);
    return NULL;
  }
  return p;
}

bool fetch_count(bench_env *env, const uint64_t *src, uint64_t *count) {
  return pp_ok(env, pp_copy(env->ctx, count, src, sizeof *count), "pp_copy (count)");
}

/* Reports a disagreement with the peer (a failure: exit 1) and returns the check text. */
const char *mismatch(bench_env *env, const bench_row *r, const char *fmt, ...) {
  char detail[512], nb[32];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  bench_fail(env, "%s %s %s n=%s: %s", r->prim, r->op, pp_dtype_string(r->t),
             size_text(r->n, nb, sizeof nb), detail);
  return "MISMATCH";
}

bool is_float(pp_dtype t) { return t == PP_F32 || t == PP_F64; }

/* Element i as text, for mismatch reports. */
const char *elem_text(pp_dtype t, const void *base, size_t i, char *buf, size_t len) {
  cli_format_value(t, (const char *)base + i * pp_dtype_size(t), buf, len);
  return buf;
}

/* Bits of element i with -0.0 read as +0.0: the sorts treat the two as equal, so their
 * relative order is free (CUB's radix sort puts -0.0 first, parprim's stable sort keeps
 * input order). NaN keeps its bits. */
static uint64_t key_bits(pp_dtype t, const void *base, size_t i) {
  size_t es = pp_dtype_size(t);
  uint64_t bits = 0;
  memcpy(&bits, (const char *)base + i * es, es); /* little-endian hosts */
  if (t == PP_F32 && bits == UINT64_C(0x80000000))
    bits = 0;
  if (t == PP_F64 && bits == UINT64_C(0x8000000000000000))
    bits = 0;
  return bits;
}

/* First i where the keys differ (-0.0 == +0.0), or n. */
size_t first_key_difference(pp_dtype t, const void *a, const void *b, size_t n) {
  if (memcmp(a, b, n * pp_dtype_size(t)) == 0)
    return n;
  for (size_t i = 0; i < n; i++)
    if (key_bits(t, a, i) != key_bits(t, b, i))
      return i;
  return n;
}

/* First i where bytes of element size es differ, or n. */
size_t first_difference(const void *a, const void *b, size_t n, size_t es) {
  if (memcmp(a, b, n * es) == 0)
    return n;
  for (size_t i = 0; i < n; i++)
    if (memcmp((const char *)a + i * es, (const char *)b + i * es, es) != 0)
      return i;
  return n;
}

/* First i with keys[i] out of order after keys[i-1], or n. The generated data hold no NaN,
 * which the comparison would let pass. */
size_t first_unsorted(pp_dtype t, const void *keys, size_t n, bool desc) {
#define UNSORTED(T)                                                                            \
  {                                                                                            \
    const T *k = keys;                                                                         \
    for (size_t i = 1; i < n; i++)                                                             \
      if (desc ? k[i] > k[i - 1] : k[i] < k[i - 1])                                            \
        return i;                                                                              \
  }
  DTYPE_SWITCH(t, UNSORTED)
#undef UNSORTED
  return n;
}

/* The check of a sort or merge's keys: ours (backend memory, n keys of t) must be in order
 * and hold the peer's keys (-0.0 == +0.0). "ok", the mismatch after reporting it, "-"
 * when the host copies could not be made, "unsupported" when ours is missing. */
const char *check_sorted_keys(bench_env *env, const bench_row *r, const void *ours,
                              const void *peer, size_t n, bool desc) {
  if (r->ours_missing)
    return "unsupported";
  size_t bytes = n * pp_dtype_size(r->t), bad;
  char a[64], b[64];
  void *got = host_copy(env, ours, bytes, "pp_copy (keys)");
  void *want = got ? host_copy(env, peer, bytes, "pp_copy (peer keys)") : NULL;
  const char *res = want ? "ok" : "-";
  if (want && (bad = first_unsorted(r->t, got, n, desc)) < n)
    res = mismatch(env, r, "not sorted: index %zu holds %s after %s", bad,
                   elem_text(r->t, got, bad, a, sizeof a),
                   elem_text(r->t, got, bad - 1, b, sizeof b));
  else if (want && (bad = first_key_difference(r->t, got, want, n)) < n)
    res = mismatch(env, r, "key %zu: parprim %s, %s %s", bad,
                   elem_text(r->t, got, bad, a, sizeof a), r->peer,
                   elem_text(r->t, want, bad, b, sizeof b));
  free(got);
  free(want);
  return res;
}
