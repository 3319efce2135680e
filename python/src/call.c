/* call.c — one call: reading its array arguments in place (torch, buffer protocol, DLPack,
 * CUDA array interface), binding its context and stream, running the library with the GIL
 * released and the context locked, and its result buffers. */
#include "module.h"

/* ------------------------------------------------------------------------------------ */
/* One call: its context, stream and array arguments                                    */
/* ------------------------------------------------------------------------------------ */



void ppy_call_init(call *c, const char *fn, PyObject *ctx, PyObject *stream, int copy) {
  memset(c, 0, sizeof *c);
  c->fn = fn;
  c->ctx_arg = ctx ? ctx : Py_None;
  c->stream_arg = stream ? stream : Py_None;
  c->copy = copy != 0;
}

static void arr_release(arr *a) {
  if (a->has_view) PyBuffer_Release(&a->view);
  a->has_view = false;
  if (a->managed) {
    if (a->versioned) {
      DLManagedTensorVersioned *m = a->managed;
      if (m->deleter) m->deleter(m);
    } else {
      DLManagedTensor *m = a->managed;
      if (m->deleter) m->deleter(m);
    }
  }
  a->managed = NULL;
  Py_CLEAR(a->capsule);
  Py_CLEAR(a->hold);
}

void ppy_call_end(call *c) {
  for (int i = 0; i < c->na; i++) arr_release(&c->a[i]);
  c->na = 0;
  Py_CLEAR(c->stream_obj);
  Py_CLEAR(c->ctxo);
}

static int stream_from_object(call *c, PyObject *o, uintptr_t *h) {
  PyObject *v;
  if (PyLong_Check(o)) v = Py_NewRef(o);
  else if (PyObject_HasAttrString(o, "cuda_stream")) v = PyObject_GetAttrString(o, "cuda_stream");
  else if (PyObject_HasAttrString(o, "ptr")) v = PyObject_GetAttrString(o, "ptr");
  else {
    PyErr_Format(PyExc_TypeError, "parprim.%s: stream must be an int handle or an object with .cuda_stream or .ptr, not %.100s",
                 c->fn, Py_TYPE(o)->tp_name);
    return -1;
  }
  if (!v) return -1;
  unsigned long long x = PyLong_AsUnsignedLongLong(v);
  Py_DECREF(v);
  if (x == (unsigned long long)-1 && PyErr_Occurred()) return -1;
  *h = x == 0 ? STREAM_LEGACY : (uintptr_t)x;
  return 0;
}

/* The stream of the call: stream=, else the framework's current one, else the legacy
 * default stream. */
static int call_resolve_stream(call *c, int fw_kind, int dev_id) {
  c->stream = STREAM_LEGACY;
  if (c->stream_arg != Py_None) {
    if (stream_from_object(c, c->stream_arg, &c->stream)) return -1;
    c->stream_obj = Py_NewRef(c->stream_arg);
    return 0;
  }
  if (dev_id < 0) dev_id = c->st->device;
  if (fw_kind == FW_TORCH) {
    PyObject *r = NULL;
    if (ppy_fw.torch_raw_stream) {
      PyObject *d = PyLong_FromLong(dev_id);
      r = d ? PyObject_CallOneArg(ppy_fw.torch_raw_stream, d) : NULL;
      Py_XDECREF(d);
      if (!r && PyErr_ExceptionMatches(PyExc_TypeError)) { /* a torch without this private call */
        PyErr_Clear();
        Py_CLEAR(ppy_fw.torch_raw_stream);
      }
    }
    if (!r && !ppy_fw.torch_raw_stream && !PyErr_Occurred()) {
      if (!ppy_fw.torch_current_stream) {
        PyErr_Format(PyExc_RuntimeError, "parprim.%s: this torch has no torch.cuda.current_stream", c->fn);
        return -1;
      }
      PyObject *s = PyObject_CallFunction(ppy_fw.torch_current_stream, "i", dev_id);
      r = s ? PyObject_GetAttrString(s, "cuda_stream") : NULL;
      Py_XDECREF(s);
    }
    if (!r) return -1;
    unsigned long long x = PyLong_AsUnsignedLongLong(r);
    Py_DECREF(r);
    if (x == (unsigned long long)-1 && PyErr_Occurred()) return -1;
    c->stream = x ? (uintptr_t)x : STREAM_LEGACY;
  } else if (fw_kind == FW_CUPY) {
    PyObject *s = PyObject_CallNoArgs(ppy_fw.cupy_current_stream);
    if (!s) return -1;
    if (stream_from_object(c, s, &c->stream)) {
      Py_DECREF(s);
      return -1;
    }
    c->stream_obj = s;
  }
  return 0;
}

