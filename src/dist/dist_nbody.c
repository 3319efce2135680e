/*
 * dist_nbody.c — pp_nbody_accel, pp_nbody_step and pp_nbody_energy on a distributed
 * context: the system is the union of the ranks' bodies, each rank holds and advances its
 * own.
 *
 * Every force evaluation starts with an all-gather-v of the positions (and, once per call,
 * the masses) into a structure of arrays of all N bodies in global order, on every rank;
 * the backend then computes the pull of those N sources on the rank's n_r targets
 * (dist_nbody_accel, the all-pairs tiles of the one-GPU kernel with targets and sources
 * apart). Per evaluation a rank moves 12 N bytes and computes n_r N interactions: at
 * N = 2^20 on 4 GPUs, 12 MiB through NVLink against 2^38 interactions, so the gather is
 * left unoverlapped (docs/distributed.md has the arithmetic). pp_nbody_step is the
 * kick-drift-kick leapfrog of the one-GPU code, with one gather per force evaluation:
 *     a = F(x);  repeat steps times { v += h a; x += dt v; a = F(x); v += h a; }
 * The energies are global on every rank: each rank sums the kinetic energy of its bodies
 * and m_i phi_i over them (phi_i from all N sources, the body itself left out), and the
 * ranks' doubles are added in rank order, U = -1/2 sum_i m_i phi_i.
 */
#include "dist_internal.h"

#include <stdlib.h>
#include <string.h>

static uint64_t float_bits(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

/* The all-gather of the sources: 4 arrays (x, y, z, mass) of total floats each in one
 * scratch block; the byte counts and offsets per rank, host arrays of 2p entries. */
typedef struct sources {
  float *mem;
  pp_bodies all;
  size_t *bytes, *offs;
} sources;

static pp_status sources_alloc(pp_context *ctx, const char *fn, size_t total, sources *s) {
  const int p = ctx->dist->nranks;
  memset(s, 0, sizeof *s);
  size_t bytes = 0;
  PP_TRY(pp_check_mul(ctx, fn, "4 * N * 4 (all bodies' positions and masses)", total,
                      4 * sizeof(float), &bytes));
  s->bytes = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : malloc(2 * (size_t)p * sizeof(size_t));
  if (!s->bytes) return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "%s: no host memory for %d ranks", fn, p);
  s->offs = s->bytes + p;
  size_t off = 0;
  for (int q = 0; q < p; q++) {
    s->bytes[q] = (size_t)pp_dist_value(ctx, q, 0) * sizeof(float);
    s->offs[q] = off;
    off += s->bytes[q];
  }
  if (bytes) PP_TRY(ctx->ops->temp_alloc(ctx, (void **)&s->mem, bytes));
  s->all.n = total;
  s->all.x = s->mem;
  s->all.y = s->mem ? s->mem + total : NULL;
  s->all.z = s->mem ? s->mem + 2 * total : NULL;
  s->all.mass = s->mem ? s->mem + 3 * total : NULL;
  return PP_OK;
}

static void sources_free(pp_context *ctx, sources *s) {
  if (s->mem) ctx->ops->temp_free(ctx, s->mem);
  free(s->bytes);
  memset(s, 0, sizeof *s);
}

/* Gather the local arrays (n floats each) into the sources: positions, and masses too
 * when with_mass. */
static pp_status gather(pp_context *ctx, sources *s, const pp_bodies *local, bool with_mass) {
  pp_comm *c = ctx->dist->comm;
  const size_t nb = local->n * sizeof(float);
  PP_TRY(c->ops->allgatherv(c, ctx, local->x, nb, s->all.x, s->bytes, s->offs));
  PP_TRY(c->ops->allgatherv(c, ctx, local->y, nb, s->all.y, s->bytes, s->offs));
  PP_TRY(c->ops->allgatherv(c, ctx, local->z, nb, s->all.z, s->bytes, s->offs));
  if (with_mass) PP_TRY(c->ops->allgatherv(c, ctx, local->mass, nb, s->all.mass, s->bytes, s->offs));
  return PP_OK;
}

