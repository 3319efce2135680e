/* primitives.c — reduce, scan, select, sort, merge, top-k and histograms: argument checks,
 * then one job run on the context. */
#include "module.h"

/* ------------------------------------------------------------------------------------ */
/* Enumerations by name                                                                 */
/* ------------------------------------------------------------------------------------ */

int ppy_by_name(call *c, const char *what, PyObject *o, const named *table, int *out) {
  const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
  if (s)
    for (const named *t = table; t->name; t++)
      if (!strcmp(s, t->name)) {
        *out = t->value;
        return 0;
      }
  PyObject *choices = PyList_New(0);
  for (const named *t = table; choices && t->name; t++) {
    PyObject *n = PyUnicode_FromString(t->name);
    if (!n || PyList_Append(choices, n)) Py_CLEAR(choices);
    Py_XDECREF(n);
  }
  if (choices) PyErr_Format(PyExc_ValueError, "parprim.%s: %s must be one of %R, not %R", c->fn, what, choices, o);
  Py_XDECREF(choices);
  return -1;
}

static const named OPS[] = {{"sum", PP_SUM}, {"min", PP_MIN}, {"max", PP_MAX}, {NULL, 0}};
static const named CMPS[] = {{">", PP_GT}, {">=", PP_GE}, {"<", PP_LT}, {"<=", PP_LE}, {"==", PP_EQ}, {"!=", PP_NE},
                             {"gt", PP_GT}, {"ge", PP_GE}, {"lt", PP_LT}, {"le", PP_LE}, {"eq", PP_EQ}, {"ne", PP_NE},
                             {NULL, 0}};
static const named ALGOS[] = {{"auto", PP_SORT_AUTO},   {"radix", PP_SORT_RADIX}, {"merge", PP_SORT_MERGE},
                              {"sample", PP_SORT_SAMPLE}, {"quick", PP_SORT_QUICK}, {NULL, 0}};

/* a Python number as one element of t, exactly (64-bit keys compare exactly) */
static int scalar_of(call *c, PyObject *v, int t, void *buf) {
  if (t == PP_F32 || t == PP_F64) {
    double d = PyFloat_AsDouble(v);
    if (d == -1.0 && PyErr_Occurred()) return -1;
    if (t == PP_F32) *(float *)buf = (float)d;
    else *(double *)buf = d;
    return 0;
  }
  PyObject *i = PyNumber_Index(v);
  if (!i) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "parprim.%s: value must be an integer for %s data, not %.100s", c->fn, ppy_dt_name(t),
                 Py_TYPE(v)->tp_name);
    return -1;
  }
  int overflow = 0;
  long long s = PyLong_AsLongLongAndOverflow(i, &overflow);
  unsigned long long u = 0;
  bool neg = overflow < 0 || (!overflow && s < 0);
  if (overflow > 0) {
    u = PyLong_AsUnsignedLongLong(i);
    if (PyErr_Occurred()) PyErr_Clear(), u = 0, overflow = 2;
  } else if (!neg) {
    u = (unsigned long long)s;
  }
  Py_DECREF(i);
  bool ok;
  switch (t) {
  case PP_U8: ok = !neg && overflow != 2 && u <= UINT8_MAX; *(uint8_t *)buf = (uint8_t)u; break;
  case PP_U32: ok = !neg && overflow != 2 && u <= UINT32_MAX; *(uint32_t *)buf = (uint32_t)u; break;
  case PP_U64: ok = !neg && overflow != 2; *(uint64_t *)buf = u; break;
  case PP_I32: ok = !overflow && s >= INT32_MIN && s <= INT32_MAX; *(int32_t *)buf = (int32_t)s; break;
  case PP_I64: ok = !overflow; *(int64_t *)buf = s; break;
  default: ok = false;
  }
  if (!ok) {
    PyErr_Format(PyExc_ValueError, "parprim.%s: value %R is out of range for %s", c->fn, v, ppy_dt_name(t));
    return -1;
  }
  return 0;
}

/* ------------------------------------------------------------------------------------ */
/* Reduce                                                                               */
/* ------------------------------------------------------------------------------------ */

typedef struct {
  pp_op op;
  arr *x;
  outbuf o, idx;
} reduce_job;