static bool dev_is_host(int t) { return t == kDLCPU || t == kDLCUDAHost; }

/* The first array argument picks the context (ctx=, else the default one of its device),
 * the stream and where results go. */
static int call_bind(call *c, arr *a, int fw_kind) {
  bool on_device = a->dev_type == kDLCUDA;
  if (a->dev_type != kDLCPU && a->dev_type != kDLCUDA && a->dev_type != kDLCUDAHost &&
      a->dev_type != kDLCUDAManaged) {
    PyErr_Format(PyExc_TypeError, "parprim.%s: %s is on a DLPack device of type %d; parprim takes CPU and CUDA memory",
                 c->fn, a->name, a->dev_type);
    return -1;
  }
  if (!c->st) {
    if (c->ctx_arg != Py_None) {
      if (!PyObject_TypeCheck(c->ctx_arg, &ppy_ContextType)) {
        PyErr_Format(PyExc_TypeError, "parprim.%s: ctx must be a parprim.Context, not %.100s", c->fn,
                     Py_TYPE(c->ctx_arg)->tp_name);
        return -1;
      }
      c->ctxo = (ContextObject *)Py_NewRef(c->ctx_arg);
    } else {
      c->ctxo = ppy_default_context(on_device ? a->dev_id : -1);
      if (!c->ctxo) return -1;
    }
    c->st = c->ctxo->st;
    bool cuda = c->st->backend == PP_BACKEND_CUDA;
    c->out_host = !cuda || dev_is_host(a->dev_type);
    c->fw = fw_kind;
    if (c->out_host && (fw_kind == FW_ARRAY || fw_kind == FW_CUPY)) c->fw = FW_NUMPY;
    if (cuda) {
      if (call_resolve_stream(c, fw_kind, on_device ? a->dev_id : -1)) return -1;
    } else if (c->stream_arg != Py_None) {
      PyErr_Format(PyExc_ValueError, "parprim.%s: stream= needs a CUDA context; this one runs on the cpu backend", c->fn);
      return -1;
    }
  }
  if (on_device && c->st->backend != PP_BACKEND_CUDA) {
    PyErr_Format(PyExc_ValueError,
                 "parprim.%s: %s is in CUDA device memory, but the context runs on the cpu backend "
                 "(no GPU, a build without CUDA, or PARPRIM_BACKEND=cpu); copy it to the host first",
                 c->fn, a->name);
    return -1;
  }
  return 0;
}

static int set_dtype(call *c, arr *a, int dt, const char *what) {
  if (dt < 0) {
    PyErr_Format(PyExc_TypeError, "parprim.%s: %s has dtype %s; parprim takes %s", c->fn, a->name, what, PPY_DTYPES_TAKEN);
    return -1;
  }
  a->dtype = dt;
  a->itemsize = ppy_dt_size(dt);
  return 0;
}

static int set_shape_count(call *c, arr *a) {
  if (a->ndim > MAXDIM) {
    PyErr_Format(PyExc_ValueError, "parprim.%s: %s has %d dimensions; at most %d", c->fn, a->name, a->ndim, MAXDIM);
    return -1;
  }
  size_t n = 1;
  for (int i = 0; i < a->ndim; i++) {
    if (a->shape[i] < 0) {
      PyErr_Format(PyExc_ValueError, "parprim.%s: %s has a negative extent", c->fn, a->name);
      return -1;
    }
    n *= (size_t)a->shape[i];
  }
  a->n = n;
  return 0;
}

