/* api_dense.c — entry points of the dense kernels: SGEMM, 2D convolution, N-body. */
#include "check.h"

/* Elements spanned by a rows x cols matrix stored with leading dimension ld along rows
 * (row-major view): (rows - 1) * ld + cols, 0 when empty. */
static pp_status matrix_extent(pp_context *ctx, const char *fn, const char *what, size_t rows,
                               size_t cols, size_t ld, size_t *elems) {
  *elems = 0;
  if (rows == 0 || cols == 0) return PP_OK;
  size_t e = 0;
  PP_TRY(pp_check_mul(ctx, fn, what, rows - 1, ld, &e));
  PP_TRY(pp_check_add(ctx, fn, what, e, cols, &e));
  PP_TRY(pp_check_mul(ctx, fn, what, e, sizeof(float), &e)); /* bytes must fit too */
  *elems = e / sizeof(float);
  return PP_OK;
}

/* One operand as stored: `rows` lines of `cols` contiguous elements, ld apart. CBLAS
 * requires ld >= max(1, cols). */
static pp_status check_operand(pp_context *ctx, const char *fn, const char *name,
                               const char *ld_name, const void *p, size_t rows, size_t cols,
                               size_t ld, size_t *elems) {
  size_t need = cols > 1 ? cols : 1;
  if (ld < need)
    return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: %s (%zu) < %zu", fn, ld_name, ld, need);
  PP_TRY(matrix_extent(ctx, fn, name, rows, cols, ld, elems));
  return pp_check_data(ctx, fn, name, p, *elems);
}

pp_status pp_sgemm(pp_context *ctx, pp_layout layout, pp_trans ta, pp_trans tb, size_t m,
                   size_t n, size_t k, float alpha, const float *A, size_t lda, const float *B,
                   size_t ldb, float beta, float *C, size_t ldc) {
  static const char fn[] = "pp_sgemm";
  PP_TRY(pp_check_ctx(ctx));
  PP_TRY(pp_check_enum(ctx, fn, "layout", (int)layout, PP_COL_MAJOR + 1));
  PP_TRY(pp_check_enum(ctx, fn, "ta", (int)ta, PP_TRANS + 1));
  PP_TRY(pp_check_enum(ctx, fn, "tb", (int)tb, PP_TRANS + 1));
  /* Stored shapes: op(A) is m x k, op(B) is k x n, C is m x n. In row-major storage a
   * line is a row; in column-major storage a line is a column. */
  bool row = layout == PP_ROW_MAJOR;
  size_t a_rows = (ta == PP_NO_TRANS) ? m : k, a_cols = (ta == PP_NO_TRANS) ? k : m;
  size_t b_rows = (tb == PP_NO_TRANS) ? k : n, b_cols = (tb == PP_NO_TRANS) ? n : k;
  size_t ea = 0, eb = 0, ec = 0;
  PP_TRY(check_operand(ctx, fn, "A", "lda", A, row ? a_rows : a_cols, row ? a_cols : a_rows,
                       lda, &ea));
  PP_TRY(check_operand(ctx, fn, "B", "ldb", B, row ? b_rows : b_cols, row ? b_cols : b_rows,
                       ldb, &eb));
  PP_TRY(check_operand(ctx, fn, "C", "ldc", C, row ? m : n, row ? n : m, ldc, &ec));
  if (m == 0 || n == 0) return PP_OK; /* C is empty: nothing to compute or write */
  if (!ctx->ops->sgemm) return pp_not_implemented(ctx, fn);
  if (k == 0) { ea = 0; eb = 0; } /* A and B are not read */
  /* C is read (beta) and written while A and B are still being read. Extents are compared
   * whole, first element to last, so a matrix that lives in the gaps ldc leaves between
   * C's lines counts as overlapping too. */
  PP_TRY(pp_check_disjoint(ctx, fn, "C", C, ec * sizeof(float), "A", A, ea * sizeof(float)));
  PP_TRY(pp_check_disjoint(ctx, fn, "C", C, ec * sizeof(float), "B", B, eb * sizeof(float)));

  pp_args args = {0};
  pp_status st = PP_OK;
  const void *dA, *dB;
  void *dC;
  PP_STAGE(PP_ARG_IN, "A", A, ea * sizeof(float), sizeof(float), dA);
  PP_STAGE(PP_ARG_IN, "B", B, eb * sizeof(float), sizeof(float), dB);
  /* beta == 0: the kernel writes C, never reads it, so its old contents (NaN included)
   * don't matter. A staged copy still has to start from the caller's bytes when ldc leaves
   * gaps between lines: the gaps are copied back with the rest and must come back as they
   * were. */
  size_t c_lines = row ? m : n, c_line = row ? n : m;
  bool c_gaps = ldc > c_line && c_lines > 1;
  PP_STAGE(beta == 0.0f && !c_gaps ? PP_ARG_OUT : PP_ARG_INOUT, "C", C, ec * sizeof(float),
           sizeof(float), dC);
  if (st == PP_OK)
    st = ctx->ops->sgemm(ctx, layout, ta, tb, m, n, k, alpha, (const float *)dA, lda,
                         (const float *)dB, ldb, beta, (float *)dC, ldc);
  return pp_args_finish(ctx, &args, st);
}