static pp_status reduce_run(call *c, void *p) {
  reduce_job *j = p;
  pp_status s = ppy_out_get(c, &j->o, j->x->itemsize);
  if (s == PP_OK) s = pp_reduce(c->st->ctx, j->op, (pp_dtype)j->x->dtype, j->x->data, j->x->n, j->o.ptr);
  return ppy_job_end(s, &j->o, NULL);
}

static PyObject *do_reduce(const char *fn, int op, PyObject *args, PyObject *kw, bool op_arg) {
  static char *kw1[] = {"x", COMMON_KW, NULL};
  static char *kw2[] = {"x", "op", COMMON_KW, NULL};
  PyObject *x, *op_o = NULL, *out = Py_None, *ctx = Py_None, *stream = Py_None;
  int copy = 0;
  if (op_arg ? !PyArg_ParseTupleAndKeywords(args, kw, "O|O$OOOp", kw2, &x, &op_o, &out, &ctx, &stream, &copy)
             : !PyArg_ParseTupleAndKeywords(args, kw, "O|$OOOp", kw1, &x, &out, &ctx, &stream, &copy))
    return NULL;
  call c;
  ppy_call_init(&c, fn, ctx, stream, copy);
  reduce_job j = {.op = (pp_op)op};
  PyObject *r = NULL;
  if (op_o && ppy_by_name(&c, "op", op_o, OPS, &op)) goto done;
  j.op = (pp_op)op;
  if (!(j.x = ppy_input(&c, x, "x"))) goto done;
  if (ppy_user_out(&c, &j.o, out, j.x->dtype, 1)) goto done;
  r = ppy_run_result(&c, reduce_run, &j, &j.o, 0, NULL, j.x->dtype);
done:
  return ppy_call_return(&c, r);
}

static pp_status argreduce_run(call *c, void *p) {
  reduce_job *j = p;
  pp_status s = ppy_out_get(c, &j->o, j->x->itemsize);
  if (s == PP_OK) s = ppy_out_get(c, &j->idx, sizeof(uint64_t));
  if (s == PP_OK)
    s = pp_argreduce(c->st->ctx, j->op, (pp_dtype)j->x->dtype, j->x->data, j->x->n, j->o.ptr, (uint64_t *)j->idx.ptr);
  return ppy_job_end(s, &j->o, &j->idx);
}

static PyObject *do_argreduce(const char *fn, int op, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"x", "return_value", "ctx", "stream", "copy", NULL};
  PyObject *x, *ctx = Py_None, *stream = Py_None;
  int copy = 0, return_value = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$pOOp", kwlist, &x, &return_value, &ctx, &stream, &copy)) return NULL;
  call c;
  ppy_call_init(&c, fn, ctx, stream, copy);
  reduce_job j = {.op = (pp_op)op};
  PyObject *r = NULL;
  if (!(j.x = ppy_input(&c, x, "x"))) goto done;
  if (ppy_run(&c, argreduce_run, &j)) goto done;
  PyObject *value = ppy_out_result(&c, &j.o, 0, NULL, j.x->dtype);
  PyObject *index = ppy_out_result(&c, &j.idx, 0, NULL, PP_I64);
  if (!value || !index) {
    Py_XDECREF(value);
    Py_XDECREF(index);
    goto done;
  }
  if (return_value) {
    r = PyTuple_Pack(2, value, index);
    Py_DECREF(index);
  } else {
    r = index;
  }
  Py_DECREF(value);
done:
  return ppy_call_return(&c, r);
}

/* ------------------------------------------------------------------------------------ */
/* Scan                                                                                 */
/* ------------------------------------------------------------------------------------ */

typedef struct {
  pp_op op;
  bool inclusive;
  arr *x;
  outbuf o;
} scan_job;

static pp_status scan_run(call *c, void *p) {
  scan_job *j = p;
  pp_status s = ppy_out_get(c, &j->o, j->x->n * j->x->itemsize);
  if (s == PP_OK)
    s = pp_scan(c->st->ctx, j->op, (pp_dtype)j->x->dtype, j->x->data, j->o.ptr, j->x->n, j->inclusive);
  return ppy_job_end(s, &j->o, NULL);
}

