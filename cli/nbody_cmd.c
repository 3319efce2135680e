/*
 * nbody_cmd.c — `parprim nbody`: runs an all-pairs N-body simulation with pp_nbody_step,
 * prints progress (energy, its drift, interactions/s) and writes PNG frames of the
 * projected density.
 *
 * Units: G = 1 and total mass 1 (N-body units: a Plummer sphere has E = -1/4 and a
 * crossing time of about 2.8). The bodies live in the backend's memory (pp_malloc) for
 * the whole run; each progress line or frame copies back only what it needs, and the
 * steps between two of them are one pp_nbody_step call, so on a GPU they run without a
 * host round trip.
 *
 * Frames: the bodies' mass is deposited on a width x width grid seen along z (cloud in
 * cell, so a body spreads over its four nearest pixels), scaled as log(1 + density / d0)
 * with d0 the density of one body in a pixel, normalised by the first frame's peak, and
 * coloured through a black - violet - red - orange - pale yellow ramp. The field of view
 * is fixed at the start (1.3 times the radius holding 95% of the bodies). Each frame is
 * captioned with its time and body count, with a scale bar in length units (plot.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include "common.h"
#include "image_io.h"
#include "out_file.h"
#include "plot.h"
#include "progress.h"
#include "parprim.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

typedef enum nb_init { INIT_PLUMMER, INIT_DISK, INIT_COLLISION } nb_init;

typedef struct nb_opts {
  size_t n, steps, every, width;
  float dt, softening;
  nb_init init;
  const char *frames;
  pp_backend backend;
  uint64_t seed;
} nb_opts;

void pp_cli_nbody_usage(FILE *f) {
  fputs("usage: parprim nbody [--n N] [--steps S] [--dt DT] [--init plummer|disk|collision]\n"
        "                     [--softening EPS] [--frames DIR] [--every K] [--size W]\n"
        "                     [--seed X] [--backend cpu|cuda|auto] [--quiet]\n"
        "\n"
        "Simulates N bodies under their mutual gravity (all pairs, G = 1, total mass 1,\n"
        "Plummer softening, kick-drift-kick leapfrog) with pp_nbody_step, and prints the\n"
        "energy, its relative drift and the interactions per second as it goes. With\n"
        "--frames, writes DIR/frame_00000.png, ... : the density seen along z, log-scaled\n"
        "and coloured.\n"
        "\n"
        "  --n N          bodies (default 16384; 2048 on the CPU backend)\n"
        "  --steps S      time steps (default 1000)\n"
        "  --dt DT        time step (default 0.001)\n"
        "  --init I       plummer: a Plummer sphere in equilibrium (default);\n"
        "                 disk: a rotating disk around a central bulge;\n"
        "                 collision: two Plummer spheres on a collision course\n"
        "  --softening E  Plummer softening length (default 0.02)\n"
        "  --frames DIR   write a PNG frame every K steps into DIR (created if missing)\n"
        "  --every K      steps between frames and progress lines (default: S/20, at least 1)\n"
        "  --size W       frame width and height in pixels (default 512)\n"
        "  --seed X       seed of the initial conditions (default 1)\n"
        "  --backend B    cpu, cuda or auto (default auto: CUDA when a GPU is usable)\n"
        "  --quiet        no progress line on stderr\n"
        "  -h, --help     this text\n"
        "\n"
        "Exit status: 0 done; 1 a call or a file failed; 2 usage error.\n",
        f);
}

/* A number that a float holds: finite, at most FLT_MAX in magnitude. */
static int parse_float(const char *s, float *out) {
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end || !isfinite(v) || fabs(v) > FLT_MAX) return -1;
  *out = (float)v;
  return 0;
}

/* The most bodies whose 7 float arrays fit in the address space. */
#define NBODY_MAX_N (SIZE_MAX / (7 * sizeof(float)))

