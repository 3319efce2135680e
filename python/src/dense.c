/* dense.c — SGEMM, convolution, N-body, and the C loop that measures the binding. */
#include "module.h"

/* scipy.ndimage's names too: constant (cval 0), nearest, mirror */
static const named BORDERS[] = {{"zero", PP_BORDER_ZERO},       {"clamp", PP_BORDER_CLAMP},
                                {"mirror", PP_BORDER_MIRROR},   {"constant", PP_BORDER_ZERO},
                                {"nearest", PP_BORDER_CLAMP},   {NULL, 0}};

/* ------------------------------------------------------------------------------------ */
/* SGEMM                                                                                */
/* ------------------------------------------------------------------------------------ */

/* A 2-D float32 operand as CBLAS sees it: the row-major matrix stored (rows x cols with
 * leading dimension ld) and whether the array is that matrix's transposed view (a
 * column-major array, e.g. m.T). */
static int as_matrix(call *c, arr *a, size_t *ld, bool *transposed) {
  if (a->ndim != 2) {
    PyErr_Format(PyExc_ValueError, "parprim.%s: %s must be 2-D, not %d-D", c->fn, a->name, a->ndim);
    return -1;
  }
  int64_t r = a->shape[0], k = a->shape[1], s0 = a->strides[0], s1 = a->strides[1];
  if (r == 0 || k == 0) { /* no element: its strides mean nothing */
    *ld = (size_t)(k > 1 ? k : 1);
    *transposed = false;
    return 0;
  }
  if ((k <= 1 || s1 == 4) && (r <= 1 || (s0 % 4 == 0 && s0 / 4 >= k))) {
    *ld = r <= 1 ? (size_t)(k > 1 ? k : 1) : (size_t)(s0 / 4);
    *transposed = false;
    return 0;
  }
  if ((r <= 1 || s0 == 4) && (k <= 1 || (s1 % 4 == 0 && s1 / 4 >= r))) {
    *ld = k <= 1 ? (size_t)(r > 1 ? r : 1) : (size_t)(s1 / 4);
    *transposed = true;
    return 0;
  }
  PyErr_Format(PyExc_ValueError, "parprim.%s: %s is neither row- nor column-major%s", c->fn, a->name,
               c->copy ? "" : "; pass copy=True to let parprim copy it");
  return -1;
}

static int as_image(call *c, arr *a, size_t *pitch) {
  *pitch = ppy_arr_row_pitch(a);
  if (!*pitch) {
    PyErr_Format(PyExc_ValueError, "parprim.%s: %s must be a 2-D float32 image with compact rows", c->fn, a->name);
    return -1;
  }
  return 0;
}

/* A float32 rows x cols result written into the caller's array (out=, or sgemm's c) when
 * target is not None: an image takes any row pitch with compact rows, a matrix must be
 * row-major; *pitch is the row pitch in elements. */
static int f32_out(call *c, outbuf *o, PyObject *target, int role, const char *name, bool image, size_t rows,
                   size_t cols, size_t *pitch) {
  if (target == Py_None) return 0;
  bool transposed = false;
  if (!(o->user = ppy_call_arg_impl(c, target, role, name, CONV_NONE, ARG_ANY_LAYOUT, 0)) ||
      ppy_want_dtype(c, o->user, PP_F32) ||
      (image ? as_image(c, o->user, pitch) : as_matrix(c, o->user, pitch, &transposed)))
    return -1;
  if (!transposed && (size_t)o->user->shape[0] == rows && (size_t)o->user->shape[1] == cols) return 0;
  if (image)
    PyErr_Format(PyExc_ValueError, "parprim.%s: out must be %zu x %zu like the image", c->fn, rows, cols);
  else
    PyErr_Format(PyExc_ValueError, "parprim.%s: %s must be a row-major %zu x %zu float32 matrix", c->fn, name, rows,
                 cols);
  return -1;
}

typedef struct {
  arr *a, *b;
  pp_trans ta, tb;
  size_t m, n, k, lda, ldb, ldc;
  float alpha, beta;
  outbuf o;
} gemm_job;

static pp_status gemm_run(call *c, void *p) {
  gemm_job *j = p;
  pp_status s = ppy_out_get(c, &j->o, j->m * j->ldc * sizeof(float));
  if (s == PP_OK)
    s = pp_sgemm(c->st->ctx, PP_ROW_MAJOR, j->ta, j->tb, j->m, j->n, j->k, j->alpha, j->a->data, j->lda, j->b->data,
                 j->ldb, j->beta, j->o.ptr, j->ldc);
  return ppy_job_end(s, &j->o, NULL);
}