/* The image checks shared by both convolutions; *src_elems / *dst_elems are the extents. */
static pp_status check_image(pp_context *ctx, const char *fn, const float *src, size_t width,
                             size_t height, size_t src_pitch, pp_border border, const float *dst,
                             size_t dst_pitch, size_t *src_elems, size_t *dst_elems) {
  PP_TRY(pp_check_enum(ctx, fn, "border", (int)border, PP_BORDER_MIRROR + 1));
  if (src_pitch < width)
    return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: src_pitch (%zu) < width (%zu)", fn,
                   src_pitch, width);
  if (dst_pitch < width)
    return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: dst_pitch (%zu) < width (%zu)", fn,
                   dst_pitch, width);
  PP_TRY(matrix_extent(ctx, fn, "src extent", height, width, src_pitch, src_elems));
  PP_TRY(matrix_extent(ctx, fn, "dst extent", height, width, dst_pitch, dst_elems));
  PP_TRY(pp_check_data(ctx, fn, "src", src, *src_elems));
  PP_TRY(pp_check_data(ctx, fn, "dst", dst, *dst_elems));
  /* the filter reads neighbours of every pixel, so writing in place would feed outputs back
   * in as inputs; extents run from the first pixel to the last (pitch gaps included) */
  return pp_check_disjoint(ctx, fn, "dst", dst, *dst_elems * sizeof(float), "src", src,
                           *src_elems * sizeof(float));
}

static pp_status check_filter(pp_context *ctx, const char *fn, const char *name,
                              const char *len_name, const float *f, size_t a, size_t b,
                              size_t *elems) {
  *elems = 0;
  if (a == 0 || b == 0)
    return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: %s is 0", fn, len_name);
  PP_TRY(pp_check_mul(ctx, fn, len_name, a, b, elems));
  size_t bytes = 0;
  PP_TRY(pp_check_mul(ctx, fn, len_name, *elems, sizeof(float), &bytes));
  return pp_check_ptr(ctx, fn, name, f);
}