static PyObject *do_scan(const char *fn, PyObject *args, PyObject *kw, bool cumsum) {
  static char *kw_scan[] = {"x", "op", "inclusive", COMMON_KW, NULL};
  static char *kw_cumsum[] = {"x", "exclusive", COMMON_KW, NULL};
  PyObject *x, *op_o = NULL, *out = Py_None, *ctx = Py_None, *stream = Py_None;
  int copy = 0, inclusive = 1, exclusive = 0;
  if (cumsum ? !PyArg_ParseTupleAndKeywords(args, kw, "O|$pOOOp", kw_cumsum, &x, &exclusive, &out, &ctx, &stream, &copy)
             : !PyArg_ParseTupleAndKeywords(args, kw, "O|O$pOOOp", kw_scan, &x, &op_o, &inclusive, &out, &ctx, &stream, &copy))
    return NULL;
  call c;
  ppy_call_init(&c, fn, ctx, stream, copy);
  int op = PP_SUM;
  scan_job j = {.inclusive = cumsum ? !exclusive : inclusive != 0};
  PyObject *r = NULL;
  if (op_o && ppy_by_name(&c, "op", op_o, OPS, &op)) goto done;
  j.op = (pp_op)op;
  if (!(j.x = ppy_input(&c, x, "x"))) goto done;
  if (ppy_user_out(&c, &j.o, out, j.x->dtype, j.x->n)) goto done;
  r = ppy_run_result(&c, scan_run, &j, &j.o, j.x->ndim, j.x->shape, j.x->dtype);
done:
  return ppy_call_return(&c, r);
}

/* ------------------------------------------------------------------------------------ */
/* Select, select_flagged, partition                                                    */
/* ------------------------------------------------------------------------------------ */

typedef struct {
  int kind; /* 0 select, 1 flagged, 2 partition */
  pp_cmp cmp;
  uint64_t value[1];
  arr *x, *flags;
  outbuf o;
  uint64_t count;
} select_job;

static pp_status select_run(call *c, void *p) {
  select_job *j = p;
  pp_context *ctx = c->st->ctx;
  pp_status s = ppy_out_get(c, &j->o, j->x->n * j->x->itemsize);
  if (s != PP_OK) return s;
  if (j->kind == 0)
    s = pp_select(ctx, (pp_dtype)j->x->dtype, j->x->data, j->x->n, j->cmp, j->value, j->o.ptr, &j->count);
  else if (j->kind == 1)
    s = pp_select_flagged(ctx, j->x->itemsize, j->x->data, j->flags->data, j->x->n, j->o.ptr, &j->count);
  else
    s = pp_partition(ctx, (pp_dtype)j->x->dtype, j->x->data, j->x->n, j->cmp, j->value, j->o.ptr, &j->count);
  return ppy_job_end(s, &j->o, NULL);
}

static PyObject *do_select(const char *fn, int kind, PyObject *args, PyObject *kw) {
  static char *kw_sel[] = {"x", "cmp", "value", "ctx", "stream", "copy", NULL};
  static char *kw_flag[] = {"x", "flags", "ctx", "stream", "copy", NULL};
  static char *kw_part[] = {"x", "cmp", "value", COMMON_KW, NULL};
  PyObject *x, *cmp_o = NULL, *value = NULL, *flags = NULL, *out = Py_None, *ctx = Py_None, *stream = Py_None;
  int copy = 0, ok;
  if (kind == 0) ok = PyArg_ParseTupleAndKeywords(args, kw, "OOO|$OOp", kw_sel, &x, &cmp_o, &value, &ctx, &stream, &copy);
  else if (kind == 1) ok = PyArg_ParseTupleAndKeywords(args, kw, "OO|$OOp", kw_flag, &x, &flags, &ctx, &stream, &copy);
  else ok = PyArg_ParseTupleAndKeywords(args, kw, "OOO|$OOOp", kw_part, &x, &cmp_o, &value, &out, &ctx, &stream, &copy);
  if (!ok) return NULL;
  call c;
  ppy_call_init(&c, fn, ctx, stream, copy);
  select_job j = {.kind = kind};
  PyObject *r = NULL;
  int cmp = PP_GT;
  if (cmp_o && ppy_by_name(&c, "cmp", cmp_o, CMPS, &cmp)) goto done;
  j.cmp = (pp_cmp)cmp;
  if (!(j.x = ppy_input(&c, x, "x"))) goto done;
  if (value && scalar_of(&c, value, j.x->dtype, j.value)) goto done;
  if (flags) {
    if (!(j.flags = ppy_call_arg(&c, flags, ROLE_IN, "flags"))) goto done;
    if (j.flags->dtype != PP_U8 && j.flags->dtype != DT_BOOL) {
      PyErr_Format(PyExc_TypeError, "parprim.%s: flags must be bool or uint8, not %s", fn, ppy_dt_name(j.flags->dtype));
      goto done;
    }
    if (j.flags->n != j.x->n) {
      PyErr_Format(PyExc_ValueError, "parprim.%s: flags has %zu elements, x has %zu", fn, j.flags->n, j.x->n);
      goto done;
    }
  }
  if (ppy_user_out(&c, &j.o, out, j.x->dtype, j.x->n)) goto done;
  if (ppy_run(&c, select_run, &j)) goto done;
  if (kind == 2) {
    int64_t n = (int64_t)j.x->n;
    PyObject *o = ppy_out_result(&c, &j.o, 1, &n, j.x->dtype);
    if (o) r = Py_BuildValue("(NK)", o, (unsigned long long)j.count);
  } else {
    int64_t n = (int64_t)j.count;
    r = ppy_out_result(&c, &j.o, 1, &n, j.x->dtype);
  }
done:
  return ppy_call_return_outs(&c, r, &j.o, NULL);
}

