/*
 * demo_nbody.c — the N-body rows of `parprim demo`: pp_nbody_accel, pp_nbody_step (10
 * steps) and pp_nbody_energy on a random cube of bodies, each checked against the CPU
 * backend.
 *
 * The work is n^2, so the rows use min(--n, 4096) bodies (the table's n column says how
 * many), not the demo's element count; the random input of the other rows is not read.
 * Tolerances: accelerations 1e-4 of (|a| + mean |a|) (float sums in different orders),
 * positions after 10 steps 1e-4 (coordinates are O(1)), energies 1e-10 relative (double).
 */
#include "demo_impl.h"

#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NB_DEMO_MAX 4096
#define NB_DEMO_STEPS 10
#define NB_DEMO_DT 1e-3f
#define NB_DEMO_SOFT 0.05f

enum { NB_ACCEL, NB_STEP, NB_ENERGY };

typedef struct nb_args {
  int kind;
  size_t n;
  demo_buf init;  /* 7n floats: x y z vx vy vz m, the starting state */
  demo_buf state; /* 7n floats the call works on */
  demo_buf acc;   /* 3n floats */
  double kinetic, potential;
} nb_args;

static pp_bodies bodies_of(const nb_args *a) {
  float *s = a->state.dev;
  size_t n = a->n;
  pp_bodies b = {s, s + n, s + 2 * n, s + 3 * n, s + 4 * n, s + 5 * n, s + 6 * n, n};
  return b;
}

static pp_status call_nbody(pp_context *ctx, const void *in, void *args) {
  nb_args *a = args;
  pp_bodies b = bodies_of(a);
  float *acc = a->acc.dev;
  (void)in;
  switch (a->kind) {
  case NB_ACCEL: return pp_nbody_accel(ctx, &b, NB_DEMO_SOFT, acc, acc + a->n, acc + 2 * a->n);
  case NB_STEP: return pp_nbody_step(ctx, &b, NB_DEMO_DT, NB_DEMO_SOFT, NB_DEMO_STEPS);
  default: return pp_nbody_energy(ctx, &b, NB_DEMO_SOFT, &a->kinetic, &a->potential);
  }
}

/* Every call starts from the same bodies (step moves them). */
static pp_status prep_nbody(pp_context *ctx, const void *in, void *args) {
  nb_args *a = args;
  (void)in;
  return pp_copy(ctx, a->state.dev, a->init.dev, 7 * a->n * sizeof(float));
}

static pp_status fetch_nbody(pp_context *ctx, const void *in, void *args) {
  nb_args *a = args;
  (void)in;
  if (a->kind == NB_ACCEL) return buf_fetch(ctx, &a->acc, 3 * a->n * sizeof(float));
  if (a->kind == NB_STEP) return buf_fetch(ctx, &a->state, 7 * a->n * sizeof(float));
  return PP_OK;
}

static bool nbody_same(demo_env *env, pp_dtype t, const void *got, const void *want) {
  const nb_args *g = got, *w = want;
  const size_t n = g->n;
  (void)env;
  (void)t;
  if (g->kind == NB_ENERGY) {
    bool ok = fabs(g->kinetic - w->kinetic) <= 1e-10 * fabs(w->kinetic) &&
              fabs(g->potential - w->potential) <= 1e-10 * fabs(w->potential);
    if (!ok)
      fprintf(stderr, "parprim demo: nbody energy: got K %.17g U %.17g, cpu reference K %.17g U %.17g\n",
              g->kinetic, g->potential, w->kinetic, w->potential);
    return ok;
  }
  const float *a = g->kind == NB_ACCEL ? g->acc.host : g->state.host;
  const float *b = w->kind == NB_ACCEL ? w->acc.host : w->state.host;
  double mean = 0.0;
  for (size_t i = 0; i < 3 * n; i++) mean += fabs((double)b[i]);
  mean /= (double)(3 * n);
  for (size_t i = 0; i < 3 * n; i++) {
    double tol = g->kind == NB_ACCEL ? 1e-4 * (fabs((double)b[i]) + mean) : 1e-4;
    if (!(fabs((double)a[i] - b[i]) <= tol)) {
      report_element(g->kind == NB_ACCEL ? "nbody accel" : "nbody step position", PP_F32, i, a, b);
      return false;
    }
  }
  return true;
}