pp_status pp_conv2d(pp_context *ctx, const float *src, size_t width, size_t height,
                    size_t src_pitch, const float *filter, size_t fw, size_t fh, pp_border border,
                    float *dst, size_t dst_pitch) {
  static const char fn[] = "pp_conv2d";
  size_t es = 0, ed = 0, ef = 0;
  PP_TRY(pp_check_ctx(ctx));
  PP_TRY(check_filter(ctx, fn, "filter", fw == 0 ? "fw" : "fh", filter, fw, fh, &ef));
  PP_TRY(check_image(ctx, fn, src, width, height, src_pitch, border, dst, dst_pitch, &es, &ed));
  PP_TRY(pp_check_disjoint(ctx, fn, "dst", dst, ed * sizeof(float), "filter", filter,
                           ef * sizeof(float)));
  if (width == 0 || height == 0) return PP_OK;
  if (!ctx->ops->conv2d) return pp_not_implemented(ctx, fn);

  pp_args args = {0};
  pp_status st = PP_OK;
  const void *dsrc, *dfilter;
  void *ddst;
  PP_STAGE(PP_ARG_IN, "src", src, es * sizeof(float), sizeof(float), dsrc);
  PP_STAGE(PP_ARG_IN, "filter", filter, ef * sizeof(float), sizeof(float), dfilter);
  /* pitched rows: the gaps between rows are the caller's and must come back unchanged */
  PP_STAGE(dst_pitch > width && height > 1 ? PP_ARG_INOUT : PP_ARG_OUT, "dst", dst,
           ed * sizeof(float), sizeof(float), ddst);
  if (st == PP_OK)
    st = ctx->ops->conv2d(ctx, (const float *)dsrc, width, height, src_pitch,
                          (const float *)dfilter, fw, fh, border, (float *)ddst, dst_pitch);
  return pp_args_finish(ctx, &args, st);
}

pp_status pp_conv2d_separable(pp_context *ctx, const float *src, size_t width, size_t height,
                              size_t src_pitch, const float *row_filter, size_t row_len,
                              const float *col_filter, size_t col_len, pp_border border,
                              float *dst, size_t dst_pitch) {
  static const char fn[] = "pp_conv2d_separable";
  size_t es = 0, ed = 0, er = 0, ec = 0;
  PP_TRY(pp_check_ctx(ctx));
  PP_TRY(check_filter(ctx, fn, "row_filter", "row_len", row_filter, row_len, 1, &er));
  PP_TRY(check_filter(ctx, fn, "col_filter", "col_len", col_filter, col_len, 1, &ec));
  PP_TRY(check_image(ctx, fn, src, width, height, src_pitch, border, dst, dst_pitch, &es, &ed));
  PP_TRY(pp_check_disjoint(ctx, fn, "dst", dst, ed * sizeof(float), "row_filter", row_filter,
                           er * sizeof(float)));
  PP_TRY(pp_check_disjoint(ctx, fn, "dst", dst, ed * sizeof(float), "col_filter", col_filter,
                           ec * sizeof(float)));
  if (width == 0 || height == 0) return PP_OK;
  if (!ctx->ops->conv2d_separable) return pp_not_implemented(ctx, fn);

  pp_args args = {0};
  pp_status st = PP_OK;
  const void *dsrc, *drow, *dcol;
  void *ddst;
  PP_STAGE(PP_ARG_IN, "src", src, es * sizeof(float), sizeof(float), dsrc);
  PP_STAGE(PP_ARG_IN, "row_filter", row_filter, er * sizeof(float), sizeof(float), drow);
  PP_STAGE(PP_ARG_IN, "col_filter", col_filter, ec * sizeof(float), sizeof(float), dcol);
  /* pitched rows: the gaps between rows are the caller's and must come back unchanged */
  PP_STAGE(dst_pitch > width && height > 1 ? PP_ARG_INOUT : PP_ARG_OUT, "dst", dst,
           ed * sizeof(float), sizeof(float), ddst);
  if (st == PP_OK)
    st = ctx->ops->conv2d_separable(ctx, (const float *)dsrc, width, height, src_pitch,
                                    (const float *)drow, row_len, (const float *)dcol, col_len,
                                    border, (float *)ddst, dst_pitch);
  return pp_args_finish(ctx, &args, st);
}

/* ---- N-body ---------------------------------------------------------------------------- */

static pp_status check_bodies(pp_context *ctx, const char *fn, const pp_bodies *b, bool velocity,
                              size_t *bytes) {
  PP_TRY(pp_check_ptr(ctx, fn, "b", b));
  PP_TRY(pp_check_mul(ctx, fn, "n * 4", b->n, sizeof(float), bytes));
  PP_TRY(pp_check_data(ctx, fn, "b->x", b->x, b->n));
  PP_TRY(pp_check_data(ctx, fn, "b->y", b->y, b->n));
  PP_TRY(pp_check_data(ctx, fn, "b->z", b->z, b->n));
  PP_TRY(pp_check_data(ctx, fn, "b->mass", b->mass, b->n));
  if (velocity) {
    PP_TRY(pp_check_data(ctx, fn, "b->vx", b->vx, b->n));
    PP_TRY(pp_check_data(ctx, fn, "b->vy", b->vy, b->n));
    PP_TRY(pp_check_data(ctx, fn, "b->vz", b->vz, b->n));
  }
  return PP_OK;
}