/* ------------------------------------------------------------------------------------ */
/* Sort, argsort, merge                                                                 */
/* ------------------------------------------------------------------------------------ */

/* 0, 1, ..., n-1 in 4- or 8-byte unsigned words. On the device: a 1, doubled by copies to
 * n ones, then an exclusive scan; every step is queued on the stream, nothing waits. */
static pp_status fill_iota(call *c, void *ptr, size_t n, size_t size) {
  if (n == 0) return PP_OK;
  if (c->out_host) {
    if (size == 8)
      for (size_t i = 0; i < n; i++) ((uint64_t *)ptr)[i] = i;
    else
      for (size_t i = 0; i < n; i++) ((uint32_t *)ptr)[i] = (uint32_t)i;
    return PP_OK;
  }
  pp_context *ctx = c->st->ctx;
  uint64_t one64 = 1;
  uint32_t one32 = 1;
  pp_status s = pp_copy(ctx, ptr, size == 8 ? (void *)&one64 : (void *)&one32, size);
  for (size_t k = 1; s == PP_OK && k < n; k *= 2) {
    size_t len = n - k < k ? n - k : k;
    s = pp_copy(ctx, (char *)ptr + k * size, ptr, len * size);
  }
  if (s == PP_OK) s = pp_scan(ctx, PP_SUM, size == 8 ? PP_U64 : PP_U32, ptr, ptr, n, false);
  return s;
}

typedef struct {
  arr *x, *values;
  outbuf keys, vals;
  pp_sort_opts opts;
  bool indices;
  size_t index_size;
} sort_job;

/* [a, a + na) and [b, b + nb) share no byte. */
static bool apart(const void *a, size_t na, const void *b, size_t nb) {
  const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return x + na <= y || y + nb <= x;
}

static pp_status sort_run(call *c, void *p) {
  sort_job *j = p;
  pp_context *ctx = c->st->ctx;
  size_t n = j->x->n;
  size_t vsize = j->values ? j->values->itemsize : j->indices ? j->index_size : 0;
  pp_status s = ppy_out_get(c, &j->keys, n * j->x->itemsize);
  if (s == PP_OK && vsize) s = ppy_out_get(c, &j->vals, n * vsize);
  if (s == PP_OK && j->indices && j->keys.ptr != j->x->data) /* out of place, positions made by the sort */
    return ppy_job_end(pp_argsort(ctx, (pp_dtype)j->x->dtype, j->x->data, n, j->keys.ptr,
                                  vsize == 8 ? PP_I64 : PP_I32, j->vals.ptr, &j->opts),
                       &j->keys, &j->vals);
  const size_t kb = n * j->x->itemsize, vb = n * vsize;
  if (s == PP_OK && !j->indices && !c->st->dist && apart(j->keys.ptr, kb, j->x->data, kb) &&
      (!j->values || (apart(j->vals.ptr, vb, j->values->data, vb) && apart(j->vals.ptr, vb, j->x->data, kb) &&
                      apart(j->keys.ptr, kb, j->values->data, vb))))
    /* into new buffers: the inputs are read once, by the sort's first pass */
    return ppy_job_end(pp_sort_copy(ctx, (pp_dtype)j->x->dtype, j->x->data, j->values ? j->values->data : NULL,
                                    vsize, n, j->keys.ptr, j->values ? j->vals.ptr : NULL, &j->opts),
                       &j->keys, &j->vals);
  if (s == PP_OK) s = pp_copy(ctx, j->keys.ptr, j->x->data, kb);
  if (s == PP_OK && j->values) s = pp_copy(ctx, j->vals.ptr, j->values->data, vb);
  if (s == PP_OK && j->indices) s = fill_iota(c, j->vals.ptr, n, vsize);
  if (s == PP_OK) s = pp_sort(ctx, (pp_dtype)j->x->dtype, j->keys.ptr, vsize ? j->vals.ptr : NULL, vsize, n, &j->opts);
  return ppy_job_end(s, &j->keys, &j->vals);
}