/* matmul: C = alpha op(A) op(B) into a new array or out=; sgemm: C = alpha op(A) op(B) + beta C in place */
static PyObject *do_gemm(const char *fn, bool inplace, PyObject *args, PyObject *kw) {
  static char *kw_mm[] = {"a", "b", "trans_a", "trans_b", "alpha", COMMON_KW, NULL};
  static char *kw_gemm[] = {"a", "b", "c", "alpha", "beta", "trans_a", "trans_b", "ctx", "stream", NULL};
  PyObject *a, *b, *cmat = Py_None, *out = Py_None, *ctx = Py_None, *stream = Py_None;
  int trans_a = 0, trans_b = 0, copy = 0;
  double alpha = 1.0, beta = 0.0;
  if (inplace ? !PyArg_ParseTupleAndKeywords(args, kw, "OOO|dd$ppOO", kw_gemm, &a, &b, &cmat, &alpha, &beta, &trans_a,
                                             &trans_b, &ctx, &stream)
              : !PyArg_ParseTupleAndKeywords(args, kw, "OO|$ppdOOOp", kw_mm, &a, &b, &trans_a, &trans_b, &alpha, &out,
                                             &ctx, &stream, &copy))
    return NULL;
  call c;
  ppy_call_init(&c, fn, ctx, stream, copy);
  gemm_job j = {.alpha = (float)alpha, .beta = (float)beta};
  PyObject *r = NULL;
  bool at, bt;
  if (!(j.a = ppy_call_arg_impl(&c, a, ROLE_IN, "a", CONV_NONE, ARG_ANY_LAYOUT, 0)) || ppy_want_dtype(&c, j.a, PP_F32)) goto done;
  if (!(j.b = ppy_call_arg_impl(&c, b, ROLE_IN, "b", CONV_NONE, ARG_ANY_LAYOUT, 0)) || ppy_want_dtype(&c, j.b, PP_F32)) goto done;
  if (as_matrix(&c, j.a, &j.lda, &at) || as_matrix(&c, j.b, &j.ldb, &bt)) goto done;
  j.m = (size_t)j.a->shape[trans_a ? 1 : 0];
  j.k = (size_t)j.a->shape[trans_a ? 0 : 1];
  j.n = (size_t)j.b->shape[trans_b ? 0 : 1];
  size_t kb = (size_t)j.b->shape[trans_b ? 1 : 0];
  j.ta = (trans_a != 0) != at ? PP_TRANS : PP_NO_TRANS;
  j.tb = (trans_b != 0) != bt ? PP_TRANS : PP_NO_TRANS;
  if (kb != j.k) {
    PyErr_Format(PyExc_ValueError, "parprim.%s: op(a) is %zu x %zu but op(b) is %zu x %zu", fn, j.m, j.k, kb, j.n);
    goto done;
  }
  PyObject *target = inplace ? cmat : out;
  j.ldc = j.n > 0 ? j.n : 1;
  if (f32_out(&c, &j.o, target, inplace ? ROLE_INOUT : ROLE_OUT, inplace ? "c" : "out", false, j.m, j.n, &j.ldc))
    goto done;
  int64_t shape[2] = {(int64_t)j.m, (int64_t)j.n};
  r = ppy_run_result(&c, gemm_run, &j, &j.o, 2, shape, PP_F32);
done:
  return ppy_call_return(&c, r);
}

/* ------------------------------------------------------------------------------------ */
/* Convolution                                                                          */
/* ------------------------------------------------------------------------------------ */

typedef struct {
  arr *src, *filter, *row, *col;
  size_t width, height, src_pitch, dst_pitch;
  pp_border border;
  outbuf o;
} conv_job;

static pp_status conv_run(call *c, void *p) {
  conv_job *j = p;
  pp_status s = ppy_out_get(c, &j->o, j->height * j->dst_pitch * sizeof(float));
  if (s != PP_OK) return s;
  if (j->filter)
    s = pp_conv2d(c->st->ctx, j->src->data, j->width, j->height, j->src_pitch, j->filter->data,
                  (size_t)j->filter->shape[1], (size_t)j->filter->shape[0], j->border, j->o.ptr, j->dst_pitch);
  else
    s = pp_conv2d_separable(c->st->ctx, j->src->data, j->width, j->height, j->src_pitch, j->row->data, j->row->n,
                            j->col->data, j->col->n, j->border, j->o.ptr, j->dst_pitch);
  return ppy_job_end(s, &j->o, NULL);
}