/* Named arrays of one call for the overlap rule: the first `outputs` of them are written,
 * the rest only read. Each written array must be apart from every other array; read-only
 * arrays may overlap each other (x == y is odd but harmless). */
typedef struct named_range {
  const char *name;
  const void *p;
  size_t bytes;
} named_range;

static pp_status check_written_apart(pp_context *ctx, const char *fn, const named_range *r,
                                     int outputs, int count) {
  for (int i = 0; i < outputs; i++)
    for (int j = 0; j < count; j++)
      if (j != i)
        PP_TRY(pp_check_disjoint(ctx, fn, r[i].name, r[i].p, r[i].bytes, r[j].name, r[j].p,
                                 r[j].bytes));
  return PP_OK;
}

static pp_status check_softening(pp_context *ctx, const char *fn, float softening) {
  if (isfinite(softening) && softening >= 0.0f) return PP_OK;
  return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: softening (%g) is not finite and >= 0", fn,
                 (double)softening);
}

static pp_status nbody_accel_check(pp_context *ctx, const char *fn, const pp_bodies *b,
                                   float softening, float *ax, float *ay, float *az,
                                   size_t *bytes) {
  PP_TRY(check_bodies(ctx, fn, b, false, bytes));
  PP_TRY(check_softening(ctx, fn, softening));
  PP_TRY(pp_check_data(ctx, fn, "ax", ax, b->n));
  PP_TRY(pp_check_data(ctx, fn, "ay", ay, b->n));
  PP_TRY(pp_check_data(ctx, fn, "az", az, b->n));
  const named_range r[] = {{"ax", ax, *bytes},      {"ay", ay, *bytes},
                           {"az", az, *bytes},      {"b->x", b->x, *bytes},
                           {"b->y", b->y, *bytes},  {"b->z", b->z, *bytes},
                           {"b->mass", b->mass, *bytes}};
  PP_TRY(check_written_apart(ctx, fn, r, 3, 7));
  if (!ctx->ops->nbody_accel) return pp_not_implemented(ctx, fn);
  return PP_OK;
}

pp_status pp_nbody_accel(pp_context *ctx, const pp_bodies *b, float softening, float *ax,
                         float *ay, float *az) {
  static const char fn[] = "pp_nbody_accel";
  size_t bytes = 0;
  PP_TRY(pp_check_ctx(ctx));
  pp_status checked = nbody_accel_check(ctx, fn, b, softening, ax, ay, az, &bytes);
  if (ctx->dist) return pp_dist_nbody_accel(ctx, checked, b, softening, ax, ay, az);
  PP_TRY(checked);

  pp_args args = {0};
  pp_status st = PP_OK;
  pp_bodies sb = {0};
  void *dax, *day, *daz;
  PP_STAGE_BODIES(PP_ARG_IN, b, bytes, sb, false);
  PP_STAGE(PP_ARG_OUT, "ax", ax, bytes, sizeof(float), dax);
  PP_STAGE(PP_ARG_OUT, "ay", ay, bytes, sizeof(float), day);
  PP_STAGE(PP_ARG_OUT, "az", az, bytes, sizeof(float), daz);
  if (st == PP_OK)
    st = ctx->ops->nbody_accel(ctx, &sb, softening, (float *)dax, (float *)day, (float *)daz);
  return pp_args_finish(ctx, &args, st);
}

