/* interop.c — dtypes, the frameworks the module talks to (looked up only once the caller
 * has imported them), parprim.Array and the DLPack export of results. */
#include "module.h"

/* ------------------------------------------------------------------------------------ */
/* dtypes                                                                               */
/* ------------------------------------------------------------------------------------ */

size_t ppy_dt_size(int t) { return t == DT_BOOL ? 1 : pp_dtype_size((pp_dtype)t); }

/* One row a dtype, in pp_dtype order, then bool (DT_BOOL, flags only): NumPy's name, the
 * array interface's typestr, the DLPack type code and bits. */
typedef struct {
  int dt;
  const char *name, *typestr;
  uint8_t dl_code, dl_bits;
} dt_row;
static const dt_row dt_rows[] = {
    {PP_U8, "uint8", "|u1", kDLUInt, 8},      {PP_I32, "int32", "<i4", kDLInt, 32},
    {PP_U32, "uint32", "<u4", kDLUInt, 32},   {PP_I64, "int64", "<i8", kDLInt, 64},
    {PP_U64, "uint64", "<u8", kDLUInt, 64},   {PP_F32, "float32", "<f4", kDLFloat, 32},
    {PP_F64, "float64", "<f8", kDLFloat, 64}, {DT_BOOL, "bool", "|b1", kDLBool, 8},
};
#define N_DT_ROWS (sizeof dt_rows / sizeof dt_rows[0])

static const dt_row *dt_row_of(int t) {
  for (size_t i = 0; i < N_DT_ROWS; i++)
    if (dt_rows[i].dt == t) return &dt_rows[i];
  return NULL;
}

const char *ppy_dt_name(int t) {
  const dt_row *r = dt_row_of(t);
  return r ? r->name : "unknown";
}

const char *ppy_dt_typestr(int t) {
  const dt_row *r = dt_row_of(t);
  return r ? r->typestr : "";
}

DLDataType ppy_dt_dl(int t) {
  const dt_row *r = dt_row_of(t);
  DLDataType d = {kDLUInt, 8, 1};
  if (r) d.code = r->dl_code, d.bits = r->dl_bits;
  return d;
}

int ppy_dt_from_dl(DLDataType d) {
  for (size_t i = 0; d.lanes == 1 && i < N_DT_ROWS; i++)
    if (d.code == dt_rows[i].dl_code && d.bits == dt_rows[i].dl_bits) return dt_rows[i].dt;
  return -1;
}

/* a struct-module format (buffer protocol) to a dtype; -1 when parprim has no such type */
int ppy_dt_from_format(const char *f, Py_ssize_t itemsize) {
  if (!f) return itemsize == 1 ? PP_U8 : -1; /* NULL means unsigned bytes */
  if (*f == '@' || *f == '=' || *f == '<') f++;
  else if (*f == '>' || *f == '!') return -1; /* big-endian data */
  if (!f[0] || f[1]) return -1;
  switch (f[0]) {
  case 'B': return itemsize == 1 ? PP_U8 : -1;
  case '?': return itemsize == 1 ? DT_BOOL : -1;
  case 'h': case 'i': case 'l': case 'q': case 'n':
    return itemsize == 4 ? PP_I32 : itemsize == 8 ? PP_I64 : -1;
  case 'H': case 'I': case 'L': case 'Q': case 'N':
    return itemsize == 4 ? PP_U32 : itemsize == 8 ? PP_U64 : -1;
  case 'f': return itemsize == 4 ? PP_F32 : -1;
  case 'd': return itemsize == 8 ? PP_F64 : -1;
  }
  return -1;
}


/* ------------------------------------------------------------------------------------ */
/* Framework objects, looked up once the framework is imported by the caller            */
/* ------------------------------------------------------------------------------------ */


PyObject *ppy_get_numpy(void) {
  if (ppy_fw.numpy) return ppy_fw.numpy;
  PyObject *np = PyImport_ImportModule("numpy");
  if (!np) return NULL;
  ppy_fw.np_from_dlpack = PyObject_GetAttrString(np, "from_dlpack");
  ppy_fw.np_ascontig = PyObject_GetAttrString(np, "ascontiguousarray");
  ppy_fw.np_asarray = PyObject_GetAttrString(np, "asarray");
  ppy_fw.np_ndarray = PyObject_GetAttrString(np, "ndarray");
  if (!ppy_fw.np_from_dlpack || !ppy_fw.np_ascontig || !ppy_fw.np_asarray || !ppy_fw.np_ndarray) {
    Py_DECREF(np);
    return NULL;
  }
  for (int t = PP_U8; t <= PP_F64; t++) {
    ppy_fw.np_scalar[t] = PyObject_GetAttrString(np, ppy_dt_name(t));
    if (!ppy_fw.np_scalar[t]) PyErr_Clear(); /* then 0-d results go through from_dlpack */
  }
  ppy_fw.numpy = np;
  return np;
}