static int parse_buffer(call *c, arr *a, PyObject *obj, int role) {
  int flags = role == ROLE_IN ? PyBUF_RECORDS_RO : PyBUF_RECORDS;
  if (PyObject_GetBuffer(obj, &a->view, flags)) {
    if (role != ROLE_IN && PyErr_ExceptionMatches(PyExc_BufferError)) {
      PyErr_Clear();
      PyErr_Format(PyExc_ValueError, "parprim.%s: %s is read-only", c->fn, a->name);
    }
    return -1;
  }
  a->has_view = true;
  a->data = a->view.buf;
  a->readonly = a->view.readonly;
  a->dev_type = kDLCPU;
  a->dev_id = 0;
  a->ndim = a->view.ndim;
  if (set_dtype(c, a, ppy_dt_from_format(a->view.format, a->view.itemsize), a->view.format ? a->view.format : "B"))
    return -1;
  if (a->ndim > MAXDIM) return set_shape_count(c, a);
  for (int i = 0; i < a->ndim; i++) {
    a->shape[i] = a->view.shape[i];
    a->strides[i] = a->view.strides ? a->view.strides[i] : 0;
  }
  if (!a->view.strides) { /* compact */
    int64_t s = (int64_t)a->itemsize;
    for (int i = a->ndim - 1; i >= 0; i--) {
      a->strides[i] = s;
      s *= a->shape[i];
    }
  }
  if (set_shape_count(c, a)) return -1;
  /* JAX's CPU arrays have the buffer protocol too: their results go back to JAX */
  return call_bind(c, a, ppy_fw.np_ndarray && PyObject_TypeCheck(obj, (PyTypeObject *)ppy_fw.np_ndarray) ? FW_NUMPY : ppy_framework_of(obj));
}

/* The attribute and method names of the torch fast path, interned once: a lookup by an
 * interned name hashes nothing and compares pointers, where PyObject_GetAttrString and
 * PyObject_CallMethod build a new string on every call. Made under the GIL. */
enum { NM_DTYPE, NM_GET_DEVICE, NM_SHAPE, NM_STRIDE, NM_DATA_PTR, NM_COUNT };
static PyObject *names[NM_COUNT];

static PyObject *name_of(int i) {
  static const char *const text[NM_COUNT] = {"dtype", "get_device", "shape", "stride", "data_ptr"};
  if (!names[i]) names[i] = PyUnicode_InternFromString(text[i]);
  return names[i];
}

static int call_int_method(PyObject *o, int name, long long *v) {
  PyObject *n = name_of(name);
  PyObject *r = n ? PyObject_CallMethodNoArgs(o, n) : NULL;
  if (!r) return -1;
  *v = PyLong_AsLongLong(r);
  Py_DECREF(r);
  return (*v == -1 && PyErr_Occurred()) ? -1 : 0;
}