PyObject *py_sort(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"x", "values", "descending", "algorithm", "return_indices", "index_dtype", "out", "values_out",
                           "ctx", "stream", "copy", NULL};
  PyObject *x, *values = Py_None, *algo_o = NULL, *index_dtype = NULL, *out = Py_None, *values_out = Py_None;
  PyObject *ctx = Py_None, *stream = Py_None;
  int descending = 0, return_indices = 0, copy = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$OpOpOOOOOp", kwlist, &x, &values, &descending, &algo_o, &return_indices,
                                   &index_dtype, &out, &values_out, &ctx, &stream, &copy))
    return NULL;
  call c;
  ppy_call_init(&c, "sort", ctx, stream, copy);
  sort_job j = {.opts = {descending ? PP_DESCENDING : PP_ASCENDING, PP_SORT_AUTO}, .indices = return_indices != 0,
                .index_size = 8};
  PyObject *r = NULL;
  int algo = PP_SORT_AUTO;
  if (algo_o && ppy_by_name(&c, "algorithm", algo_o, ALGOS, &algo)) goto done;
  j.opts.algo = (pp_sort_algo)algo;
  if (index_dtype) {
    static const named IDX[] = {{"int64", 8}, {"int32", 4}, {NULL, 0}};
    int sz;
    if (ppy_by_name(&c, "index_dtype", index_dtype, IDX, &sz)) goto done;
    j.index_size = (size_t)sz;
  }
  if (values != Py_None && return_indices) {
    PyErr_SetString(PyExc_ValueError, "parprim.sort: values= and return_indices=True exclude each other");
    goto done;
  }
  if (!(j.x = ppy_input(&c, x, "x"))) goto done;
  if (j.indices && j.index_size == 4 && j.x->n > (size_t)INT32_MAX) {
    PyErr_Format(PyExc_ValueError, "parprim.sort: %zu elements do not fit int32 indices", j.x->n);
    goto done;
  }
  if (values != Py_None) {
    if (!(j.values = ppy_call_arg(&c, values, ROLE_IN, "values"))) goto done;
    if (j.values->itemsize != 4 && j.values->itemsize != 8) {
      PyErr_Format(PyExc_TypeError, "parprim.sort: values must have 4- or 8-byte elements, not %s", ppy_dt_name(j.values->dtype));
      goto done;
    }
    if (j.values->n != j.x->n) {
      PyErr_Format(PyExc_ValueError, "parprim.sort: values has %zu elements, x has %zu", j.values->n, j.x->n);
      goto done;
    }
  }
  if (ppy_user_out(&c, &j.keys, out, j.x->dtype, j.x->n)) goto done;
  if (values_out != Py_None) {
    if (!j.values) {
      PyErr_SetString(PyExc_ValueError, "parprim.sort: values_out= needs values=");
      goto done;
    }
    if (!(j.vals.user = ppy_call_arg(&c, values_out, ROLE_OUT, "values_out")) ||
        ppy_check_out(&c, j.vals.user, j.values->dtype, j.x->n))
      goto done;
  }
  if (ppy_run(&c, sort_run, &j)) goto done;
  int64_t n = (int64_t)j.x->n;
  PyObject *keys = ppy_out_result(&c, &j.keys, 1, &n, j.x->dtype);
  if (!keys || (!j.values && !j.indices)) {
    r = keys;
    goto done;
  }
  int vdt = j.values ? j.values->dtype : j.index_size == 8 ? PP_I64 : PP_I32;
  PyObject *vals = ppy_out_result(&c, &j.vals, 1, &n, vdt);
  r = vals ? PyTuple_Pack(2, keys, vals) : NULL;
  Py_DECREF(keys);
  Py_XDECREF(vals);