ppy_frameworks ppy_fw;

/* getattr(o, path) along a dotted path ("cuda.current_stream"): a new reference, or NULL
 * with the error set. */
static PyObject *attr_path(PyObject *o, const char *path) {
  PyObject *cur = Py_NewRef(o);
  while (cur && *path) {
    const char *dot = strchr(path, '.');
    const int len = dot ? (int)(dot - path) : (int)strlen(path);
    char name[64];
    snprintf(name, sizeof name, "%.*s", len, path);
    Py_SETREF(cur, PyObject_GetAttrString(cur, name));
    path += len + (dot != NULL);
  }
  return cur;
}

/* An attribute a framework may lack (an older torch has no uint32): NULL, no error, if so. */
static PyObject *attr_or_null(PyObject *o, const char *path) {
  PyObject *a = attr_path(o, path);
  if (!a) PyErr_Clear();
  return a;
}

/* out[i] = the attribute paths[i] of o (new references), for all n of them or for none:
 * false with the error cleared when one is missing. */
static bool attrs_all(PyObject *o, const char *const *paths, PyObject **out, int n) {
  for (int i = 0; i < n; i++) {
    if ((out[i] = attr_path(o, paths[i]))) continue;
    PyErr_Clear();
    while (i--) Py_CLEAR(out[i]);
    return false;
  }
  return true;
}

/* torch and CuPy only when the caller has imported them: parprim never imports either
 * itself. A borrowed reference, or NULL. */
static PyObject *imported(const char *name) { return PyDict_GetItemString(PyImport_GetModuleDict(), name); }

static bool have_torch(void) {
  if (ppy_fw.torch) return true;
  PyObject *t = imported("torch");
  static const char *const needed[2] = {"Tensor", "from_dlpack"};
  PyObject *got[2];
  if (!t || !attrs_all(t, needed, got, 2)) return false;
  static const char *const names[8] = {"uint8", "int32", "uint32", "int64", "uint64", "float32", "float64", "bool"};
  for (int i = 0; i < 8; i++) ppy_fw.torch_dtypes[i] = attr_or_null(t, names[i]); /* older torch: no uint32 / uint64 */
  ppy_fw.torch_raw_stream = attr_or_null(t, "_C._cuda_getCurrentRawStream");
  /* the converter torch.from_dlpack ends in, called on our capsule without the Python
   * wrapper's checks: a capsule made on the caller's stream needs no stream exchange */
  PyObject *direct = attr_or_null(t, "_C._from_dlpack");
  ppy_fw.torch_from_dlpack_public = Py_NewRef(got[1]);
  if (direct) Py_SETREF(got[1], direct);
  ppy_fw.torch_current_stream = attr_or_null(t, "cuda.current_stream");
  ppy_fw.torch = Py_NewRef(t);
  ppy_fw.torch_tensor = got[0];
  ppy_fw.torch_from_dlpack = got[1];
  return true;
}

static bool have_cupy(void) {
  if (ppy_fw.cupy) return true;
  PyObject *cp = imported("cupy");
  static const char *const needed[4] = {"ndarray", "from_dlpack", "ascontiguousarray", "cuda.get_current_stream"};
  PyObject *got[4];
  if (!cp || !attrs_all(cp, needed, got, 4)) return false;
  ppy_fw.cupy = Py_NewRef(cp);
  ppy_fw.cupy_ndarray = got[0];
  ppy_fw.cupy_from_dlpack = got[1];
  ppy_fw.cupy_ascontig = got[2];
  ppy_fw.cupy_current_stream = got[3];
  return true;
}

static PyObject *get_jax_from_dlpack(void) {
  if (ppy_fw.jax_from_dlpack) return ppy_fw.jax_from_dlpack;
  PyObject *m = PyImport_ImportModule("jax.dlpack");
  if (!m) return NULL;
  ppy_fw.jax_from_dlpack = PyObject_GetAttrString(m, "from_dlpack");
  Py_DECREF(m);
  return ppy_fw.jax_from_dlpack;
}

