/*
 * th_faults.h — the machinery of test_faults.c (header only): a case is a call with its
 * buffers (inputs, outputs, their reference contents and how to compare them); the
 * driver places the buffers in each memory variant, fails the k-th allocation for
 * k = 1, 2, ... on a fresh context, and checks status, message, canaries and the call
 * again. test_faults.c holds the cases, one per primitive; what is checked is written in
 * its header comment.
 */
#ifndef PARPRIM_TEST_FAULTS_H
#define PARPRIM_TEST_FAULTS_H

#include "harness.h"
#include "../src/core/testctl.h"

#include <math.h>

#define MAXB 10
#define CANARY 0xA5
#define K_LIMIT 5000

enum role { IN, OUT, INOUT };
enum cmp_kind { EXACT, F32_TOL, F64_TOL, COUNTED }; /* COUNTED: only count elements valid */
enum variant { V_HOST, V_UNALIGNED, V_DEVICE, V_COUNT };
static const char *const variant_name[V_COUNT] = {"host", "unaligned host", "device"};

typedef struct fcase fcase;
struct fcase {
  const char *name; /* label in the report */
  const char *fn;   /* the function pp_last_error must name */
  int nb;
  size_t bytes[MAXB];
  int role[MAXB];
  int cmp[MAXB];
  int count_buf[MAXB]; /* COUNTED: the buffer holding the count (uint64_t) */
  size_t elem[MAXB];   /* COUNTED: element size */
  double tol[MAXB];
  unsigned char *init[MAXB];   /* IN / INOUT contents */
  unsigned char *expect[MAXB]; /* OUT / INOUT reference result */
  void *ptr[MAXB];             /* what the call gets */
  void *base[MAXB];            /* what to free */
  /* parameters of the call */
  pp_dtype t;
  pp_op op;
  pp_cmp cmpop;
  pp_sort_algo algo;
  pp_order order;
  pp_border border;
  size_t n, n2, k, rows, cols, w, h, fw, fh, pitch, vsize;
  int flag;
  uint32_t value;
  double lo, hi;
  float a, b;
  pp_status (*call)(pp_context *ctx, fcase *c);
};

static pp_context *g_data;   /* owns the device buffers of the device variant */
static pp_backend g_backend;

/* ---- buffers ------------------------------------------------------------------------ */

static inline int add_buf(fcase *c, int role, size_t bytes) {
  int i = c->nb++;
  c->bytes[i] = bytes;
  c->role[i] = role;
  c->cmp[i] = EXACT;
  c->init[i] = role == OUT ? NULL : th_xmalloc(bytes);
  c->expect[i] = role == IN ? NULL : th_xmalloc(bytes);
  return i;
}

static inline void free_case(fcase *c) {
  for (int i = 0; i < c->nb; i++) {
    free(c->init[i]);
    free(c->expect[i]);
  }
}

static inline void place_buffers(fcase *c, int v) {
  for (int i = 0; i < c->nb; i++) {
    if (v == V_DEVICE) {
      c->base[i] = c->ptr[i] = th_dev_alloc(g_data, c->bytes[i] + 16);
    } else {
      c->base[i] = th_xmalloc(c->bytes[i] + 16);
      /* off by one byte: no element type is aligned there, so the call stages the data */
      c->ptr[i] = (unsigned char *)c->base[i] + (v == V_UNALIGNED ? 1 : 0);
    }
  }
}

static inline void release_buffers(fcase *c, int v) {
  for (int i = 0; i < c->nb; i++) {
    if (v == V_DEVICE)
      th_dev_free(g_data, c->base[i]);
    else
      free(c->base[i]);
  }
}

/* Inputs get their contents, outputs the canary. */
static inline void reset_buffers(fcase *c, int v) {
  for (int i = 0; i < c->nb; i++) {
    unsigned char *src = c->init[i];
    unsigned char *canary = NULL;
    if (!src) {
      canary = th_xmalloc(c->bytes[i]);
      memset(canary, CANARY, c->bytes[i]);
      src = canary;
    }
    if (v == V_DEVICE)
      th_copy(g_data, c->ptr[i], src, c->bytes[i]);
    else
      memcpy(c->ptr[i], src, c->bytes[i]);
    free(canary);
  }
  if (v == V_DEVICE) pp_synchronize(g_data);
}

/* A host copy of buffer i as the call left it. */
static inline unsigned char *read_buffer(fcase *c, int v, int i) {
  unsigned char *h = th_xmalloc(c->bytes[i]);
  if (v == V_DEVICE)
    th_copy(g_data, h, c->ptr[i], c->bytes[i]);
  else
    memcpy(h, c->ptr[i], c->bytes[i]);
  return h;
}