static PyObject *do_conv(const char *fn, bool separable, PyObject *args, PyObject *kw) {
  static char *kw_conv[] = {"image", "filter", "border", COMMON_KW, NULL};
  static char *kw_sep[] = {"image", "row_filter", "col_filter", "border", COMMON_KW, NULL};
  PyObject *image, *f1, *f2 = NULL, *border_o = NULL, *out = Py_None, *ctx = Py_None, *stream = Py_None;
  int copy = 0;
  if (separable ? !PyArg_ParseTupleAndKeywords(args, kw, "OOO|O$OOOp", kw_sep, &image, &f1, &f2, &border_o, &out, &ctx,
                                               &stream, &copy)
                : !PyArg_ParseTupleAndKeywords(args, kw, "OO|O$OOOp", kw_conv, &image, &f1, &border_o, &out, &ctx, &stream,
                                               &copy))
    return NULL;
  call c;
  ppy_call_init(&c, fn, ctx, stream, copy);
  conv_job j = {0};
  PyObject *r = NULL;
  int border = PP_BORDER_ZERO;
  if (border_o && ppy_by_name(&c, "border", border_o, BORDERS, &border)) goto done;
  j.border = (pp_border)border;
  if (!(j.src = ppy_call_arg_impl(&c, image, ROLE_IN, "image", CONV_NONE, ARG_ANY_LAYOUT, 0)) || ppy_want_dtype(&c, j.src, PP_F32) ||
      as_image(&c, j.src, &j.src_pitch))
    goto done;
  j.height = (size_t)j.src->shape[0];
  j.width = (size_t)j.src->shape[1];
  if (!separable) {
    if (!(j.filter = ppy_call_arg_impl(&c, f1, ROLE_IN, "filter", CONV_F32, 0, 0)) || ppy_want_dtype(&c, j.filter, PP_F32)) goto done;
    if (j.filter->ndim != 2) {
      PyErr_Format(PyExc_ValueError, "parprim.%s: filter must be 2-D (fh, fw), not %d-D", fn, j.filter->ndim);
      goto done;
    }
  } else {
    if (!(j.row = ppy_call_arg_impl(&c, f1, ROLE_IN, "row_filter", CONV_F32, 0, 0)) || ppy_want_dtype(&c, j.row, PP_F32)) goto done;
    if (!(j.col = ppy_call_arg_impl(&c, f2, ROLE_IN, "col_filter", CONV_F32, 0, 0)) || ppy_want_dtype(&c, j.col, PP_F32)) goto done;
    if (j.row->ndim != 1 || j.col->ndim != 1) {
      PyErr_Format(PyExc_ValueError, "parprim.%s: row_filter and col_filter must be 1-D", fn);
      goto done;
    }
  }
  j.dst_pitch = j.width > 0 ? j.width : 1;
  if (f32_out(&c, &j.o, out, ROLE_OUT, "out", true, j.height, j.width, &j.dst_pitch)) goto done;
  int64_t shape[2] = {(int64_t)j.height, (int64_t)j.width};
  r = ppy_run_result(&c, conv_run, &j, &j.o, 2, shape, PP_F32);
done:
  return ppy_call_return(&c, r);
}

/* ------------------------------------------------------------------------------------ */
/* N-body                                                                               */
/* ------------------------------------------------------------------------------------ */

typedef struct {
  int op; /* 0 accel, 1 step, 2 energy */
  pp_bodies b;
  float softening, dt;
  size_t steps;
  outbuf ax, ay, az;
  double kinetic, potential;
} nbody_job;

static pp_status nbody_run(call *c, void *p) {
  nbody_job *j = p;
  pp_context *ctx = c->st->ctx;
  pp_status s = PP_OK;
  if (j->op == 0) {
    size_t bytes = j->b.n * sizeof(float);
    s = ppy_out_get(c, &j->ax, bytes);
    if (s == PP_OK) s = ppy_out_get(c, &j->ay, bytes);
    if (s == PP_OK) s = ppy_out_get(c, &j->az, bytes);
    if (s == PP_OK) s = pp_nbody_accel(ctx, &j->b, j->softening, j->ax.ptr, j->ay.ptr, j->az.ptr);
    if (s != PP_OK) {
      ppy_out_drop(&j->ax);
      ppy_out_drop(&j->ay);
      ppy_out_drop(&j->az);
    }
  } else if (j->op == 1) {
    s = pp_nbody_step(ctx, &j->b, j->dt, j->softening, j->steps);
  } else {
    s = pp_nbody_energy(ctx, &j->b, j->softening, &j->kinetic, &j->potential);
  }
  return s;
}