/* Returns -1 when parsed, else the exit code (0 after help). */
static int nb_parse(int argc, char **argv, nb_opts *o, bool *n_given) {
  enum { OPT_N, OPT_DT, OPT_INIT, OPT_SOFTENING, OPT_SEED };
  const cli_option options[] = {
      CLI_VALUE("--n", OPT_N),
      CLI_SIZE("--steps", &o->steps, CLI_OPTIONAL, 0, 0, "bad --steps '%s'"),
      CLI_VALUE("--dt", OPT_DT),
      CLI_VALUE("--init", OPT_INIT),
      CLI_VALUE("--softening", OPT_SOFTENING),
      CLI_NAME("--frames", &o->frames, "a directory"),
      CLI_SIZE("--every", &o->every, CLI_OPTIONAL, 1, 0, "bad --every '%s'"),
      CLI_SIZE("--size", &o->width, CLI_OPTIONAL, 16, 8192, "bad --size '%s' (16 .. 8192)"),
      CLI_VALUE("--seed", OPT_SEED),
      CLI_BACKEND("--backend", &o->backend),
      CLI_QUIET,
  };
  cli_scan sc = CLI_SCAN("nbody", pp_cli_nbody_usage, options, argc, argv, NULL, NULL);
  for (int got; (got = cli_scan_next(&sc)) != CLI_SCAN_END;) {
    const char *v = sc.val;
    size_t z = 0;
    switch (got) {
    case CLI_SCAN_EXIT:
      return sc.exit;
    case OPT_N:
      if (cli_parse_size(v, &o->n) || o->n == 0) return cli_scan_error(&sc, "bad --n '%s'", v);
      if (o->n > NBODY_MAX_N) {
        fprintf(stderr, "parprim nbody: --n %s is too large (at most %zu)\n\n", v, NBODY_MAX_N);
        pp_cli_nbody_usage(stderr);
        return 2;
      }
      *n_given = true;
      break;
    case OPT_DT:
      if (parse_float(v, &o->dt) || o->dt == 0.0f)
        return cli_scan_error(&sc, "bad --dt '%s' (a float: non-zero, at most 3.4e38 in magnitude)",
                              v);
      break;
    case OPT_INIT:
      if (strcmp(v, "plummer") == 0) o->init = INIT_PLUMMER;
      else if (strcmp(v, "disk") == 0) o->init = INIT_DISK;
      else if (strcmp(v, "collision") == 0) o->init = INIT_COLLISION;
      else return cli_scan_error(&sc, "unknown --init '%s' (plummer, disk, collision)", v);
      break;
    case OPT_SOFTENING:
      if (parse_float(v, &o->softening) || o->softening < 0.0f)
        return cli_scan_error(&sc, "bad --softening '%s' (a float >= 0)", v);
      break;
    case OPT_SEED:
      if (cli_parse_size(v, &z)) return cli_scan_error(&sc, "bad --seed '%s'", v);
      o->seed = z;
      break;
    default:
      return cli_scan_error(&sc, "unknown argument '%s'", sc.arg);
    }
  }
  return -1;
}

/* ---- initial conditions (host; x y z vx vy vz m, n floats each) ------------------------ */

typedef struct nb_rng {
  uint64_t s;
} nb_rng;

