/*
 * bench_conv.c — `parprim bench conv`: pp_conv2d and pp_conv2d_separable on a square f32
 * image of n pixels (default 2^26 = 8192 x 8192), filters 3, 5, 9, 15 and the separable
 * path at the same lengths and 31 (--filter F: F x F and separable F only), clamp borders
 * on CUDA; on the CPU with OpenCV in the build, each of the three borders.
 *
 * CPU peer: OpenCV's cv::filter2D and cv::sepFilter2D (bench/peer_cpu_opencv.cpp) on the
 * context's thread count, with the border mapped (mirror: BORDER_REFLECT_101, clamp:
 * BORDER_REPLICATE, zero: BORDER_CONSTANT 0); the ratio is then its time over ours. Without
 * OpenCV the CPU peer is the memcpy below, as on CUDA.
 *
 * Byte model: the image is read once and written once, 8 bytes per pixel; halo re-reads
 * come from L2 and are not counted. There is no convolution library to run beside us
 * (cuDNN is not available to the build), so the peer in the same process is the floor any
 * convolution pays: a device-to-device copy of the image (cudaMemcpyAsync; on the CPU a
 * memcpy), and the ratio is our GB/s over the copy's. Beside each row a note gives
 * Gpixels/s and fixed figures measured on an H100: PyTorch's conv2d through cuDNN, and
 * the targets set for ours.
 *
 * NPP (CUDA, when cmake/bench_peers.cmake finds it; bench/peer_npp.h): each CUDA case with
 * a clamp border gets a second row with our time from the first against
 * nppiFilterBorder_32f_C1R (2-D) or nppiFilterRowBorder_32f_C1R then
 * nppiFilterColumnBorder_32f_C1R (separable, through an intermediate image), the same sum
 * (NPP convolves with its taps reversed, so the peer reverses ours), its output checked
 * like ours. NPP documents only NPP_BORDER_REPLICATE for these filters, so the mirror and
 * zero borders have no NPP row.
 *
 * Check: the output of the last timed run is copied back and compared at a few thousand
 * pixels (every corner and edge region plus random interior ones) with a double-precision
 * evaluation of the definition.
 */
#include "bench_impl.h"

#ifdef PP_HAVE_CUDA
#include "peer_npp.h"
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONV_SEED 0xC0417ull
#define CONV_CHECK_PIXELS 4096

typedef struct conv_case {
  size_t w, h, k;
  bool separable;
  pp_border border;
  bench_ws in, out, peer_out;
  float *filter, *row, *col; /* pp_malloc'd: filter k*k, row and col k each */
} conv_case;

/* The fixed figures for an 8192^2 f32 image on an H100 (ms): cuDNN through PyTorch, and
 * our target. 0 where there is none. */
static void h100_figures(size_t k, bool separable, double *cudnn, double *target) {
  *cudnn = *target = 0;
  if (separable) {
    if (k == 15) *target = 0.45;
    return;
  }
  switch (k) {
  case 3: *cudnn = 0.613, *target = 0.25; break;
  case 5: *cudnn = 1.434, *target = 0.35; break;
  case 9: *cudnn = 3.241, *target = 0.9; break;
  case 15: *cudnn = 7.695, *target = 2.0; break;
  default: break;
  }
}

static pp_status call_conv(bench_env *env, void *arg, size_t slot) {
  conv_case *c = arg;
  const float *in = ws_slot(&c->in, slot);
  float *out = ws_slot(&c->out, slot);
  pp_status s = c->separable ? pp_conv2d_separable(env->ctx, in, c->w, c->h, c->w, c->row, c->k,
                                                   c->col, c->k, c->border, out, c->w)
                             : pp_conv2d(env->ctx, in, c->w, c->h, c->w, c->filter, c->k, c->k,
                                         c->border, out, c->w);
  if (s != PP_OK && s != PP_ERR_UNSUPPORTED)
    pp_ok(env, s, c->separable ? "pp_conv2d_separable" : "pp_conv2d");
  return s;
}

static pp_status call_conv_peer(bench_env *env, void *arg, size_t slot) {
  conv_case *c = arg;
  size_t bytes = c->w * c->h * sizeof(float);
  if (!env->cuda && bench_cpu_opencv_name()) {
    const float *in = ws_slot(&c->in, slot);
    float *out = ws_slot(&c->peer_out, slot);
    int rc = c->separable
                 ? bench_cv_sep_filter2d(in, c->w, c->h, c->w, c->row, c->k, c->col, c->k,
                                         c->border, out, c->w, env->dev.multiprocessors)
                 : bench_cv_filter2d(in, c->w, c->h, c->w, c->filter, c->k, c->k, c->border, out,
                                     c->w, env->dev.multiprocessors);
    if (rc == 0) return PP_OK;
    bench_fail(env, "OpenCV %s failed", c->separable ? "sepFilter2D" : "filter2D");
    return PP_ERR_INVALID_ARGUMENT;
  }
  if (!env->cuda) {
    memcpy(ws_slot(&c->peer_out, slot), ws_slot(&c->in, slot), bytes);
    return PP_OK;
  }
  int rc = bench_gpu_memcpy(ws_slot(&c->peer_out, slot), ws_slot(&c->in, slot), bytes,
                            env->stream);
  return gpu_ok(env, rc, "cudaMemcpyAsync") ? PP_OK : PP_ERR_DEVICE;
}