static int tuple_to_i64(PyObject *t, int64_t *out, int max, int *count) {
  PyObject *seq = PySequence_Fast(t, "expected a sequence");
  if (!seq) return -1;
  Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
  if (len > max) {
    Py_DECREF(seq);
    PyErr_Format(PyExc_ValueError, "parprim: more than %d dimensions", max);
    return -1;
  }
  for (Py_ssize_t i = 0; i < len; i++) {
    out[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
    if (out[i] == -1 && PyErr_Occurred()) {
      Py_DECREF(seq);
      return -1;
    }
  }
  *count = (int)len;
  Py_DECREF(seq);
  return 0;
}

/* torch tensors through their own accessors: each is one C call, where __dlpack__ runs
 * Python code */
static int parse_torch(call *c, arr *a, PyObject *obj) {
  PyObject *nm = name_of(NM_DTYPE);
  PyObject *dtype = nm ? PyObject_GetAttr(obj, nm) : NULL;
  if (!dtype) return -1;
  static const int map[8] = {PP_U8, PP_I32, PP_U32, PP_I64, PP_U64, PP_F32, PP_F64, DT_BOOL};
  int dt = -1;
  for (int i = 0; i < 8; i++)
    if (ppy_fw.torch_dtypes[i] == dtype) dt = map[i];
  if (dt < 0) {
    PyObject *s = PyObject_Str(dtype);
    Py_DECREF(dtype);
    if (!s) return -1;
    int r = set_dtype(c, a, -1, PyUnicode_AsUTF8(s));
    Py_DECREF(s);
    return r;
  }
  Py_DECREF(dtype);
  set_dtype(c, a, dt, NULL);
  /* get_device() is the CUDA ordinal of a CUDA tensor and -1 for every other device */
  long long dev, ptr;
  if (call_int_method(obj, NM_GET_DEVICE, &dev)) return -1;
  if (dev >= 0) {
    a->dev_type = kDLCUDA;
    a->dev_id = (int)dev;
  } else {
    PyObject *device = PyObject_GetAttrString(obj, "device");
    PyObject *type = device ? PyObject_GetAttrString(device, "type") : NULL;
    Py_XDECREF(device);
    if (!type) return -1;
    int cpu = PyUnicode_Check(type) && PyUnicode_CompareWithASCIIString(type, "cpu") == 0;
    Py_DECREF(type);
    if (!cpu) {
      PyErr_Format(PyExc_TypeError, "parprim.%s: %s is a torch tensor on a device parprim does not run on", c->fn, a->name);
      return -1;
    }
    a->dev_type = kDLCPU;
    a->dev_id = 0;
  }
  nm = name_of(NM_SHAPE);
  PyObject *shape = nm ? PyObject_GetAttr(obj, nm) : NULL;
  if (!shape) return -1;
  int r = tuple_to_i64(shape, a->shape, MAXDIM, &a->ndim);
  Py_DECREF(shape);
  if (r) return -1;
  nm = name_of(NM_STRIDE);
  PyObject *stride = nm ? PyObject_CallMethodNoArgs(obj, nm) : NULL;
  if (!stride) return -1;
  int nd;
  r = tuple_to_i64(stride, a->strides, MAXDIM, &nd);
  Py_DECREF(stride);
  if (r) return -1;
  for (int i = 0; i < a->ndim; i++) a->strides[i] *= (int64_t)a->itemsize;
  if (set_shape_count(c, a)) return -1;
  if (call_bind(c, a, FW_TORCH)) return -1;
  if (call_int_method(obj, NM_DATA_PTR, &ptr)) return -1;
  a->data = (void *)(uintptr_t)ptr;
  return 0;
}

static int parse_dltensor(call *c, arr *a, DLTensor *t) {
  a->data = (char *)t->data + t->byte_offset;
  if ((DLDeviceType)a->dev_type != t->device.device_type) {
    PyErr_Format(PyExc_BufferError, "parprim.%s: %s's DLPack device changed between __dlpack_device__ and __dlpack__", c->fn, a->name);
    return -1;
  }
  char what[32];
  snprintf(what, sizeof what, "code %u, %u bits, %u lanes", t->dtype.code, t->dtype.bits, t->dtype.lanes);
  if (set_dtype(c, a, ppy_dt_from_dl(t->dtype), what)) return -1;
  a->ndim = t->ndim;
  if (t->ndim > MAXDIM || t->ndim < 0) return set_shape_count(c, a);
  int64_t s = (int64_t)a->itemsize;
  for (int i = t->ndim - 1; i >= 0; i--) {
    a->shape[i] = t->shape[i];
    a->strides[i] = t->strides ? t->strides[i] * (int64_t)a->itemsize : s;
    s *= t->shape[i];
  }
  return set_shape_count(c, a);
}

static int parse_dlpack(call *c, arr *a, PyObject *obj) {
  PyObject *dev = PyObject_CallMethod(obj, "__dlpack_device__", NULL);
  if (!dev) return -1;
  int dt, id;
  int ok = PyArg_ParseTuple(dev, "ii", &dt, &id);
  Py_DECREF(dev);
  if (!ok) return -1;
  a->dev_type = dt;
  a->dev_id = id;
  if (call_bind(c, a, ppy_framework_of(obj))) return -1;
  PyObject *stream = Py_None;
  if (dt == kDLCUDA || dt == kDLCUDAManaged) stream = PyLong_FromSize_t(c->stream);
  else Py_INCREF(stream);
  if (!stream) return -1;
  PyObject *kw = Py_BuildValue("{s:O,s:(ii)}", "stream", stream, "max_version", PPY_DLPACK_MAJOR, PPY_DLPACK_MINOR);
  PyObject *empty = PyTuple_New(0);
  PyObject *meth = PyObject_GetAttrString(obj, "__dlpack__");
  PyObject *cap = kw && empty && meth ? PyObject_Call(meth, empty, kw) : NULL;
  if (!cap && PyErr_ExceptionMatches(PyExc_TypeError)) {
    /* a producer older than DLPack 1.0 knows no max_version */
    PyErr_Clear();
    PyDict_DelItemString(kw, "max_version");
    if (stream == Py_None) PyDict_DelItemString(kw, "stream");
    cap = PyObject_Call(meth, empty, kw);
  }
  Py_XDECREF(kw);
  Py_XDECREF(empty);
  Py_XDECREF(meth);
  Py_DECREF(stream);
  if (!cap) return -1;
  a->capsule = cap;
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    DLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, "dltensor_versioned");
    if (!m || PyCapsule_SetName(cap, "used_dltensor_versioned")) return -1;
    a->managed = m;
    a->versioned = true;
    if (m->version.major != PPY_DLPACK_MAJOR) {
      PyErr_Format(PyExc_BufferError, "parprim.%s: %s came in DLPack %u.%u; parprim reads 1.x", c->fn, a->name,
                   m->version.major, m->version.minor);
      return -1;
    }
    a->readonly = (m->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
    return parse_dltensor(c, a, &m->dl_tensor);
  }
  if (PyCapsule_IsValid(cap, "dltensor")) {
    DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
    if (!m || PyCapsule_SetName(cap, "used_dltensor")) return -1;
    a->managed = m;
    a->versioned = false;
    return parse_dltensor(c, a, &m->dl_tensor);
  }
  PyErr_Format(PyExc_TypeError, "parprim.%s: %s.__dlpack__() gave no unused DLPack capsule", c->fn, a->name);
  return -1;
}