static pp_status need_ops(pp_context *ctx, const char *fn, pp_status checked) {
  if (checked == PP_OK && (!ctx->ops->dist_nbody_accel || !ctx->ops->dist_nbody_advance ||
                           !ctx->ops->dist_nbody_energy))
    return pp_not_implemented(ctx, fn);
  return checked;
}

/* Every distributed N-body call begins alike: the backend must have the operations, every
 * rank agrees on its body count, the softening and what the call adds (extra), and then
 * learns where its bodies start in the global set and how many there are in all. */
static pp_status agree_bodies(pp_context *ctx, const char *fn, pp_status checked,
                              const pp_bodies *b, float softening, const pp_dist_val *extra,
                              size_t n_extra, size_t *off, size_t *total) {
  checked = need_ops(ctx, fn, checked);
  pp_dist_val vals[4] = {{NULL, checked == PP_OK ? b->n : 0}, {"softening", float_bits(softening)}};
  for (size_t i = 0; i < n_extra; i++) vals[2 + i] = extra[i];
  PP_TRY(pp_dist_agree(ctx, fn, checked, vals, 2 + n_extra));
  *off = 0;
  *total = 0;
  return pp_dist_offsets(ctx, fn, 0, off, total);
}

/* The sources of every body, gathered once: each rank allocates room for all of them, the
 * ranks agree that every one could (so none waits in a gather another skips), then they
 * exchange positions and masses. src is zeroed first, so sources_free is always safe. */
static pp_status sources_join(pp_context *ctx, const char *fn, pp_status st, size_t total,
                              sources *src, const pp_bodies *sb) {
  memset(src, 0, sizeof *src);
  if (st == PP_OK) st = sources_alloc(ctx, fn, total, src);
  st = pp_dist_agree(ctx, fn, st, NULL, 0);
  if (st == PP_OK) st = gather(ctx, src, sb, true);
  return st;
}

pp_status pp_dist_nbody_accel(pp_context *ctx, pp_status checked, const pp_bodies *b,
                              float softening, float *ax, float *ay, float *az) {
  static const char fn[] = "pp_nbody_accel";
  size_t off, total;
  PP_TRY(agree_bodies(ctx, fn, checked, b, softening, NULL, 0, &off, &total));
  if (total == 0) return PP_OK;
  const size_t bytes = b->n * sizeof(float);
  pp_args args = {0};
  pp_status st = PP_OK;
  pp_bodies sb = {0};
  void *dax, *day, *daz;
  PP_STAGE_BODIES(PP_ARG_IN, b, bytes, sb, false);
  PP_STAGE(PP_ARG_OUT, "ax", ax, bytes, sizeof(float), dax);
  PP_STAGE(PP_ARG_OUT, "ay", ay, bytes, sizeof(float), day);
  PP_STAGE(PP_ARG_OUT, "az", az, bytes, sizeof(float), daz);
  sources src;
  st = sources_join(ctx, fn, st, total, &src, &sb);
  if (st == PP_OK && sb.n)
    st = ctx->ops->dist_nbody_accel(ctx, &sb, &src.all, softening, (float *)dax, (float *)day,
                                    (float *)daz);
  sources_free(ctx, &src);
  return pp_args_finish(ctx, &args, st);
}