bool ppy_is_torch(PyObject *o) {
  return have_torch() && PyObject_TypeCheck(o, (PyTypeObject *)ppy_fw.torch_tensor);
}

/* the framework an object's results go back to */
int ppy_framework_of(PyObject *o) {
  if (ppy_is_torch(o)) return FW_TORCH;
  if (have_cupy() && PyObject_TypeCheck(o, (PyTypeObject *)ppy_fw.cupy_ndarray)) return FW_CUPY;
  if (ppy_fw.np_ndarray && PyObject_TypeCheck(o, (PyTypeObject *)ppy_fw.np_ndarray)) return FW_NUMPY;
  PyObject *mod = PyObject_GetAttrString((PyObject *)Py_TYPE(o), "__module__");
  int r = FW_ARRAY;
  if (mod && PyUnicode_Check(mod)) {
    const char *m = PyUnicode_AsUTF8(mod);
    if (m && (strncmp(m, "jax", 3) == 0)) r = FW_JAX; /* jax, jaxlib */
  }
  Py_XDECREF(mod);
  PyErr_Clear();
  return r;
}

/* ------------------------------------------------------------------------------------ */
/* parprim.Array: a result in memory the module owns, exported through DLPack           */
/* ------------------------------------------------------------------------------------ */



/* one allocation per export: both DLPack forms and the shape they point to */
typedef struct {
  DLManagedTensorVersioned v;
  DLManagedTensor legacy;
  int64_t shape[MAXDIM];
  block *b;
} export_t;

static void export_free(export_t *e) {
  ppy_block_release(e->b);
  free(e);
}
static void deleter_versioned(DLManagedTensorVersioned *m) { export_free((export_t *)m->manager_ctx); }
static void deleter_legacy(DLManagedTensor *m) { export_free((export_t *)m->manager_ctx); }

/* Until a consumer renames the capsule ("used_..."), it owns the tensor and frees it. */
static void capsule_versioned_destructor(PyObject *cap) {
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    DLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, "dltensor_versioned");
    if (m && m->deleter) m->deleter(m);
  }
}
static void capsule_legacy_destructor(PyObject *cap) {
  if (PyCapsule_IsValid(cap, "dltensor")) {
    DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
    if (m && m->deleter) m->deleter(m);
  }
}

static PyObject *array_capsule(ArrayObject *a, bool versioned) {
  export_t *e = calloc(1, sizeof *e);
  if (!e) return PyErr_NoMemory();
  memcpy(e->shape, a->shape, sizeof e->shape);
  e->b = a->b;
  atomic_fetch_add(&a->b->refs, 1);
  DLTensor t;
  t.data = a->b->ptr;
  t.device.device_type = (DLDeviceType)a->dev_type;
  t.device.device_id = a->dev_id;
  t.ndim = a->ndim;
  t.dtype = ppy_dt_dl(a->dtype);
  t.shape = e->shape;
  t.strides = NULL;
  t.byte_offset = 0;
  PyObject *cap;
  if (versioned) {
    e->v.version.major = PPY_DLPACK_MAJOR;
    e->v.version.minor = PPY_DLPACK_MINOR;
    e->v.manager_ctx = e;
    e->v.deleter = deleter_versioned;
    e->v.flags = 0;
    e->v.dl_tensor = t;
    cap = PyCapsule_New(&e->v, "dltensor_versioned", capsule_versioned_destructor);
  } else {
    e->legacy.dl_tensor = t;
    e->legacy.manager_ctx = e;
    e->legacy.deleter = deleter_legacy;
    cap = PyCapsule_New(&e->legacy, "dltensor", capsule_legacy_destructor);
  }
  if (!cap) export_free(e);
  return cap;
}

static PyObject *Array_dlpack(ArrayObject *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
  PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OOOO:__dlpack__", kwlist, &stream, &max_version,
                                   &dl_device, &copy))
    return NULL;
  if (copy == Py_True) {
    PyErr_SetString(PyExc_BufferError, "parprim.Array exports its memory in place; it does not copy");
    return NULL;
  }
  if (dl_device != Py_None) {
    int t, id;
    if (!PyArg_ParseTuple(dl_device, "ii", &t, &id)) return NULL;
    if (t != self->dev_type || id != self->dev_id) {
      PyErr_SetString(PyExc_BufferError, "parprim.Array: cannot export to another device");
      return NULL;
    }
  }
  if (stream != Py_None && self->dev_type == kDLCUDA) {
    long long s = PyLong_AsLongLong(stream);
    if (s == -1 && PyErr_Occurred()) return NULL;
    if (s != -1 && ppy_order_streams(self->stream, s == 0 ? STREAM_LEGACY : (uintptr_t)s)) return NULL;
  }
  bool versioned = false;
  if (max_version != Py_None) {
    PyObject *major = PySequence_GetItem(max_version, 0);
    if (!major) return NULL;
    long m = PyLong_AsLong(major);
    Py_DECREF(major);
    if (m == -1 && PyErr_Occurred()) return NULL;
    versioned = m >= 1;
  }
  return array_capsule(self, versioned);
}