static pp_status nbody_step_check(pp_context *ctx, const char *fn, const pp_bodies *b, float dt,
                                  float softening, size_t *bytes) {
  PP_TRY(check_bodies(ctx, fn, b, true, bytes));
  PP_TRY(check_softening(ctx, fn, softening));
  if (!isfinite(dt))
    return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: dt (%g) is not finite", fn, (double)dt);
  /* positions and velocities are all advanced in place; masses are only read, but a
   * written array must not change them either */
  const named_range r[] = {{"b->x", b->x, *bytes},   {"b->y", b->y, *bytes},
                           {"b->z", b->z, *bytes},   {"b->vx", b->vx, *bytes},
                           {"b->vy", b->vy, *bytes}, {"b->vz", b->vz, *bytes},
                           {"b->mass", b->mass, *bytes}};
  PP_TRY(check_written_apart(ctx, fn, r, 6, 7));
  if (!ctx->ops->nbody_step) return pp_not_implemented(ctx, fn);
  return PP_OK;
}

pp_status pp_nbody_step(pp_context *ctx, pp_bodies *b, float dt, float softening, size_t steps) {
  static const char fn[] = "pp_nbody_step";
  size_t bytes = 0;
  PP_TRY(pp_check_ctx(ctx));
  pp_status checked = nbody_step_check(ctx, fn, b, dt, softening, &bytes);
  if (ctx->dist) return pp_dist_nbody_step(ctx, checked, b, dt, softening, steps);
  PP_TRY(checked);
  if (b->n == 0 || steps == 0) return PP_OK;

  pp_args args = {0};
  pp_status st = PP_OK;
  pp_bodies sb = {0};
  PP_STAGE_BODIES(PP_ARG_INOUT, b, bytes, sb, true);
  if (st == PP_OK) st = ctx->ops->nbody_step(ctx, &sb, dt, softening, steps);
  return pp_args_finish(ctx, &args, st);
}

static pp_status nbody_energy_check(pp_context *ctx, const char *fn, const pp_bodies *b,
                                    float softening, double *kinetic, double *potential,
                                    size_t *bytes) {
  PP_TRY(check_bodies(ctx, fn, b, true, bytes));
  PP_TRY(check_softening(ctx, fn, softening));
  PP_TRY(pp_check_ptr(ctx, fn, "kinetic", kinetic));
  PP_TRY(pp_check_ptr(ctx, fn, "potential", potential));
  const named_range r[] = {{"kinetic", kinetic, sizeof *kinetic},
                           {"potential", potential, sizeof *potential},
                           {"b->x", b->x, *bytes},
                           {"b->y", b->y, *bytes},
                           {"b->z", b->z, *bytes},
                           {"b->vx", b->vx, *bytes},
                           {"b->vy", b->vy, *bytes},
                           {"b->vz", b->vz, *bytes},
                           {"b->mass", b->mass, *bytes}};
  PP_TRY(check_written_apart(ctx, fn, r, 2, 9));
  if (!ctx->ops->nbody_energy) return pp_not_implemented(ctx, fn);
  return PP_OK;
}

pp_status pp_nbody_energy(pp_context *ctx, const pp_bodies *b, float softening, double *kinetic,
                          double *potential) {
  static const char fn[] = "pp_nbody_energy";
  size_t bytes = 0;
  PP_TRY(pp_check_ctx(ctx));
  pp_status checked = nbody_energy_check(ctx, fn, b, softening, kinetic, potential, &bytes);
  if (ctx->dist) return pp_dist_nbody_energy(ctx, checked, b, softening, kinetic, potential);
  PP_TRY(checked);

  pp_args args = {0};
  pp_status st = PP_OK;
  pp_bodies sb = {0};
  void *dk, *dp;
  PP_STAGE_BODIES(PP_ARG_IN, b, bytes, sb, true);
  PP_STAGE(PP_ARG_OUT, "kinetic", kinetic, sizeof(double), sizeof(double), dk);
  PP_STAGE(PP_ARG_OUT, "potential", potential, sizeof(double), sizeof(double), dp);
  if (st == PP_OK)
    st = ctx->ops->nbody_energy(ctx, &sb, softening, (double *)dk, (double *)dp);
  return pp_args_finish(ctx, &args, st);
}