done:
  return ppy_call_return_outs(&c, r, &j.keys, &j.vals);
}

typedef struct {
  arr *a, *b;
  outbuf o;
  pp_order order;
} merge_job;

static pp_status merge_run(call *c, void *p) {
  merge_job *j = p;
  pp_status s = ppy_out_get(c, &j->o, (j->a->n + j->b->n) * j->a->itemsize);
  if (s == PP_OK)
    s = pp_merge(c->st->ctx, (pp_dtype)j->a->dtype, j->a->data, j->a->n, j->b->data, j->b->n, j->o.ptr, j->order);
  return ppy_job_end(s, &j->o, NULL);
}

PyObject *py_merge(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"a", "b", "descending", COMMON_KW, NULL};
  PyObject *a, *b, *out = Py_None, *ctx = Py_None, *stream = Py_None;
  int descending = 0, copy = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|$pOOOp", kwlist, &a, &b, &descending, &out, &ctx, &stream, &copy))
    return NULL;
  call c;
  ppy_call_init(&c, "merge", ctx, stream, copy);
  merge_job j = {.order = descending ? PP_DESCENDING : PP_ASCENDING};
  PyObject *r = NULL;
  if (!(j.a = ppy_input(&c, a, "a"))) goto done;
  if (!(j.b = ppy_call_arg(&c, b, ROLE_IN, "b")) || ppy_want_dtype(&c, j.b, j.a->dtype)) goto done;
  if (ppy_user_out(&c, &j.o, out, j.a->dtype, j.a->n + j.b->n)) goto done;
  int64_t n = (int64_t)(j.a->n + j.b->n);
  r = ppy_run_result(&c, merge_run, &j, &j.o, 1, &n, j.a->dtype);
done:
  return ppy_call_return(&c, r);
}

/* ------------------------------------------------------------------------------------ */
/* Top-k                                                                                */
/* ------------------------------------------------------------------------------------ */

typedef struct {
  arr *x;
  size_t k, rows, cols;
  bool largest, by_rows;
  outbuf vals, idx;
} topk_job;

static pp_status topk_run(call *c, void *p) {
  topk_job *j = p;
  size_t count = j->by_rows ? j->rows * j->k : j->k;
  pp_status s = ppy_out_get(c, &j->vals, count * j->x->itemsize);
  if (s == PP_OK) s = ppy_out_get(c, &j->idx, count * sizeof(uint64_t));
  if (s == PP_OK) {
    if (j->by_rows)
      s = pp_topk_rows(c->st->ctx, (pp_dtype)j->x->dtype, j->x->data, j->rows, j->cols, j->k, j->largest, j->vals.ptr,
                       (uint64_t *)j->idx.ptr);
    else
      s = pp_topk(c->st->ctx, (pp_dtype)j->x->dtype, j->x->data, j->x->n, j->k, j->largest, j->vals.ptr,
                  (uint64_t *)j->idx.ptr);
  }
  return ppy_job_end(s, &j->vals, &j->idx);
}