static int parse_typestr(const char *ts) {
  if (!ts || strlen(ts) != 3 || ts[0] == '>') return -1;
  char kind = ts[1];
  int size = ts[2] - '0';
  if (kind == 'u') return size == 1 ? PP_U8 : size == 4 ? PP_U32 : size == 8 ? PP_U64 : -1;
  if (kind == 'i') return size == 4 ? PP_I32 : size == 8 ? PP_I64 : -1;
  if (kind == 'f') return size == 4 ? PP_F32 : size == 8 ? PP_F64 : -1;
  if (kind == 'b') return size == 1 ? DT_BOOL : -1;
  return -1;
}

static int parse_cai(call *c, arr *a, PyObject *obj) {
  PyObject *d = PyObject_GetAttrString(obj, "__cuda_array_interface__");
  if (!d) return -1;
  int rc = -1;
  if (!PyDict_Check(d)) {
    PyErr_Format(PyExc_TypeError, "parprim.%s: %s.__cuda_array_interface__ is not a dict", c->fn, a->name);
    goto done;
  }
  PyObject *shape = PyDict_GetItemString(d, "shape"), *typestr = PyDict_GetItemString(d, "typestr");
  PyObject *data = PyDict_GetItemString(d, "data"), *strides = PyDict_GetItemString(d, "strides");
  PyObject *mask = PyDict_GetItemString(d, "mask"), *stream = PyDict_GetItemString(d, "stream");
  if (!shape || !typestr || !data || !PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2) {
    PyErr_Format(PyExc_TypeError, "parprim.%s: %s.__cuda_array_interface__ lacks shape, typestr or data", c->fn, a->name);
    goto done;
  }
  if (mask && mask != Py_None) {
    PyErr_Format(PyExc_TypeError, "parprim.%s: %s is a masked array", c->fn, a->name);
    goto done;
  }
  const char *ts = PyUnicode_Check(typestr) ? PyUnicode_AsUTF8(typestr) : NULL;
  if (set_dtype(c, a, parse_typestr(ts), ts ? ts : "?")) goto done;
  if (tuple_to_i64(shape, a->shape, MAXDIM, &a->ndim)) goto done;
  if (strides && strides != Py_None) {
    int nd;
    if (tuple_to_i64(strides, a->strides, MAXDIM, &nd)) goto done;
  } else {
    int64_t s = (int64_t)a->itemsize;
    for (int i = a->ndim - 1; i >= 0; i--) {
      a->strides[i] = s;
      s *= a->shape[i];
    }
  }
  if (set_shape_count(c, a)) goto done;
  a->data = PyLong_AsVoidPtr(PyTuple_GET_ITEM(data, 0));
  if (!a->data && PyErr_Occurred()) goto done;
  a->readonly = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1)) == 1;
  a->dev_type = kDLCUDA;
  a->dev_id = 0;