static PyObject *Array_dlpack_device(ArrayObject *self, PyObject *unused) {
  (void)unused;
  return Py_BuildValue("(ii)", self->dev_type, self->dev_id);
}

static PyObject *shape_tuple(int ndim, const int64_t *shape) {
  PyObject *t = PyTuple_New(ndim);
  if (!t) return NULL;
  for (int i = 0; i < ndim; i++) {
    PyObject *v = PyLong_FromLongLong(shape[i]);
    if (!v) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SET_ITEM(t, i, v);
  }
  return t;
}

static PyObject *Array_interface(ArrayObject *self, bool cuda) {
  PyObject *shape = shape_tuple(self->ndim, self->shape);
  if (!shape) return NULL;
  PyObject *d = Py_BuildValue("{s:N,s:s,s:(NO),s:i,s:O}", "shape", shape, "typestr", ppy_dt_typestr(self->dtype), "data",
                              PyLong_FromVoidPtr(self->b->ptr), Py_False, "version", 3, "strides", Py_None);
  if (d && cuda) {
    PyObject *s = self->stream ? PyLong_FromSize_t(self->stream) : Py_NewRef(Py_None);
    if (!s || PyDict_SetItemString(d, "stream", s)) Py_CLEAR(d);
    Py_XDECREF(s);
  }
  return d;
}

static PyObject *Array_cai(ArrayObject *self, void *c) {
  (void)c;
  if (self->dev_type != kDLCUDA) {
    PyErr_SetString(PyExc_AttributeError, "__cuda_array_interface__: this parprim.Array is in host memory");
    return NULL;
  }
  return Array_interface(self, true);
}

static PyObject *Array_ai(ArrayObject *self, void *c) {
  (void)c;
  if (self->dev_type == kDLCUDA) {
    PyErr_SetString(PyExc_AttributeError, "__array_interface__: this parprim.Array is in device memory");
    return NULL;
  }
  return Array_interface(self, false);
}

static PyObject *Array_shape(ArrayObject *self, void *c) {
  (void)c;
  return shape_tuple(self->ndim, self->shape);
}
static PyObject *Array_dtype(ArrayObject *self, void *c) {
  (void)c;
  return PyUnicode_FromString(ppy_dt_name(self->dtype));
}
static PyObject *Array_device(ArrayObject *self, void *c) {
  (void)c;
  if (self->dev_type == kDLCUDA) return PyUnicode_FromFormat("cuda:%d", self->dev_id);
  return PyUnicode_FromString("cpu");
}
static PyObject *Array_data_ptr(ArrayObject *self, void *c) {
  (void)c;
  return PyLong_FromVoidPtr(self->b->ptr);
}

static PyObject *Array_repr(ArrayObject *self) {
  PyObject *shape = shape_tuple(self->ndim, self->shape);
  if (!shape) return NULL;
  PyObject *r = PyUnicode_FromFormat("parprim.Array(shape=%R, dtype=%s, device=%s)", shape, ppy_dt_name(self->dtype),
                                     self->dev_type == kDLCUDA ? "cuda" : "cpu");
  Py_DECREF(shape);
  return r;
}

static void Array_dealloc(ArrayObject *self) {
  ppy_block_release(self->b);
  PyObject_Free(self);
}

static PyGetSetDef Array_getset[] = {
    {"__cuda_array_interface__", (getter)Array_cai, NULL, "CUDA array interface v3 (device memory)", NULL},
    {"__array_interface__", (getter)Array_ai, NULL, "NumPy array interface v3 (host memory)", NULL},
    PPY_GETTER(Array, shape, "shape"),
    PPY_GETTER(Array, dtype, "dtype name"),
    PPY_GETTER(Array, device, "'cpu' or 'cuda:N'"),
    PPY_GETTER(Array, data_ptr, "address of the first element"),
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef Array_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))Array_dlpack, METH_VARARGS | METH_KEYWORDS, "DLPack export (versioned when max_version >= (1, 0))."},
    {"__dlpack_device__", (PyCFunction)Array_dlpack_device, METH_NOARGS, "(device_type, device_id)"},
    {NULL, NULL, 0, NULL}};