PyObject *py_topk(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"x", "k", "largest", "dim", "ctx", "stream", "copy", NULL};
  PyObject *x, *ctx = Py_None, *stream = Py_None;
  Py_ssize_t k;
  int largest = 1, copy = 0, dim = -1;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "On|$piOOp", kwlist, &x, &k, &largest, &dim, &ctx, &stream, &copy)) return NULL;
  call c;
  ppy_call_init(&c, "topk", ctx, stream, copy);
  topk_job j = {.largest = largest != 0};
  PyObject *r = NULL;
  if (k < 0) {
    PyErr_Format(PyExc_ValueError, "parprim.topk: k (%zd) < 0", k);
    goto done;
  }
  j.k = (size_t)k;
  if (!(j.x = ppy_input(&c, x, "x"))) goto done;
  if (j.x->ndim == 2) {
    if (dim != -1 && dim != 1) {
      PyErr_Format(PyExc_ValueError, "parprim.topk: dim must be the last one (-1 or 1), not %d", dim);
      goto done;
    }
    j.by_rows = true;
    j.rows = (size_t)j.x->shape[0];
    j.cols = (size_t)j.x->shape[1];
  } else if (j.x->ndim > 2) {
    PyErr_Format(PyExc_ValueError, "parprim.topk: x has %d dimensions; 1 (top-k) or 2 (top-k of each row)", j.x->ndim);
    goto done;
  }
  if (ppy_run(&c, topk_run, &j)) goto done;
  int64_t shape[2] = {(int64_t)j.rows, (int64_t)j.k};
  int nd = j.by_rows ? 2 : 1;
  const int64_t *sh = j.by_rows ? shape : shape + 1;
  PyObject *v = ppy_out_result(&c, &j.vals, nd, sh, j.x->dtype);
  PyObject *i = v ? ppy_out_result(&c, &j.idx, nd, sh, PP_I64) : NULL;
  if (v && i && (r = PyStructSequence_New(ppy_TopKType))) {
    PyStructSequence_SET_ITEM(r, 0, v);
    PyStructSequence_SET_ITEM(r, 1, i);
  } else {
    Py_XDECREF(v);
    Py_XDECREF(i);
  }
done:
  return ppy_call_return_outs(&c, r, &j.vals, &j.idx);
}

/* ------------------------------------------------------------------------------------ */
/* Histograms                                                                           */
/* ------------------------------------------------------------------------------------ */

typedef struct {
  int kind; /* 0 even, 1 edges, 2 image */
  arr *x, *edges;
  size_t bins, width, height, pitch;
  int channels;
  double lo, hi;
  outbuf o;
} hist_job;

static pp_status hist_run(call *c, void *p) {
  hist_job *j = p;
  pp_context *ctx = c->st->ctx;
  size_t bins = j->kind == 2 ? (size_t)j->channels * 256 : j->bins;
  pp_status s = ppy_out_get(c, &j->o, bins * sizeof(uint64_t));
  if (s != PP_OK) return s;
  if (j->kind == 0)
    s = pp_histogram_even(ctx, (pp_dtype)j->x->dtype, j->x->data, j->x->n, j->bins, j->lo, j->hi, j->o.ptr);
  else if (j->kind == 1)
    s = pp_histogram_range(ctx, (pp_dtype)j->x->dtype, j->x->data, j->x->n, j->edges->data, j->bins, j->o.ptr);
  else
    s = pp_histogram_image(ctx, j->x->data, j->width, j->height, j->pitch, j->channels, j->o.ptr);
  return ppy_job_end(s, &j->o, NULL);
}

PyObject *py_histogram(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"x", "bins", "range", COMMON_KW, NULL};
  PyObject *x, *bins, *range = Py_None, *out = Py_None, *ctx = Py_None, *stream = Py_None;
  int copy = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O$OOOp", kwlist, &x, &bins, &range, &out, &ctx, &stream, &copy))
    return NULL;
  call c;
  ppy_call_init(&c, "histogram", ctx, stream, copy);
  hist_job j = {0};
  PyObject *r = NULL;
  if (!(j.x = ppy_input(&c, x, "x"))) goto done;
  if (PyLong_Check(bins)) {
    Py_ssize_t b = PyLong_AsSsize_t(bins);
    if (b == -1 && PyErr_Occurred()) goto done;
    if (b < 0) {
      PyErr_Format(PyExc_ValueError, "parprim.histogram: bins (%zd) < 0", b);
      goto done;
    }
    if (range == Py_None) {
      PyErr_SetString(PyExc_ValueError, "parprim.histogram: even bins need range=(lo, hi)");
      goto done;
    }
    if (!PyArg_ParseTuple(range, "dd", &j.lo, &j.hi)) goto done;
    j.bins = (size_t)b;
  } else {
    if (range != Py_None) {
      PyErr_SetString(PyExc_ValueError, "parprim.histogram: range= goes with a number of bins, not with edges");
      goto done;
    }
    j.kind = 1;
    if (!(j.edges = ppy_call_arg_impl(&c, bins, ROLE_IN, "bins", CONV_F64, 0, 0)) || ppy_want_dtype(&c, j.edges, PP_F64)) goto done;
    if (j.edges->ndim != 1 || j.edges->n < 2) {
      PyErr_SetString(PyExc_ValueError, "parprim.histogram: edges must be 1-D with at least 2 entries");
      goto done;
    }
    j.bins = j.edges->n - 1;
  }
  if (out != Py_None) {
    if (!(j.o.user = ppy_call_arg(&c, out, ROLE_OUT, "out"))) goto done;
    if (j.o.user->dtype != PP_I64 && j.o.user->dtype != PP_U64) {
      PyErr_Format(PyExc_TypeError, "parprim.histogram: out must be int64 or uint64, not %s", ppy_dt_name(j.o.user->dtype));
      goto done;
    }
    if (ppy_check_out(&c, j.o.user, j.o.user->dtype, j.bins)) goto done;
  }
  int64_t n = (int64_t)j.bins;
  r = ppy_run_result(&c, hist_run, &j, &j.o, 1, &n, PP_I64);