/* ---- comparisons -------------------------------------------------------------------- */

/* Buffers as they were before the call: inputs unchanged, outputs still the canary. */
static inline int untouched(fcase *c, int v, char *why, size_t cap) {
  for (int i = 0; i < c->nb; i++) {
    unsigned char *h = read_buffer(c, v, i);
    size_t bad = c->bytes[i];
    for (size_t j = 0; j < c->bytes[i] && bad == c->bytes[i]; j++)
      if (c->init[i] ? h[j] != c->init[i][j] : h[j] != CANARY) bad = j;
    free(h);
    if (bad != c->bytes[i]) {
      snprintf(why, cap, "buffer %d (%s) changed at byte %zu", i,
               c->role[i] == IN ? "input" : "output", bad);
      return 0;
    }
  }
  return 1;
}

static inline int close_f64(double got, double want, double tol) {
  if (isnan(want)) return isnan(got);
  return fabs(got - want) <= tol * (1.0 + fabs(want));
}

/* Outputs equal to the reference (within tolerance for floating-point results). */
static inline int correct(fcase *c, int v, char *why, size_t cap) {
  unsigned char *h[MAXB] = {0};
  int ok = 1;
  for (int i = 0; i < c->nb; i++) h[i] = read_buffer(c, v, i);
  for (int i = 0; i < c->nb && ok; i++) {
    if (c->role[i] == IN) {
      if (memcmp(h[i], c->init[i], c->bytes[i]) != 0) {
        snprintf(why, cap, "input buffer %d was modified", i);
        ok = 0;
      }
      continue;
    }
    size_t bytes = c->bytes[i];
    if (c->cmp[i] == COUNTED) {
      uint64_t want, got;
      memcpy(&want, c->expect[c->count_buf[i]], 8);
      memcpy(&got, h[c->count_buf[i]], 8);
      if (got != want) {
        snprintf(why, cap, "count %llu, want %llu", (unsigned long long)got,
                 (unsigned long long)want);
        ok = 0;
        break;
      }
      bytes = (size_t)want * c->elem[i];
    }
    if (c->cmp[i] == F32_TOL) {
      for (size_t j = 0; j < bytes / 4 && ok; j++) {
        float g, w;
        memcpy(&g, h[i] + 4 * j, 4);
        memcpy(&w, c->expect[i] + 4 * j, 4);
        if (!close_f64(g, w, c->tol[i])) {
          snprintf(why, cap, "buffer %d element %zu: %.9g, want %.9g", i, j, (double)g, (double)w);
          ok = 0;
        }
      }
    } else if (c->cmp[i] == F64_TOL) {
      for (size_t j = 0; j < bytes / 8 && ok; j++) {
        double g, w;
        memcpy(&g, h[i] + 8 * j, 8);
        memcpy(&w, c->expect[i] + 8 * j, 8);
        if (!close_f64(g, w, c->tol[i])) {
          snprintf(why, cap, "buffer %d element %zu: %.17g, want %.17g", i, j, g, w);
          ok = 0;
        }
      }
    } else {
      for (size_t j = 0; j < bytes && ok; j++)
        if (h[i][j] != c->expect[i][j]) {
          snprintf(why, cap, "buffer %d differs from the reference at byte %zu", i, j);
          ok = 0;
        }
    }
  }
  for (int i = 0; i < c->nb; i++) free(h[i]);
  return ok;
}

/* ---- the driver --------------------------------------------------------------------- */

static inline uint64_t alloc_count(void) {
  uint64_t n = 0;
  pp_test_control(PP_TESTCTL_ALLOC_COUNT, &n);
  return n;
}

static inline pp_context *fresh_context(void) {
  pp_context *ctx = NULL;
  pp_status s = pp_create(&ctx, g_backend);
  if (s != PP_OK) {
    CHECK(0, "pp_create: %s (%s)", pp_status_string(s), pp_last_error(NULL));
    th_state *st = th_state_get();
    printf("%ld passed, %ld failed\n", st->passed, st->failed);
    exit(1);
  }
  return ctx;
}

static long g_sites_total;