/* Coordinate i under the border rule of API.md; -1 for zero outside the image. */
static long long remapi(long long i, long long n, pp_border border) {
  if (i >= 0 && i < n) return i;
  if (border == PP_BORDER_ZERO) return -1;
  if (border == PP_BORDER_CLAMP || n == 1) return i < 0 ? 0 : n - 1;
  long long period = 2 * (n - 1), m = ((i % period) + period) % period;
  return m < n ? m : period - m;
}

static const char *border_name(pp_border b) {
  return b == PP_BORDER_ZERO ? "zero" : b == PP_BORDER_CLAMP ? "clamp" : "mirror";
}

/* Samples of the last run's output against the definition (the case's border). The tolerance
 * is that of float accumulation over the window: (taps + 16) * eps * sum |f * x|. */
static const char *conv_check(bench_env *env, conv_case *c) {
  size_t n = c->w * c->h, kk = c->k * c->k;
  float *img = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
  float *f = malloc(kk * sizeof(float)), *row = malloc(c->k * sizeof(float));
  float *col = malloc(c->k * sizeof(float));
  const char *res = "-";
  if (!img || !out || !f || !row || !col) {
    bench_note(env, "conv: no host memory for the check");
    goto done;
  }
  size_t slot = last_slot(env);
  if (!pp_ok(env, pp_copy(env->ctx, img, ws_slot(&c->in, slot), n * sizeof(float)), "pp_copy") ||
      !pp_ok(env, pp_copy(env->ctx, out, ws_slot(&c->out, slot), n * sizeof(float)), "pp_copy") ||
      !pp_ok(env, pp_copy(env->ctx, row, c->row, c->k * sizeof(float)), "pp_copy") ||
      !pp_ok(env, pp_copy(env->ctx, col, c->col, c->k * sizeof(float)), "pp_copy") ||
      !pp_ok(env, pp_copy(env->ctx, f, c->filter, kk * sizeof(float)), "pp_copy"))
    goto done;
  res = "ok";
  uint64_t s = CONV_SEED;
  long long h = (long long)c->k / 2;
  for (int i = 0; i < CONV_CHECK_PIXELS; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    long long x = (long long)((s >> 20) % c->w), y = (long long)((s >> 40) % c->h);
    if (i < 64) { /* corners and edges first */
      x = (i & 1) ? (long long)c->w - 1 - (i >> 3) : (i >> 3);
      y = (i & 2) ? (long long)c->h - 1 - ((i >> 2) & 1) * 5 : ((i >> 2) & 1) * 5;
    }
    double sum = 0, mag = 0;
    for (size_t dy = 0; dy < c->k; dy++)
      for (size_t dx = 0; dx < c->k; dx++) {
        double w = c->separable ? (double)col[dy] * row[dx] : f[dy * c->k + dx];
        long long sy = remapi(y + (long long)dy - h, (long long)c->h, c->border);
        long long sx = remapi(x + (long long)dx - h, (long long)c->w, c->border);
        double v = sy < 0 || sx < 0 ? 0.0 : img[sy * (long long)c->w + sx];
        sum += w * v;
        mag += fabs(w * v);
      }
    double got = out[(size_t)y * c->w + (size_t)x];
    if (!(fabs(got - sum) <= (double)(kk + 2 * c->k + 16) * 1.2e-7 * mag + 1e-30)) {
      bench_fail(env, "conv %zux%zu%s %s at (%lld,%lld): got %.9g, want %.9g", c->k, c->k,
                 c->separable ? " separable" : "", border_name(c->border), x, y, got, sum);
      res = "MISMATCH";
      break;
    }
  }
done:
  free(img);
  free(out);
  free(f);
  free(row);
  free(col);
  return res;
}