#ifdef PPY_HAVE_CUDA
  if (a->data) {
    struct cudaPointerAttributes pa;
    if (cudaPointerGetAttributes(&pa, a->data) == cudaSuccess) {
      a->dev_id = pa.device;
      if (pa.type == cudaMemoryTypeManaged) a->dev_type = kDLCUDAManaged;
      if (pa.type == cudaMemoryTypeHost) a->dev_type = kDLCUDAHost;
    } else {
      cudaGetLastError();
    }
  }
#endif
  if (call_bind(c, a, ppy_framework_of(obj))) goto done;
  if (stream && stream != Py_None) {
    unsigned long long s = PyLong_AsUnsignedLongLong(stream);
    if (s == (unsigned long long)-1 && PyErr_Occurred()) goto done;
    if (s == 0) {
      PyErr_Format(PyExc_ValueError, "parprim.%s: %s.__cuda_array_interface__ has stream 0, which v3 forbids", c->fn, a->name);
      goto done;
    }
    a->wait_stream = (uintptr_t)s;
  }
  rc = 0;
done:
  Py_DECREF(d);
  return rc;
}

static bool arr_contiguous(const arr *a) {
  int64_t expect = (int64_t)a->itemsize;
  if (a->n == 0) return true;
  for (int i = a->ndim - 1; i >= 0; i--) {
    if (a->shape[i] != 1 && a->strides[i] != expect) return false;
    expect *= a->shape[i];
  }
  return true;
}

/* Row pitch in elements of a 2-D array whose rows are compact (an image, a matrix with a
 * leading dimension); 0 when the layout is not that. */
size_t ppy_arr_row_pitch(const arr *a) {
  if (a->ndim != 2) return 0;
  int64_t it = (int64_t)a->itemsize;
  if (a->shape[1] > 1 && a->strides[1] != it) return 0;
  if (a->shape[0] <= 1) return (size_t)(a->shape[1] > 0 ? a->shape[1] : 1);
  if (a->strides[0] % it || a->strides[0] / it < a->shape[1]) return 0;
  return (size_t)(a->strides[0] / it);
}

static PyObject *contiguous_copy(call *c, arr *a, int fw_kind) {
  PyObject *f = NULL;
  if (fw_kind == FW_TORCH) return PyObject_CallMethod(a->obj, "contiguous", NULL);
  if (fw_kind == FW_CUPY) f = ppy_fw.cupy_ascontig;
  else if (dev_is_host(a->dev_type) && ppy_get_numpy()) f = ppy_fw.np_ascontig;
  if (f == ppy_fw.np_ascontig && a->capsule) { /* a host DLPack producer NumPy reads through from_dlpack */
    PyObject *view = PyObject_CallOneArg(ppy_fw.np_from_dlpack, a->obj);
    PyObject *r = view ? PyObject_CallOneArg(f, view) : NULL;
    Py_XDECREF(view);
    return r;
  }
  if (!f) {
    PyErr_Format(PyExc_ValueError, "parprim.%s: %s is not contiguous, and parprim cannot copy a %.100s; make it contiguous first",
                 c->fn, a->name, Py_TYPE(a->obj)->tp_name);
    return NULL;
  }
  return PyObject_CallOneArg(f, a->obj);
}