done:
  return ppy_call_return(&c, r);
}

PyObject *py_histogram_image(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"pixels", COMMON_KW, NULL};
  PyObject *x, *out = Py_None, *ctx = Py_None, *stream = Py_None;
  int copy = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$OOOp", kwlist, &x, &out, &ctx, &stream, &copy)) return NULL;
  call c;
  ppy_call_init(&c, "histogram_image", ctx, stream, copy);
  hist_job j = {.kind = 2};
  PyObject *r = NULL;
  if (!(j.x = ppy_call_arg_impl(&c, x, ROLE_IN, "pixels", CONV_NONE, ARG_ANY_LAYOUT, 0)) || ppy_want_dtype(&c, j.x, PP_U8))
    goto done;
  arr *a = j.x;
  bool ok = a->ndim == 2 || a->ndim == 3;
  j.channels = a->ndim == 3 ? (int)a->shape[2] : 1;
  if (ok) {
    j.height = (size_t)a->shape[0];
    j.width = (size_t)a->shape[1];
    size_t row = j.width * (size_t)j.channels;
    ok = j.channels >= 1 && j.channels <= 4;
    if (ok && a->ndim == 3) ok = (a->shape[2] == 1 || a->strides[2] == 1) && (a->shape[1] <= 1 || a->strides[1] == j.channels);
    if (ok && a->ndim == 2) ok = a->shape[1] <= 1 || a->strides[1] == 1;
    j.pitch = a->shape[0] <= 1 ? row : (size_t)a->strides[0];
    if (ok) ok = a->strides[0] >= 0 && j.pitch >= row;
  }
  if (!ok) {
    PyErr_SetString(PyExc_ValueError,
                    "parprim.histogram_image: pixels must be uint8 (height, width) or (height, width, channels) with "
                    "1..4 interleaved channels and compact rows");
    goto done;
  }
  if (out != Py_None) {
    if (!(j.o.user = ppy_call_arg(&c, out, ROLE_OUT, "out"))) goto done;
    if (ppy_check_out(&c, j.o.user, j.o.user->dtype == PP_U64 ? PP_U64 : PP_I64, (size_t)j.channels * 256)) goto done;
  }
  int64_t shape[2] = {j.channels, 256};
  r = ppy_run_result(&c, hist_run, &j, &j.o, 2, shape, PP_I64);
done:
  return ppy_call_return(&c, r);
}

/* ------------------------------------------------------------------------------------ */
/* The module table's functions                                                          */
/* ------------------------------------------------------------------------------------ */

PPY_FUNCTION(sum, do_reduce("sum", PP_SUM, args, kw, false))
PPY_FUNCTION(min, do_reduce("min", PP_MIN, args, kw, false))
PPY_FUNCTION(max, do_reduce("max", PP_MAX, args, kw, false))
PPY_FUNCTION(reduce, do_reduce("reduce", PP_SUM, args, kw, true))
PPY_FUNCTION(argmin, do_argreduce("argmin", PP_MIN, args, kw))
PPY_FUNCTION(argmax, do_argreduce("argmax", PP_MAX, args, kw))
PPY_FUNCTION(scan, do_scan("scan", args, kw, false))
PPY_FUNCTION(cumsum, do_scan("cumsum", args, kw, true))
PPY_FUNCTION(select, do_select("select", 0, args, kw))
PPY_FUNCTION(select_flagged, do_select("select_flagged", 1, args, kw))
PPY_FUNCTION(partition, do_select("partition", 2, args, kw))