/* A normalised Gaussian (sigma = k / 6) as row and column, and their outer product. */
static bool conv_filters(bench_env *env, conv_case *c) {
  size_t k = c->k;
  float *row = malloc(k * sizeof(float)), *f = malloc(k * k * sizeof(float));
  bool ok = row && f;
  if (ok) {
    double sigma = k > 1 ? (double)k / 6.0 : 1.0, sum = 0;
    for (size_t i = 0; i < k; i++) {
      double d = (double)i - (double)(k / 2);
      row[i] = (float)exp(-d * d / (2 * sigma * sigma));
      sum += row[i];
    }
    for (size_t i = 0; i < k; i++) row[i] = (float)(row[i] / sum);
    for (size_t y = 0; y < k; y++)
      for (size_t x = 0; x < k; x++) f[y * k + x] = row[y] * row[x];
    ok = pp_ok(env, pp_malloc(env->ctx, (void **)&c->filter, k * k * sizeof(float)), "pp_malloc") &&
         pp_ok(env, pp_malloc(env->ctx, (void **)&c->row, k * sizeof(float)), "pp_malloc") &&
         pp_ok(env, pp_malloc(env->ctx, (void **)&c->col, k * sizeof(float)), "pp_malloc") &&
         pp_ok(env, pp_copy(env->ctx, c->filter, f, k * k * sizeof(float)), "pp_copy") &&
         pp_ok(env, pp_copy(env->ctx, c->row, row, k * sizeof(float)), "pp_copy") &&
         pp_ok(env, pp_copy(env->ctx, c->col, row, k * sizeof(float)), "pp_copy");
  } else {
    bench_fail(env, "conv: out of host memory");
  }
  free(row);
  free(f);
  return ok;
}

static void conv_teardown(bench_env *env, conv_case *c) {
  bench_ws *const ws[] = {&c->in, &c->out, &c->peer_out};
  void **const small[] = {(void **)&c->filter, (void **)&c->row, (void **)&c->col};
  ws_free_list(env, ws, COUNT_OF(ws));
  free_small_list(env, small, COUNT_OF(small));
}

#ifdef PP_HAVE_CUDA
static pp_status call_npp(bench_env *env, void *arg, size_t slot) {
  conv_case *c = arg;
  const float *in = ws_slot(&c->in, slot);
  float *out = ws_slot(&c->peer_out, slot);
  int rc = c->separable ? bench_npp_sep_filter(in, c->w, c->h, c->w, out, c->w, env->stream)
                        : bench_npp_filter(in, c->w, c->h, c->w, out, c->w, env->stream);
  if (rc != 0) {
    bench_fail(env, "NPP: %s", bench_npp_error());
    return PP_ERR_DEVICE;
  }
  return PP_OK;
}

/* The NPP row of a CUDA case: our time from the first row against NPP's filter on the same
 * images, NPP's output checked like ours. Returns 1 after a failure. */
static int conv_npp_row(bench_env *env, conv_case *c, const bench_row *ours, pp_border border) {
  if (!bench_npp_name() || !bench_npp_border_supported(border)) return 0;
  bench_row r = *ours;
  r.peer = c->separable ? "NPP Row+ColumnBorder" : "NPP FilterBorder";
  r.check = "-";
  int rc = c->separable ? bench_npp_sep_prepare(c->row, c->k, c->col, c->k, c->w, c->h, border,
                                                env->stream)
                        : bench_npp_filter_prepare(c->filter, c->k, c->k, border, env->stream);
  if (rc != 0) {
    bench_fail(env, "NPP: %s", bench_npp_error());
    return 1;
  }
  if (bench_time(env, call_npp, c, &r.peer_ms) != PP_OK) return 1;
  /* conv_check reads the last slot of c->out: point it at NPP's output for the check */
  bench_ws ours_out = c->out;
  c->out = c->peer_out;
  r.check = conv_check(env, c);
  c->out = ours_out;
  print_row(env, &r);
  bench_note(env, "  %s %s: %.4f ms, %.3g Gpixels/s; target: ratio >= 1.0", bench_npp_name(),
             r.peer, r.peer_ms, (double)(c->w * c->h) / (r.peer_ms * 1e6));
  return strcmp(r.check, "MISMATCH") == 0;
}
#endif