arr *ppy_call_arg_impl(call *c, PyObject *obj, int role, const char *name, int conv, int flags, int depth) {
  if (c->na >= MAXARGS) {
    PyErr_Format(PyExc_SystemError, "parprim.%s: too many array arguments", c->fn);
    return NULL;
  }
  arr *a = &c->a[c->na++];
  memset(a, 0, sizeof *a);
  a->obj = obj;
  a->name = name;
  if (!ppy_fw.numpy && !ppy_get_numpy()) return NULL;
  int rc;
  /* JAX arrays are immutable by contract; on the GPU their DLPack export does not say so,
     so an output that is one is refused here, as the buffer protocol refuses it on the CPU */
  if (role != ROLE_IN && !ppy_is_torch(obj) && ppy_framework_of(obj) == FW_JAX) {
    PyErr_Format(PyExc_ValueError, "parprim.%s: %s is read-only (JAX arrays are immutable)",
                 c->fn, name);
    return NULL;
  }
  if (ppy_is_torch(obj)) rc = parse_torch(c, a, obj);
  /* CuPy and JAX GPU arrays fill the buffer slot only to refuse it: an object that also
     exposes __cuda_array_interface__ is device memory and goes through DLPack */
  else if (PyObject_CheckBuffer(obj) && !PyObject_HasAttrString(obj, "__cuda_array_interface__"))
    rc = parse_buffer(c, a, obj, role);
  else if (PyObject_HasAttrString(obj, "__dlpack__")) rc = parse_dlpack(c, a, obj);
  else if (PyObject_HasAttrString(obj, "__cuda_array_interface__")) rc = parse_cai(c, a, obj);
  else if (conv != CONV_NONE && role == ROLE_IN && depth == 0) {
    PyObject *np = PyObject_CallFunction(ppy_fw.np_asarray, "Os", obj, conv == CONV_F32 ? "float32" : "float64");
    if (!np) return NULL;
    c->na--;
    arr *r = ppy_call_arg_impl(c, np, role, name, conv, flags, depth + 1);
    if (r) r->hold = np;
    else Py_DECREF(np);
    return r;
  } else {
    PyErr_Format(PyExc_TypeError,
                 "parprim.%s: %s must be an array (buffer protocol, __dlpack__ or __cuda_array_interface__), not %.100s",
                 c->fn, name, Py_TYPE(obj)->tp_name);
    return NULL;
  }
  if (rc) return NULL;
  if (role != ROLE_IN && a->readonly) {
    PyErr_Format(PyExc_ValueError, "parprim.%s: %s is read-only", c->fn, name);
    return NULL;
  }
  if (!(flags & ARG_ANY_LAYOUT) && !arr_contiguous(a)) {
    if (!c->copy || role != ROLE_IN || depth > 0) {
      PyErr_Format(PyExc_ValueError, "parprim.%s: %s is not contiguous%s", c->fn, name,
                   role == ROLE_IN ? "; pass copy=True to let parprim copy it" : "");
      return NULL;
    }
    PyObject *cp = contiguous_copy(c, a, ppy_is_torch(obj) ? FW_TORCH : ppy_framework_of(obj));
    if (!cp) return NULL;
    arr_release(a);
    c->na--;
    arr *r = ppy_call_arg_impl(c, cp, role, name, conv, flags, depth + 1);
    if (r) {
      Py_XDECREF(r->hold);
      r->hold = cp;
    } else {
      Py_DECREF(cp);
    }
    return r;
  }
  return a;
}

arr *ppy_call_arg(call *c, PyObject *obj, int role, const char *name) {
  return ppy_call_arg_impl(c, obj, role, name, CONV_NONE, 0, 0);
}

int ppy_want_dtype(call *c, arr *a, int dt) {
  if (a->dtype != dt) {
    PyErr_Format(PyExc_TypeError, "parprim.%s: %s has dtype %s; %s needed", c->fn, a->name, ppy_dt_name(a->dtype), ppy_dt_name(dt));
    return -1;
  }
  return 0;
}

int ppy_want_pp_dtype(call *c, arr *a) {
  if (a->dtype == DT_BOOL) {
    PyErr_Format(PyExc_TypeError, "parprim.%s: %s has dtype bool; parprim takes %s", c->fn, a->name, PPY_DTYPES_TAKEN);
    return -1;
  }
  return 0;
}

/* out=: same dtype as the result and as many elements */
int ppy_check_out(call *c, arr *o, int dt, size_t n) {
  if (ppy_want_dtype(c, o, dt)) return -1;
  if (o->n != n) {
    PyErr_Format(PyExc_ValueError, "parprim.%s: out has %zu elements; the result has %zu", c->fn, o->n, n);
    return -1;
  }
  return 0;
}

/* An input array of a dtype the library takes (not bool); NULL with the error set. */
arr *ppy_input(call *c, PyObject *obj, const char *name) {
  arr *a = ppy_call_arg(c, obj, ROLE_IN, name);
  return a && !ppy_want_pp_dtype(c, a) ? a : NULL;
}

/* out=, unless it is None: the result is written into it, so its dtype and element count
 * must be the result's. */
int ppy_user_out(call *c, outbuf *o, PyObject *out, int dt, size_t n) {
  if (out == Py_None) return 0;
  o->user = ppy_call_arg(c, out, ROLE_OUT, "out");
  return o->user && !ppy_check_out(c, o->user, dt, n) ? 0 : -1;
}