PyTypeObject ppy_ArrayType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "parprim.Array",
    .tp_basicsize = sizeof(ArrayObject),
    .tp_dealloc = (destructor)Array_dealloc,
    .tp_repr = (reprfunc)Array_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A parprim result in memory parprim owns, for callers whose arrays come from no known\n"
              "framework. Any framework takes it without a copy: it has __dlpack__, __dlpack_device__,\n"
              "and __cuda_array_interface__ (device) or __array_interface__ (host).",
    .tp_methods = Array_methods,
    .tp_getset = Array_getset,
};

/* A result in the caller's framework. 0-d results for NumPy become NumPy scalars. */
PyObject *ppy_wrap_block(call *c, block *b, int ndim, const int64_t *shape, int dtype) {
  ArrayObject *a = PyObject_New(ArrayObject, &ppy_ArrayType);
  if (!a) {
    ppy_block_release(b);
    return NULL;
  }
  a->b = b;
  a->ndim = ndim;
  memset(a->shape, 0, sizeof a->shape);
  for (int i = 0; i < ndim; i++) a->shape[i] = shape[i];
  a->dtype = dtype;
  a->dev_type = c->out_host ? kDLCPU : kDLCUDA;
  a->dev_id = c->out_host ? 0 : c->st->device;
  a->stream = c->out_host ? 0 : c->stream;
  PyObject *r = NULL;
  switch (c->fw) {
  case FW_TORCH: {
    PyObject *cap = array_capsule(a, false);
    r = cap ? PyObject_CallOneArg(ppy_fw.torch_from_dlpack, cap) : NULL;
    Py_XDECREF(cap);
    if (!r && ppy_fw.torch_from_dlpack != ppy_fw.torch_from_dlpack_public && PyErr_ExceptionMatches(PyExc_TypeError)) {
      /* a torch whose private converter takes other arguments: the public one from now on */
      PyErr_Clear();
      Py_SETREF(ppy_fw.torch_from_dlpack, Py_NewRef(ppy_fw.torch_from_dlpack_public));
      cap = array_capsule(a, false);
      r = cap ? PyObject_CallOneArg(ppy_fw.torch_from_dlpack, cap) : NULL;
      Py_XDECREF(cap);
    }
    break;
  }
  case FW_CUPY: r = PyObject_CallOneArg(ppy_fw.cupy_from_dlpack, (PyObject *)a); break;
  case FW_JAX: {
    PyObject *f = get_jax_from_dlpack();
    r = f ? PyObject_CallOneArg(f, (PyObject *)a) : NULL;
    break;
  }
  case FW_NUMPY:
    if (ndim == 0 && ppy_fw.np_scalar[dtype]) { /* a NumPy scalar straight from the value */
      PyObject *v = NULL;
      const void *p = b->ptr;
      switch (dtype) {
      case PP_U8: v = PyLong_FromUnsignedLong(*(const uint8_t *)p); break;
      case PP_I32: v = PyLong_FromLong(*(const int32_t *)p); break;
      case PP_U32: v = PyLong_FromUnsignedLong(*(const uint32_t *)p); break;
      case PP_I64: v = PyLong_FromLongLong(*(const int64_t *)p); break;
      case PP_U64: v = PyLong_FromUnsignedLongLong(*(const uint64_t *)p); break;
      case PP_F32: v = PyFloat_FromDouble(*(const float *)p); break;
      case PP_F64: v = PyFloat_FromDouble(*(const double *)p); break;
      }
      r = v ? PyObject_CallOneArg(ppy_fw.np_scalar[dtype], v) : NULL;
      Py_XDECREF(v);
      break;
    }
    r = PyObject_CallOneArg(ppy_fw.np_from_dlpack, (PyObject *)a);
    if (r && ndim == 0) {
      PyObject *empty = PyTuple_New(0);
      PyObject *scalar = empty ? PyObject_GetItem(r, empty) : NULL;
      Py_XDECREF(empty);
      Py_SETREF(r, scalar);
    }
    break;
  default: return (PyObject *)a;
  }
  Py_DECREF(a);
  return r;
}