static double rnd(nb_rng *r) { /* uniform [0, 1), splitmix64 */
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

static void random_direction(nb_rng *r, double len, double out[3]) {
  double c = 2 * rnd(r) - 1, ph = 2 * M_PI * rnd(r), s = sqrt(1 - c * c);
  out[0] = len * s * cos(ph);
  out[1] = len * s * sin(ph);
  out[2] = len * c;
}

/* Plummer sphere of mass `mass` (Aarseth, Henon & Wielen 1974), scale radius chosen so
 * that a unit mass has E = -1/4; the 1% outermost mass is not drawn. */
static void plummer(nb_rng *r, float *b, size_t n, size_t first, size_t count, double mass,
                    const double shift[3], const double drift[3]) {
  const double a = 3.0 * M_PI / 16.0, vscale = sqrt(mass / a);
  for (size_t i = first; i < first + count; i++) {
    double rad = a / sqrt(pow(1e-6 + 0.99 * rnd(r), -2.0 / 3.0) - 1.0), q, g;
    do {
      q = rnd(r);
      g = 0.1 * rnd(r);
    } while (g > q * q * pow(1 - q * q, 3.5));
    double p[3], v[3];
    random_direction(r, rad, p);
    random_direction(r, q * sqrt(2.0) * pow(1 + rad * rad / (a * a), -0.25) * vscale, v);
    for (int k = 0; k < 3; k++) {
      b[(size_t)k * n + i] = (float)(p[k] + shift[k]);
      b[(size_t)(3 + k) * n + i] = (float)(v[k] + drift[k]);
    }
    b[6 * n + i] = (float)(mass / (double)count);
  }
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* A thin exponential disk (scale length 0.3, 70% of the mass) on circular orbits around a
 * Plummer bulge (30%, scale 0.1): the speed at r balances the mass inside r. */
static void disk(nb_rng *r, float *b, size_t n, float soft) {
  size_t nb = n / 10 > 0 ? n / 10 : 1, nd = n - nb;
  const double mb = nd ? 0.3 : 1.0, md = 1.0 - mb, ab = 0.1;
  float *radii = malloc((nd ? nd : 1) * sizeof(float));
  if (!radii) return;
  for (size_t i = 0; i < nd; i++) {
    /* radius of an exponential surface density: the sum of two exponential draws */
    radii[i] = (float)(-0.3 * log((1 - rnd(r)) * (1 - rnd(r))));
  }
  qsort(radii, nd, sizeof *radii, cmp_float);
  for (size_t k = 0; k < nd; k++) {
    size_t i = nb + k;
    double rad = radii[k], ph = 2 * M_PI * rnd(r);
    double m_in = mb * pow(rad * rad / (rad * rad + ab * ab), 1.5) + md * (double)k / (double)nd;
    double v = sqrt(m_in * rad * rad / pow(rad * rad + (double)soft * soft, 1.5));
    b[i] = (float)(rad * cos(ph));
    b[n + i] = (float)(rad * sin(ph));
    b[2 * n + i] = (float)(0.01 * (2 * rnd(r) - 1));
    b[3 * n + i] = (float)(-v * sin(ph));
    b[4 * n + i] = (float)(v * cos(ph));
    b[5 * n + i] = 0.0f;
    b[6 * n + i] = (float)(md / (double)nd);
  }
  free(radii);
  /* the bulge: a compact Plummer sphere of mass mb, in its own equilibrium */
  const double zero[3] = {0, 0, 0};
  plummer(r, b, n, 0, nb, mb, zero, zero);
  for (size_t i = 0; i < nb; i++)
    for (int k = 0; k < 6; k++) b[(size_t)k * n + i] *= (float)(k < 3 ? ab / (3 * M_PI / 16) : sqrt((3 * M_PI / 16) / ab));
}

static void make_bodies(const nb_opts *o, float *b) {
  nb_rng r = {o->seed * 0xD1B54A32D192ED03ull + 1};
  const size_t n = o->n;
  const double zero[3] = {0, 0, 0};
  if (o->init == INIT_PLUMMER) {
    plummer(&r, b, n, 0, n, 1.0, zero, zero);
  } else if (o->init == INIT_DISK) {
    disk(&r, b, n, o->softening);
  } else {
    const double s1[3] = {-1.5, -0.4, 0}, v1[3] = {0.35, 0, 0};
    const double s2[3] = {1.5, 0.4, 0}, v2[3] = {-0.35, 0, 0};
    plummer(&r, b, n, 0, n / 2, 0.5, s1, v1);
    plummer(&r, b, n, n / 2, n - n / 2, 0.5, s2, v2);
  }
}

/* ---- frames ------------------------------------------------------------------------------ */

typedef struct nb_view {
  size_t w;
  double half, norm; /* field of view half-width; log-density of the first frame's peak */
  double *grid;
} nb_view;

/* The colour ramp: piecewise linear through dark violet, red and orange to pale yellow. */
static void ramp(double t, uint8_t rgb[3]) {
  static const double stops[6][3] = {{0, 0, 4},      {40, 11, 84},    {120, 28, 109},
                                     {200, 60, 80},  {250, 150, 40},  {252, 250, 190}};
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  double x = t * 5;
  int k = x >= 5 ? 4 : (int)x;
  double f = x - k;
  for (int c = 0; c < 3; c++) rgb[c] = (uint8_t)lround(stops[k][c] + f * (stops[k + 1][c] - stops[k][c]));
}

static int write_frame(nb_view *v, const float *x, const float *y, const float *m, size_t n,
                       const char *dir, size_t index, double t) {
  const size_t w = v->w;
  memset(v->grid, 0, w * w * sizeof(double));
  const double scale = (double)w / (2 * v->half);
  for (size_t i = 0; i < n; i++) {
    double gx = (x[i] + v->half) * scale - 0.5, gy = (v->half - y[i]) * scale - 0.5;
    if (!(gx >= 0 && gy >= 0 && gx < (double)(w - 1) && gy < (double)(w - 1))) continue;
    size_t ix = (size_t)gx, iy = (size_t)gy;
    double fx = gx - (double)ix, fy = gy - (double)iy, mi = m[i];
    v->grid[iy * w + ix] += mi * (1 - fx) * (1 - fy);
    v->grid[iy * w + ix + 1] += mi * fx * (1 - fy);
    v->grid[(iy + 1) * w + ix] += mi * (1 - fx) * fy;
    v->grid[(iy + 1) * w + ix + 1] += mi * fx * fy;
  }
  const double d0 = n ? 1.0 / (double)n : 1.0; /* one body of the average mass */
  double peak = 0;
  for (size_t i = 0; i < w * w; i++) {
    v->grid[i] = log1p(v->grid[i] / d0);
    peak = v->grid[i] > peak ? v->grid[i] : peak;
  }
  if (v->norm == 0) v->norm = peak > 0 ? peak : 1;
  cli_image img;
  if (cli_image_alloc(&img, w, w, 3) != 0) {
    fprintf(stderr, "parprim nbody: out of memory for a %zux%zu frame\n", w, w);
    return 1;
  }
  for (size_t i = 0; i < w * w; i++) ramp(v->grid[i] / v->norm, img.pixels + 3 * i);
  /* the time and a scale bar of about a tenth of the field, in N-body length units */
  char caption[96], bar_label[32];
  const double bar = cli_plot_nice_step(2 * v->half, 10);
  snprintf(caption, sizeof caption, "t = %.3f   %zu %s", t, n, n == 1 ? "body" : "bodies");
  snprintf(bar_label, sizeof bar_label, "%g", bar);
  (void)cli_plot_caption(&img, caption, bar * scale, bar_label); /* a frame without is fine */
  char path[4096], err[512];
  snprintf(path, sizeof path, "%s/frame_%05zu.png", dir, index);
  int rc = cli_image_write(path, &img, NULL, err, sizeof err);
  cli_image_free(&img);
  if (rc != 0) {
    fprintf(stderr, "parprim nbody: %s\n", err);
    return 1;
  }
  return 0;
}

/* Half-width that shows the bodies: 1.3 times the radius holding 95% of them. */
static double view_half(const float *b, size_t n) {
  float *r = malloc(n * sizeof(float));
  if (!r) return 3.0;
  for (size_t i = 0; i < n; i++) r[i] = hypotf(b[i], b[n + i]);
  qsort(r, n, sizeof *r, cmp_float);
  double h = 1.3 * r[(size_t)(0.95 * (double)(n - 1))];
  free(r);
  return h > 0 ? h : 1.0;
}

static bool on_path(const char *tool) {
  const char *path = getenv("PATH");
  char buf[4096];
  for (const char *p = path; p && *p;) {
    const char *end = strchr(p, ':');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    snprintf(buf, sizeof buf, "%.*s/%s", (int)len, p, tool);
    if (len && access(buf, X_OK) == 0) return true;
    p = end ? end + 1 : NULL;
  }
  return false;
}

/* ---- the run ------------------------------------------------------------------------------ */

/* A rate with the SI prefix that puts it between 1 and 1000 (k, M, G, T, P): "81.8 MFLOP/s",
 * and, before a word, "2.64 M interactions/s". */
static void si_rate(double v, const char *unit, char *buf, size_t len) {
  static const char prefixes[] = " kMGTP";
  int p = 0;
  while (p < 5 && fabs(v) >= 1000) {
    v /= 1000;
    p++;
  }
  if (p == 0)
    snprintf(buf, len, "%.3g %s", v, unit);
  else
    snprintf(buf, len, "%.3g %c%s%s", v, prefixes[p], islower((unsigned char)unit[0]) ? " " : "",
             unit);
}

static int simulate(pp_context *ctx, const nb_opts *o, float *host) {
  const size_t n = o->n, bytes = 7 * n * sizeof(float);
  void *mem = NULL;
  pp_status s = pp_malloc(ctx, &mem, bytes);
  if (s != PP_OK) return cli_call_failed("nbody", ctx, "pp_malloc", s);
  float *d = mem;
  pp_bodies b = {d, d + n, d + 2 * n, d + 3 * n, d + 4 * n, d + 5 * n, d + 6 * n, n};
  nb_view view = {o->width, view_half(host, n), 0, NULL};
  int rc = 0;
  if ((s = pp_copy(ctx, d, host, bytes)) != PP_OK)
    rc = cli_call_failed("nbody", ctx, "copy to the backend", s);
  if (rc == 0 && o->frames) {
    view.grid = malloc(o->width * o->width * sizeof(double));
    if (!view.grid) {
      fprintf(stderr, "parprim nbody: out of memory for the frame grid\n");
      rc = 1;
    }
  }
  double k0 = 0, u0 = 0, busy_ms = 0, interactions = 0;
  if (rc == 0 && (s = pp_nbody_energy(ctx, &b, o->softening, &k0, &u0)) != PP_OK)
    rc = cli_call_failed("nbody", ctx, "pp_nbody_energy", s);
  const double e0 = k0 + u0;
  if (rc == 0) printf("step %8d  t %8.4f  E %+.8f  (K %.6f, U %+.6f)\n", 0, 0.0, e0, k0, u0);
  size_t frame = 0;
  if (rc == 0 && o->frames) {
    rc = write_frame(&view, host, host + n, host + 6 * n, n, o->frames, frame++, 0.0);
  }
  cli_progress_begin("parprim nbody");
  for (size_t done = 0; rc == 0 && done < o->steps;) {
    size_t chunk = o->steps - done < o->every ? o->steps - done : o->every;
    double t0 = cli_now_ms();
    s = pp_nbody_step(ctx, &b, o->dt, o->softening, chunk);
    if (s == PP_OK) s = pp_synchronize(ctx);
    double ms = cli_now_ms() - t0;
    if (s != PP_OK) {
      rc = cli_call_failed("nbody", ctx, "pp_nbody_step", s);
      break;
    }
    done += chunk;
    busy_ms += ms;
    const double inter = (double)n * (double)n * (double)(chunk + 1); /* one extra per call */
    interactions += inter;
    double k = 0, u = 0;
    if ((s = pp_nbody_energy(ctx, &b, o->softening, &k, &u)) != PP_OK) {
      rc = cli_call_failed("nbody", ctx, "pp_nbody_energy", s);
      break;
    }
    cli_progress_end(); /* the line below replaces it */
    char rate[32];
    si_rate(inter / (ms * 1e-3), "interactions/s", rate, sizeof rate);
    printf("step %8zu  t %8.4f  E %+.8f  drift %+.3e  %20s  %.3g ms/step\n", done,
           (double)done * o->dt, k + u, e0 != 0 ? (k + u - e0) / fabs(e0) : 0.0, rate,
           ms / (double)chunk);
    fflush(stdout);
    if (o->frames) {
      if ((s = pp_copy(ctx, host, d, 2 * n * sizeof(float))) != PP_OK) {
        rc = cli_call_failed("nbody", ctx, "copy from the backend", s);
        break;
      }
      rc = write_frame(&view, host, host + n, host + 6 * n, n, o->frames, frame++,
                       (double)done * o->dt);
    }
    cli_progress_update((double)done, (double)o->steps, "steps");
  }
  cli_progress_end();
  if (rc == 0 && o->steps) {
    pp_device_info info;
    const char *dev = pp_get_device_info(ctx, &info) == PP_OK ? info.name : "unknown device";
    char rate[32], flops[32];
    si_rate(interactions / (busy_ms * 1e-3), "interactions/s", rate, sizeof rate);
    si_rate(interactions * 20 / (busy_ms * 1e-3), "FLOP/s", flops, sizeof flops);
    printf("%zu %s, %zu step%s on %s (%s): %s, %s at 20 flops per interaction\n", n,
           n == 1 ? "body" : "bodies", o->steps, o->steps == 1 ? "" : "s",
           pp_backend_string(pp_backend_of(ctx)), dev, rate, flops);
  }
  if (rc == 0 && o->frames) {
    printf("wrote %zu frames to %s/frame_%%05d.png\n", frame, o->frames);
    if (on_path("ffmpeg"))
      printf("to make a video: ffmpeg -framerate 25 -i %s/frame_%%05d.png -pix_fmt yuv420p %s/nbody.mp4\n",
             o->frames, o->frames);
    else if (on_path("convert"))
      printf("to make an animated GIF: convert -delay 4 %s/frame_*.png %s/nbody.gif\n", o->frames,
             o->frames);
  }
  free(view.grid);
  pp_status fs = pp_free(ctx, mem);
  if (rc == 0 && fs != PP_OK) rc = cli_call_failed("nbody", ctx, "pp_free", fs);
  return rc;
}

int pp_cli_nbody_main(int argc, char **argv) {
  nb_opts o = {16384, 1000, 0, 512, 1e-3f, 0.02f, INIT_PLUMMER, NULL, PP_BACKEND_AUTO, 1};
  bool n_given = false;
  int rc = nb_parse(argc, argv, &o, &n_given);
  if (rc >= 0) return rc;
  pp_context *ctx = NULL;
  if (cli_create("nbody", &ctx, o.backend)) return 1;
  if (!n_given && pp_backend_of(ctx) == PP_BACKEND_CPU) o.n = 2048;
  if (o.every == 0) o.every = o.steps / 20 > 0 ? o.steps / 20 : 1;
  if (o.frames && mkdir(o.frames, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "parprim nbody: cannot create '%s': %s\n", o.frames, strerror(errno));
    pp_destroy(ctx);
    return 1;
  }
  if (o.frames) { /* that the frames can be written, before the run rather than after */
    char first[4096], err[512];
    snprintf(first, sizeof first, "%s/frame_00000.png", o.frames);
    if (cli_out_check(first, err, sizeof err) != 0) {
      fprintf(stderr, "parprim nbody: --frames: %s\n", err);
      pp_destroy(ctx);
      return 1;
    }
  }
  static const char *inits[] = {"plummer", "disk", "collision"};
  printf("parprim nbody: %zu %s (%s), %zu steps of %g, softening %g, on %s\n", o.n,
         o.n == 1 ? "body" : "bodies", inits[o.init], o.steps, (double)o.dt, (double)o.softening,
         pp_backend_string(pp_backend_of(ctx)));
  float *host = malloc(7 * o.n * sizeof(float));
  if (!host) {
    fprintf(stderr, "parprim nbody: out of host memory for %zu bodies\n", o.n);
    pp_destroy(ctx);
    return 1;
  }
  make_bodies(&o, host);
  rc = simulate(ctx, &o, host);
  free(host);
  pp_destroy(ctx);
  return rc;
}