/* A job's last step: after a failure, the result buffers it took are given back (b may be
 * NULL); the status is handed on. */
pp_status ppy_job_end(pp_status s, outbuf *a, outbuf *b) {
  if (s != PP_OK) {
    ppy_out_drop(a);
    if (b) ppy_out_drop(b);
  }
  return s;
}

/* Ends the call (its arguments given back) and hands on its result, NULL on an error. */
PyObject *ppy_call_return(call *c, PyObject *result) {
  ppy_call_end(c);
  return result;
}

/* The same for a call that made result buffers a and b (b may be NULL): the ones an error
 * left unused are given back too. */
PyObject *ppy_call_return_outs(call *c, PyObject *result, outbuf *a, outbuf *b) {
  ppy_out_drop(a);
  if (b) ppy_out_drop(b);
  return ppy_call_return(c, result);
}

/* Runs the job, then makes its result array from o; NULL with the error set. */
PyObject *ppy_run_result(call *c, job_fn fn, void *job, outbuf *o, int ndim, const int64_t *shape, int dtype) {
  return ppy_run(c, fn, job) ? NULL : ppy_out_result(c, o, ndim, shape, dtype);
}

/* ------------------------------------------------------------------------------------ */
/* Running the library: lock, stream, GIL released                                      */
/* ------------------------------------------------------------------------------------ */


static int order_inputs(call *c) {
  for (int i = 0; i < c->na; i++)
    if (c->a[i].wait_stream && ppy_order_streams(c->a[i].wait_stream, c->stream)) return -1;
  return 0;
}

int ppy_run(call *c, job_fn fn, void *job) {
  ctx_state *st = c->st;
  if (st->backend == PP_BACKEND_CUDA) {
    if (order_inputs(c)) return -1;
    if (c->stream_obj) { /* the context may run on this handle until its next call */
      Py_XSETREF(c->ctxo->stream_keep, Py_NewRef(c->stream_obj));
    }
  }
  pp_status s;
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(st->lock, WAIT_LOCK);
#ifdef PPY_HAVE_CUDA
  /* the library makes its context's device current; the caller's framework keeps its own */
  int caller_device = -1;
  if (st->backend == PP_BACKEND_CUDA && cudaGetDevice(&caller_device) != cudaSuccess) caller_device = -1;
#endif
  s = PP_OK;
  if (st->backend == PP_BACKEND_CUDA) s = pp_set_stream(st->ctx, (void *)c->stream);
  if (s == PP_OK) s = fn(c, job);
  if (s != PP_OK && !c->err_set) snprintf(c->err, sizeof c->err, "%s", pp_last_error(st->ctx));
#ifdef PPY_HAVE_CUDA
  if (caller_device >= 0 && caller_device != st->device) cudaSetDevice(caller_device);
#endif
  PyThread_release_lock(st->lock);
  Py_END_ALLOW_THREADS
  if (s != PP_OK) {
    ppy_raise_status(s, c->err);
    return -1;
  }
  return 0;
}


/* inside a job (lock held, no GIL) */
pp_status ppy_out_get(call *c, outbuf *o, size_t bytes) {
  if (o->user) {
    o->ptr = o->user->data;
    return PP_OK;
  }
  if (c->out_host) {
    o->b = ppy_host_block(bytes);
    if (!o->b) {
      snprintf(c->err, sizeof c->err, "parprim.%s: no host memory for a %zu-byte result", c->fn, bytes);
      c->err_set = true;
      return PP_ERR_OUT_OF_MEMORY;
    }
  } else {
    pp_status s = ppy_device_block(c->st, bytes, &o->b);
    if (s != PP_OK) return s;
  }
  o->ptr = o->b->ptr;
  return PP_OK;
}

void ppy_out_drop(outbuf *o) {
  ppy_block_release(o->b);
  o->b = NULL;
}

PyObject *ppy_out_result(call *c, outbuf *o, int ndim, const int64_t *shape, int dtype) {
  if (o->user) return Py_NewRef(o->user->obj);
  block *b = o->b;
  o->b = NULL;
  return ppy_wrap_block(c, b, ndim, shape, dtype);
}