pp_status pp_dist_nbody_step(pp_context *ctx, pp_status checked, pp_bodies *b, float dt,
                             float softening, size_t steps) {
  static const char fn[] = "pp_nbody_step";
  const pp_dist_val extra[] = {{"dt", float_bits(dt)}, {"steps", steps}};
  size_t off, total;
  PP_TRY(agree_bodies(ctx, fn, checked, b, softening, extra, 2, &off, &total));
  if (total == 0 || steps == 0) return PP_OK;
  const size_t n = b->n, bytes = n * sizeof(float);
  pp_args args = {0};
  pp_status st = PP_OK;
  pp_bodies sb = {0};
  PP_STAGE_BODIES(PP_ARG_INOUT, b, bytes, sb, true);
  sources src;
  memset(&src, 0, sizeof src);
  if (st == PP_OK) st = sources_alloc(ctx, fn, total, &src);
  float *acc = NULL; /* ax, ay, az of this rank's bodies */
  if (st == PP_OK && n) {
    if (n > SIZE_MAX / (3 * sizeof(float)))
      st = pp_fail(ctx, PP_ERR_OVERFLOW, "%s: scratch for n (%zu) overflows", fn, n);
    else
      st = ctx->ops->temp_alloc(ctx, (void **)&acc, 3 * bytes);
  }
  st = pp_dist_agree(ctx, fn, st, NULL, 0);
  const bool joined = st == PP_OK; /* every rank or none */
  float *ax = acc, *ay = acc ? acc + n : NULL, *az = acc ? acc + 2 * n : NULL;
  const float h = 0.5f * dt;
  /* a = F(x); every rank makes the same gathers whatever its n */
  if (joined) st = gather(ctx, &src, &sb, true);
  if (st == PP_OK && n)
    st = ctx->ops->dist_nbody_accel(ctx, &sb, &src.all, softening, ax, ay, az);
  for (size_t k = 0; k < steps && joined; k++) {
    if (st == PP_OK && n)
      st = ctx->ops->dist_nbody_advance(ctx, &sb, ax, ay, az, h, dt, k > 0, true);
    /* a rank whose kernel failed still joins every gather, so no rank waits for it */
    pp_status g = gather(ctx, &src, &sb, false);
    if (st == PP_OK) st = g;
    if (st == PP_OK && n)
      st = ctx->ops->dist_nbody_accel(ctx, &sb, &src.all, softening, ax, ay, az);
  }
  if (st == PP_OK && n) st = ctx->ops->dist_nbody_advance(ctx, &sb, ax, ay, az, h, dt, true, false);
  if (acc) ctx->ops->temp_free(ctx, acc);
  sources_free(ctx, &src);
  return pp_args_finish(ctx, &args, st);
}

pp_status pp_dist_nbody_energy(pp_context *ctx, pp_status checked, const pp_bodies *b,
                               float softening, double *kinetic, double *potential) {
  static const char fn[] = "pp_nbody_energy";
  size_t off, total;
  PP_TRY(agree_bodies(ctx, fn, checked, b, softening, NULL, 0, &off, &total));
  const size_t bytes = b->n * sizeof(float);
  pp_args args = {0};
  pp_status st = PP_OK;
  pp_bodies sb = {0};
  PP_STAGE_BODIES(PP_ARG_IN, b, bytes, sb, true);
  sources src;
  st = sources_join(ctx, fn, st, total, &src, &sb);
  double mine[2] = {0.0, 0.0}; /* kinetic, sum_i m_i phi_i */
  if (st == PP_OK && sb.n)
    st = ctx->ops->dist_nbody_energy(ctx, &sb, &src.all, off, softening, &mine[0], &mine[1]);
  sources_free(ctx, &src);
  st = pp_args_finish(ctx, &args, st);
  uint64_t kb, pb;
  memcpy(&kb, &mine[0], 8);
  memcpy(&pb, &mine[1], 8);
  const pp_dist_val parts[] = {{NULL, kb}, {NULL, pb}};
  PP_TRY(pp_dist_agree(ctx, fn, st, parts, 2));
  double k = 0.0, u = 0.0;
  for (int q = 0; q < ctx->dist->nranks; q++) {
    uint64_t x = pp_dist_value(ctx, q, 0), y = pp_dist_value(ctx, q, 1);
    double dk, du;
    memcpy(&dk, &x, 8);
    memcpy(&du, &y, 8);
    k += dk;
    u += du;
  }
  u *= -0.5; /* every pair was counted from both ends */
  PP_TRY(ctx->ops->copy(ctx, kinetic, &k, sizeof k));
  return ctx->ops->copy(ctx, potential, &u, sizeof u);
}