PyObject *py_nbody(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"op", "x", "y", "z", "vx", "vy", "vz", "mass", "softening", "dt", "steps", "ctx", "stream", NULL};
  const char *op;
  PyObject *o[7], *ctx = Py_None, *stream = Py_None;
  double softening, dt = 0.0;
  Py_ssize_t steps = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "sOOOOOOOd|dn$OO:_nbody", kwlist, &op, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5],
                                   &o[6], &softening, &dt, &steps, &ctx, &stream))
    return NULL;
  call c;
  ppy_call_init(&c, "NBody", ctx, stream, 0);
  nbody_job j = {.softening = (float)softening, .dt = (float)dt};
  PyObject *r = NULL;
  static const char *names[7] = {"x", "y", "z", "vx", "vy", "vz", "mass"};
  if (!strcmp(op, "accel")) j.op = 0;
  else if (!strcmp(op, "step")) j.op = 1;
  else if (!strcmp(op, "energy")) j.op = 2;
  else {
    PyErr_Format(PyExc_ValueError, "parprim._nbody: unknown op '%s'", op);
    goto done;
  }
  if (steps < 0) {
    PyErr_Format(PyExc_ValueError, "parprim.NBody: steps (%zd) < 0", steps);
    goto done;
  }
  j.steps = (size_t)steps;
  float **fields[7] = {&j.b.x, &j.b.y, &j.b.z, &j.b.vx, &j.b.vy, &j.b.vz, &j.b.mass};
  for (int i = 0; i < 7; i++) {
    int role = j.op == 1 && i < 6 ? ROLE_INOUT : ROLE_IN;
    arr *a = ppy_call_arg(&c, o[i], role, names[i]);
    if (!a || ppy_want_dtype(&c, a, PP_F32)) goto done;
    if (i == 0) j.b.n = a->n;
    if (a->n != j.b.n) {
      PyErr_Format(PyExc_ValueError, "parprim.NBody: %s has %zu elements, x has %zu", names[i], a->n, j.b.n);
      goto done;
    }
    *fields[i] = a->data;
  }
  if (ppy_run(&c, nbody_run, &j)) goto done;
  if (j.op == 0) {
    int64_t n = (int64_t)j.b.n;
    PyObject *x = ppy_out_result(&c, &j.ax, 1, &n, PP_F32);
    PyObject *y = x ? ppy_out_result(&c, &j.ay, 1, &n, PP_F32) : NULL;
    PyObject *z = y ? ppy_out_result(&c, &j.az, 1, &n, PP_F32) : NULL;
    if (z) r = PyTuple_Pack(3, x, y, z);
    Py_XDECREF(x);
    Py_XDECREF(y);
    Py_XDECREF(z);
  } else if (j.op == 1) {
    r = Py_NewRef(Py_None);
  } else {
    r = Py_BuildValue("(dd)", j.kinetic, j.potential);
  }
done:
  ppy_out_drop(&j.ax);
  ppy_out_drop(&j.ay);
  ppy_out_drop(&j.az);
  ppy_call_end(&c);
  return r;
}

/* ------------------------------------------------------------------------------------ */
/* Measuring the binding itself                                                         */
/* ------------------------------------------------------------------------------------ */

typedef struct {
  arr *x;
  long iters;
  double seconds;
  outbuf o;
} bench_job;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static pp_status bench_run(call *c, void *p) {
  bench_job *j = p;
  pp_context *ctx = c->st->ctx;
  pp_status s = ppy_out_get(c, &j->o, 8);
  for (int w = 0; s == PP_OK && w < 10; w++) s = pp_reduce(ctx, PP_SUM, (pp_dtype)j->x->dtype, j->x->data, j->x->n, j->o.ptr);
  if (s == PP_OK) s = pp_synchronize(ctx);
  double t0 = now_s();
  for (long i = 0; s == PP_OK && i < j->iters; i++)
    s = pp_reduce(ctx, PP_SUM, (pp_dtype)j->x->dtype, j->x->data, j->x->n, j->o.ptr);
  if (s == PP_OK) s = pp_synchronize(ctx);
  j->seconds = now_s() - t0;
  ppy_out_drop(&j->o);
  return s;
}

PyObject *py_bench_reduce_c(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"x", "iters", "ctx", NULL};
  PyObject *x, *ctx = Py_None;
  long iters = 1000;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|l$O", kwlist, &x, &iters, &ctx)) return NULL;
  call c;
  ppy_call_init(&c, "_bench_reduce_c", ctx, Py_None, 0);
  bench_job j = {.iters = iters > 0 ? iters : 1};
  PyObject *r = NULL;
  if ((j.x = ppy_input(&c, x, "x")) && !ppy_run(&c, bench_run, &j)) r = PyFloat_FromDouble(j.seconds / (double)j.iters);
  return ppy_call_return(&c, r);
}

/* ------------------------------------------------------------------------------------ */
/* The module table's functions                                                          */
/* ------------------------------------------------------------------------------------ */

PPY_FUNCTION(matmul, do_gemm("matmul", false, args, kw))
PPY_FUNCTION(sgemm, do_gemm("sgemm", true, args, kw))
PPY_FUNCTION(conv2d, do_conv("conv2d", false, args, kw))
PPY_FUNCTION(conv2d_separable, do_conv("conv2d_separable", true, args, kw))