static int conv_run_case(bench_env *env, size_t side, size_t k, bool separable, pp_border border) {
  conv_case c = {.w = side, .h = side, .k = k, .separable = separable, .border = border};
  size_t bytes = side * side * sizeof(float);
  char op[40];
  if (separable)
    snprintf(op, sizeof op, "sep%zu %s", k, border_name(border));
  else
    snprintf(op, sizeof op, "%zux%zu %s", k, k, border_name(border));
  int failed = 0;
  if (!fits(env, "conv", side * side, 3 * round_up(bytes, SLOT_ALIGN) * (bytes < ROTATE_BYTES ? 2 : 1)))
    return 0;
  alloc_result a = ws_alloc(env, &c.in, bytes, PP_F32, CONV_SEED);
  if (a == ALLOC_OK) a = ws_alloc(env, &c.out, bytes, PP_F32, CONV_SEED + 1);
  if (a == ALLOC_OK) a = ws_alloc(env, &c.peer_out, bytes, PP_F32, CONV_SEED + 2);
  if (a != ALLOC_OK || !conv_filters(env, &c)) {
    conv_teardown(env, &c);
    return a == ALLOC_SKIP ? 0 : 1;
  }
  bench_row r = {.prim = separable ? "conv_sep" : "conv", .op = op, .t = PP_F32, .n = side * side,
                 .bytes_model = "reads+writes 8*n", .check = "-",
                 .peer = env->cuda ? "cudaMemcpy" : bench_cpu_opencv_name() ? "OpenCV" : "memcpy",
                 .same_work = !env->cuda && bench_cpu_opencv_name()};
  r.bytes = r.peer_bytes = 8.0 * (double)(side * side);
  pp_status s = bench_time(env, call_conv, &c, &r.ms);
  if (s == PP_ERR_UNSUPPORTED) {
    bench_note(env, "conv %s: not implemented on the %s backend", op,
               pp_backend_string(pp_backend_of(env->ctx)));
  } else if (s == PP_OK && bench_time(env, call_conv_peer, &c, &r.peer_ms) == PP_OK) {
    r.check = conv_check(env, &c);
    print_row(env, &r);
    double cudnn, target;
    h100_figures(k, separable, &cudnn, &target);
    char extra[160] = "";
    if (env->cuda && side == 8192 && (cudnn > 0 || target > 0))
      snprintf(extra, sizeof extra, "; H100: %s%.3f ms, target <= %.2f ms",
               cudnn > 0 ? "cuDNN " : "", cudnn > 0 ? cudnn : target, target);
    if (env->cuda && side == 8192 && cudnn == 0 && target > 0)
      snprintf(extra, sizeof extra, "; H100 target <= %.2f ms", target);
    if (r.same_work)
      bench_note(env, "  conv %s %zux%zu: %.4f ms, %.3g Gpixels/s; %s %.3g Gpixels/s", op, side,
                 side, r.ms, (double)(side * side) / (r.ms * 1e6), bench_cpu_opencv_name(),
                 (double)(side * side) / (r.peer_ms * 1e6));
    else
      bench_note(env, "  conv %s %zux%zu: %.4f ms, %.3g Gpixels/s, %.2fx the copy's time%s", op,
                 side, side, r.ms, (double)(side * side) / (r.ms * 1e6), r.ms / r.peer_ms, extra);
    failed = strcmp(r.check, "MISMATCH") == 0;
#ifdef PP_HAVE_CUDA
    if (env->cuda) failed |= conv_npp_row(env, &c, &r, border);
#endif
  } else {
    failed = 1;
  }
  conv_teardown(env, &c);
  return failed;
}

int bench_run_conv(bench_env *env, const size_t *sizes, int nsizes) {
#ifdef PP_HAVE_CUDA
  if (env->cuda && !bench_npp_name())
    bench_note(env, "peer NPP missing (no NPP rows): %s", bench_npp_error());
#endif
  static const size_t default_k[] = {3, 5, 9, 15}, default_sep[] = {3, 5, 9, 15, 31};
  size_t ks[4], nk = 0, seps[5], nsep = 0;
  if (env->o->filter) {
    ks[nk++] = env->o->filter;
    seps[nsep++] = env->o->filter;
  } else {
    for (; nk < 4; nk++) ks[nk] = default_k[nk];
    for (; nsep < 5; nsep++) seps[nsep] = default_sep[nsep];
  }
  /* the three borders where OpenCV can be run beside us; clamp alone otherwise */
  static const pp_border all_borders[] = {PP_BORDER_MIRROR, PP_BORDER_CLAMP, PP_BORDER_ZERO};
  const bool cv = !env->cuda && bench_cpu_opencv_name();
  const size_t nb = cv ? 3 : 1;
  const pp_border *borders = cv ? all_borders : all_borders + 1;
  if (!env->cuda && !cv)
    bench_note(env, "conv: OpenCV is not in this build; the CPU peer is a memcpy of the image");
  int failed = 0;
  for (int i = 0; i < nsizes; i++) {
    size_t side = (size_t)sqrt((double)sizes[i]);
    while (side * side > sizes[i]) side--;
    while ((side + 1) * (side + 1) <= sizes[i]) side++;
    if (side == 0) continue;
    for (size_t b = 0; b < nb; b++)
      for (size_t j = 0; j < nk; j++) failed |= conv_run_case(env, side, ks[j], false, borders[b]);
    /* separable at every length: where it overtakes the 2D path */
    for (size_t b = 0; b < nb; b++)
      for (size_t j = 0; j < nsep; j++) failed |= conv_run_case(env, side, seps[j], true, borders[b]);
  }
#ifdef PP_HAVE_CUDA
  if (env->cuda) bench_npp_release();
#endif
  return failed;
}