static bool side_alloc(demo_env *env, pp_context *ctx, nb_args *a, const float *host) {
  const size_t bytes = 7 * a->n * sizeof(float);
  if (!buf_alloc(env, ctx, &a->init, bytes) || !buf_alloc(env, ctx, &a->state, bytes) ||
      !buf_alloc(env, ctx, &a->acc, 3 * a->n * sizeof(float)))
    return false;
  pp_status s = pp_copy(ctx, a->init.dev, host, bytes);
  if (s == PP_OK) s = pp_copy(ctx, a->state.dev, host, bytes);
  if (s != PP_OK) demo_error(env, "staging bodies: %s: %s", pp_status_string(s), pp_last_error(ctx));
  return s == PP_OK;
}

static void side_free(demo_env *env, pp_context *ctx, nb_args *a) {
  buf_free(env, ctx, &a->init);
  buf_free(env, ctx, &a->state);
  buf_free(env, ctx, &a->acc);
}

static void nbody_row(demo_env *env, const float *host, int kind) {
  static const char *names[] = {"nbody accel", "nbody step10", "nbody energy"};
  static const char *units[] = {"Ginter/s", "Ginter/s", "Gpair/s"};
  const double n = (double)env->n;
  const double amount[] = {n * n, n * n * (NB_DEMO_STEPS + 1), n * (n - 1) / 2};
  demo_case c = {.prim = names[kind], .t = PP_F32, .fn = call_nbody, .same = nbody_same,
                 .amount = amount[kind], .unit = units[kind],
                 .prep = kind == NB_STEP ? prep_nbody : NULL, .fetch = fetch_nbody};
  nb_args got, want;
  memset(&got, 0, sizeof got);
  got.kind = kind;
  got.n = env->n;
  want = got;
  if (side_alloc(env, env->run, &got, host) && side_alloc(env, env->ref, &want, host))
    demo_measure(env, &c, &got, &want);
  else
    demo_row(env, &c, -1, "ERROR");
  side_free(env, env->run, &got);
  side_free(env, env->ref, &want);
}

void pp_demo_nbody(demo_env *env) {
  /* a copy of the environment with n = bodies, so the rows show the body count */
  demo_env sub = *env;
  memset(sub.inputs, 0, sizeof sub.inputs);
  sub.n = env->n < NB_DEMO_MAX ? env->n : NB_DEMO_MAX;
  const size_t n = sub.n;
  float *host = malloc(7 * n * sizeof(float));
  if (!host) {
    demo_error(env, "out of host memory for %zu bodies", n);
    return;
  }
  /* positions in [-1, 1)^3, velocities in [-0.1, 0.1), masses 1/n */
  cli_fill_random(PP_F32, host, 6 * n, CLI_SEED + 20, 0);
  for (size_t i = 3 * n; i < 6 * n; i++) host[i] *= 0.1f;
  for (size_t i = 6 * n; i < 7 * n; i++) host[i] = 1.0f / (float)n;
  for (int kind = NB_ACCEL; kind <= NB_ENERGY; kind++) nbody_row(&sub, host, kind);
  free(host);
  /* the counts go back to the caller's environment; demo_measure made sub's f32 input */
  env->ok = sub.ok;
  env->mismatches = sub.mismatches;
  env->unimplemented = sub.unimplemented;
  env->errors = sub.errors;
  demo_input *in = &sub.inputs[PP_F32];
  if (in->dev && pp_free(env->run, in->dev) != PP_OK)
    demo_error(env, "pp_free: %s", pp_last_error(env->run));
  free(in->host);
}