/* Runs case c in variant v for k = 1, 2, ...; returns the number of sites failed. */
static inline long run_case(fcase *c, int v) {
  char why[256] = "";
  long sites = 0, fallbacks = 0;
  place_buffers(c, v);
  for (int64_t k = 1; k <= K_LIMIT; k++) {
    pp_context *ctx = fresh_context();
    reset_buffers(c, v);
    uint64_t before = alloc_count();
    pp_test_control(PP_TESTCTL_FAULT_ALLOC, k, 0);
    pp_status s = c->call(ctx, c);
    pp_test_control(PP_TESTCTL_FAULT_ALLOC, (int64_t)0, 0);
    uint64_t made = alloc_count() - before;
    int fired = made >= (uint64_t)k;
    pp_status sync = pp_synchronize(ctx);
    CHECK(sync == PP_OK, "%s [%s] k=%lld: pp_synchronize after the call: %s (%s)", c->name,
          variant_name[v], (long long)k, pp_status_string(sync), pp_last_error(ctx));
    if (s == PP_OK) {
      if (!CHECK(correct(c, v, why, sizeof why), "%s [%s] k=%lld%s: PP_OK but %s", c->name,
                 variant_name[v], (long long)k, fired ? " (fault fired)" : "", why))
        fired = 0; /* a wrong result: stop here, the rest would repeat it */
      if (fired) fallbacks++;
    } else {
      CHECK_STATUS(s, PP_ERR_OUT_OF_MEMORY, "%s [%s] k=%lld (%s)", c->name, variant_name[v],
                   (long long)k, pp_last_error(ctx));
      CHECK(fired, "%s [%s] k=%lld: failed although the fault did not fire: %s", c->name,
            variant_name[v], (long long)k, pp_last_error(ctx));
      CHECK(th_names(pp_last_error(ctx), c->fn), "%s [%s] k=%lld: message does not name %s: \"%s\"",
            c->name, variant_name[v], (long long)k, c->fn, pp_last_error(ctx));
      CHECK(untouched(c, v, why, sizeof why), "%s [%s] k=%lld: failed with %s, but %s", c->name,
            variant_name[v], (long long)k, pp_status_string(s), why);
      if (s == PP_ERR_OUT_OF_MEMORY) sites++;
      /* the context works afterwards */
      reset_buffers(c, v);
      s = c->call(ctx, c);
      sync = pp_synchronize(ctx);
      if (CHECK_STATUS(s, PP_OK, "%s [%s] k=%lld: the call again, injection off (%s)", c->name,
                       variant_name[v], (long long)k, pp_last_error(ctx)) &&
          sync == PP_OK)
        CHECK(correct(c, v, why, sizeof why), "%s [%s] k=%lld: the call again: %s", c->name,
              variant_name[v], (long long)k, why);
    }
    pp_destroy(ctx);
    if (!fired) break;
    CHECK(k < K_LIMIT, "%s [%s]: still allocating after %d faults", c->name, variant_name[v],
          K_LIMIT);
  }
  /* every allocation failing at once (persistent injection from the first on): a path
   * that falls back to a second allocation meets a failure there too */
  {
    pp_context *ctx = fresh_context();
    reset_buffers(c, v);
    pp_test_control(PP_TESTCTL_FAULT_ALLOC, (int64_t)1, 1);
    pp_status s = c->call(ctx, c);
    pp_test_control(PP_TESTCTL_FAULT_ALLOC, (int64_t)0, 0);
    pp_synchronize(ctx);
    if (s == PP_OK)
      CHECK(correct(c, v, why, sizeof why), "%s [%s] every allocation failing: PP_OK but %s",
            c->name, variant_name[v], why);
    else
      CHECK(s == PP_ERR_OUT_OF_MEMORY && untouched(c, v, why, sizeof why),
            "%s [%s] every allocation failing: %s (%s)%s%s", c->name, variant_name[v],
            pp_status_string(s), pp_last_error(ctx), s == PP_ERR_OUT_OF_MEMORY ? ", but " : "",
            s == PP_ERR_OUT_OF_MEMORY ? why : "");
    pp_destroy(ctx);
  }
  release_buffers(c, v);
  printf("  %-38s %-15s %3ld allocation sites failed%s\n", c->name, variant_name[v], sites,
         fallbacks ? " (and fallbacks taken)" : "");
  fflush(stdout);
  g_sites_total += sites;
  return sites;
}

static inline void run_all_variants(fcase *c) {
  for (int v = 0; v < V_COUNT; v++) {
    if (v == V_DEVICE && g_backend != PP_BACKEND_CUDA) continue;
    run_case(c, v);
  }
  free_case(c);
}

/* ---- data --------------------------------------------------------------------------- */

static th_rng g_rng;

/* n distinct u32 values in random order (a multiplicative permutation of 0..n-1 mixed
 * into the high bits), so results with ties cannot depend on the tie rule. */
static inline void fill_distinct_u32(uint32_t *x, size_t n) {
  uint32_t mul = 2654435761u, add = (uint32_t)th_next(&g_rng);
  for (size_t i = 0; i < n; i++) x[i] = (uint32_t)i * mul + add;
}

static inline void fill_f32(float *x, size_t n, float lo, float hi) {
  for (size_t i = 0; i < n; i++) x[i] = (float)th_range(&g_rng, lo, hi);
}

static inline int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}


#endif
