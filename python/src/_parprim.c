/*
 * _parprim.c — parprim for Python: a CPython extension module in C11 over libparprim.
 *
 * What it adds to the C library is the bridge to Python's array world, without copies:
 *  - Input: an argument is read in place through the first protocol it offers, in this
 *    order: a torch tensor's own accessors (the fast path: torch's __dlpack__ is Python
 *    code and costs more than the whole call should), the buffer protocol (NumPy,
 *    memoryview, bytearray), __dlpack__ / __dlpack_device__ (versioned capsules
 *    negotiated with max_version, legacy ones otherwise), __cuda_array_interface__ v3.
 *  - Output: memory from the context (pp_malloc, recycled through a small per-context
 *    cache: cudaFree synchronises the whole device, which a call must not do) exported as
 *    a DLPack capsule and handed to the caller's framework's from_dlpack; host results go
 *    to NumPy. out= writes into the caller's array instead.
 *  - Streams: work goes on the stream the caller's framework is using (torch's or CuPy's
 *    current stream), on stream= when given, else on the legacy default stream, which
 *    every blocking stream is ordered with; DLPack producers are told that stream.
 *  - Threads: one context is used by one thread at a time, so each context has a lock,
 *    taken with the GIL released; the GIL is never held while the library runs.
 *
 * Memory lifetime: an exported block holds a reference on the context's C state (not on
 * the Python object), so a consumer may free it from any thread, with or without the GIL,
 * and the context outlives every array it allocated.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dlpack.h"
#include "parprim.h"

#ifdef PPY_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define MAXDIM 8
#define MAXARGS 10
#define DT_BOOL 100 /* flags only: not a pp_dtype */
#define STREAM_LEGACY ((uintptr_t)1)

enum { FW_ARRAY, FW_NUMPY, FW_TORCH, FW_CUPY, FW_JAX };
enum { ROLE_IN, ROLE_OUT, ROLE_INOUT };
enum { CONV_NONE, CONV_F32, CONV_F64 };

/* ------------------------------------------------------------------------------------ */
/* dtypes                                                                               */
/* ------------------------------------------------------------------------------------ */

static size_t dt_size(int t) { return t == DT_BOOL ? 1 : pp_dtype_size((pp_dtype)t); }

static const char *dt_name(int t) {
  switch (t) {
  case PP_U8: return "uint8";
  case PP_I32: return "int32";
  case PP_U32: return "uint32";
  case PP_I64: return "int64";
  case PP_U64: return "uint64";
  case PP_F32: return "float32";
  case PP_F64: return "float64";
  case DT_BOOL: return "bool";
  }
  return "unknown";
}

static const char *dt_typestr(int t) {
  switch (t) {
  case PP_U8: return "|u1";
  case PP_I32: return "<i4";
  case PP_U32: return "<u4";
  case PP_I64: return "<i8";
  case PP_U64: return "<u8";
  case PP_F32: return "<f4";
  case PP_F64: return "<f8";
  case DT_BOOL: return "|b1";
  }
  return "";
}

static DLDataType dt_dl(int t) {
  DLDataType d = {kDLUInt, 8, 1};
  switch (t) {
  case PP_U8: d.code = kDLUInt; d.bits = 8; break;
  case PP_I32: d.code = kDLInt; d.bits = 32; break;
  case PP_U32: d.code = kDLUInt; d.bits = 32; break;
  case PP_I64: d.code = kDLInt; d.bits = 64; break;
  case PP_U64: d.code = kDLUInt; d.bits = 64; break;
  case PP_F32: d.code = kDLFloat; d.bits = 32; break;
  case PP_F64: d.code = kDLFloat; d.bits = 64; break;
  case DT_BOOL: d.code = kDLBool; d.bits = 8; break;
  }
  return d;
}

static int dt_from_dl(DLDataType d) {
  if (d.lanes != 1) return -1;
  if (d.code == kDLUInt && d.bits == 8) return PP_U8;
  if (d.code == kDLInt && d.bits == 32) return PP_I32;
  if (d.code == kDLUInt && d.bits == 32) return PP_U32;
  if (d.code == kDLInt && d.bits == 64) return PP_I64;
  if (d.code == kDLUInt && d.bits == 64) return PP_U64;
  if (d.code == kDLFloat && d.bits == 32) return PP_F32;
  if (d.code == kDLFloat && d.bits == 64) return PP_F64;
  if (d.code == kDLBool && d.bits == 8) return DT_BOOL;
  return -1;
}

/* a struct-module format (buffer protocol) to a dtype; -1 when parprim has no such type */
static int dt_from_format(const char *f, Py_ssize_t itemsize) {
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

static const char DTYPES_TAKEN[] = "uint8, int32, uint32, int64, uint64, float32 or float64";

/* ------------------------------------------------------------------------------------ */
/* Context state and the output memory cache                                            */
/* ------------------------------------------------------------------------------------ */

typedef struct ctx_state ctx_state;

/* Memory handed to Python. owner NULL: host memory from aligned_alloc; else memory from
 * pp_malloc on owner's context, which goes back to owner's cache when released. */
typedef struct block {
  atomic_long refs;
  void *ptr;
  size_t bytes;
  ctx_state *owner;
  struct block *next; /* in the owner's cache */
} block;

struct ctx_state {
  atomic_long refs; /* the Python Context object and every live block */
  pp_context *ctx;
  PyThread_type_lock lock;       /* one thread at a time on ctx */
  PyThread_type_lock cache_lock; /* the cache only; never held across other locks */
  block *cache;
  size_t cached_bytes;
  pp_backend backend;
  int device; /* CUDA ordinal; -1 on the CPU */
};

/* Sizes are rounded so that a freed block serves the next call of a similar size: small
 * ones to 512 bytes, large ones to 2 MiB. */
static size_t cache_round(size_t b) {
  if (b <= 512) return 512;
  if (b <= ((size_t)1 << 20)) return (b + 511) & ~(size_t)511;
  size_t g = (size_t)2 << 20;
  return (b + g - 1) / g * g;
}

static block *cache_take(ctx_state *st, size_t bytes) {
  block *found = NULL;
  PyThread_acquire_lock(st->cache_lock, WAIT_LOCK);
  for (block **p = &st->cache; *p; p = &(*p)->next) {
    if ((*p)->bytes == bytes) {
      found = *p;
      *p = found->next;
      st->cached_bytes -= bytes;
      break;
    }
  }
  PyThread_release_lock(st->cache_lock);
  return found;
}

static void cache_put(ctx_state *st, block *b) {
  PyThread_acquire_lock(st->cache_lock, WAIT_LOCK);
  b->next = st->cache;
  st->cache = b;
  st->cached_bytes += b->bytes;
  PyThread_release_lock(st->cache_lock);
}

/* pp_free on every cached block: with st->lock held, or when st is being destroyed. */
static void cache_release_all(ctx_state *st) {
  PyThread_acquire_lock(st->cache_lock, WAIT_LOCK);
  block *b = st->cache;
  st->cache = NULL;
  st->cached_bytes = 0;
  PyThread_release_lock(st->cache_lock);
  while (b) {
    block *next = b->next;
    pp_free(st->ctx, b->ptr);
    free(b);
    b = next;
  }
}

static void state_decref(ctx_state *st) {
  if (atomic_fetch_sub(&st->refs, 1) != 1) return;
  cache_release_all(st);
  pp_destroy(st->ctx);
  PyThread_free_lock(st->lock);
  PyThread_free_lock(st->cache_lock);
  free(st);
}

/* Safe without the GIL: consumers call DLPack deleters from any thread. */
static void block_release(block *b) {
  if (!b || atomic_fetch_sub(&b->refs, 1) != 1) return;
  ctx_state *st = b->owner;
  if (!st) {
    free(b->ptr);
    free(b);
    return;
  }
  cache_put(st, b);
  state_decref(st);
}

static block *host_block(size_t bytes) {
  size_t r = bytes < 64 ? 64 : (bytes + 63) & ~(size_t)63;
  block *b = malloc(sizeof *b);
  void *p = b ? aligned_alloc(64, r) : NULL;
  if (!p) {
    free(b);
    return NULL;
  }
  atomic_init(&b->refs, 1);
  b->ptr = p;
  b->bytes = r;
  b->owner = NULL;
  b->next = NULL;
  return b;
}

/* With st->lock held. On failure pp_last_error(st->ctx) says why. */
static pp_status device_block(ctx_state *st, size_t bytes, block **out) {
  size_t r = cache_round(bytes);
  block *b = cache_take(st, r);
  if (!b) {
    void *p = NULL;
    pp_status s = pp_malloc(st->ctx, &p, r);
    if (s == PP_ERR_OUT_OF_MEMORY && st->cache) { /* what the cache holds may be enough */
      cache_release_all(st);
      s = pp_malloc(st->ctx, &p, r);
    }
    if (s != PP_OK) return s;
    b = malloc(sizeof *b);
    if (!b) {
      pp_free(st->ctx, p);
      return PP_ERR_OUT_OF_MEMORY;
    }
    b->ptr = p;
    b->bytes = r;
    b->owner = st;
  }
  atomic_init(&b->refs, 1);
  b->next = NULL;
  atomic_fetch_add(&st->refs, 1);
  *out = b;
  return PP_OK;
}

/* ------------------------------------------------------------------------------------ */
/* Streams                                                                              */
/* ------------------------------------------------------------------------------------ */

/* Make `consumer` wait for the work queued so far on `producer` (DLPack / CUDA array
 * interface stream values: 1 legacy default, 2 per-thread default, else a handle).
 * Returns 0, or -1 with a Python exception set. */
static int order_streams(uintptr_t producer, uintptr_t consumer) {
  if (producer == consumer || producer == 0 || consumer == 0) return 0;
#ifdef PPY_HAVE_CUDA
  cudaEvent_t ev;
  cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
  if (e == cudaSuccess) {
    e = cudaEventRecord(ev, (cudaStream_t)producer);
    if (e == cudaSuccess) e = cudaStreamWaitEvent((cudaStream_t)consumer, ev, 0);
    cudaEventDestroy(ev); /* released once the wait is satisfied */
  }
  if (e != cudaSuccess) {
    cudaGetLastError();
    PyErr_Format(PyExc_RuntimeError, "parprim: cannot order stream %#zx after stream %#zx: %s",
                 (size_t)consumer, (size_t)producer, cudaGetErrorString(e));
    return -1;
  }
  return 0;
#else
  PyErr_SetString(PyExc_RuntimeError, "parprim: this build has no CUDA to order streams with");
  return -1;
#endif
}

/* ------------------------------------------------------------------------------------ */
/* Framework objects, looked up once the framework is imported by the caller            */
/* ------------------------------------------------------------------------------------ */

static struct {
  PyObject *numpy, *np_from_dlpack, *np_ascontig, *np_asarray, *np_ndarray;
  PyObject *np_scalar[PP_F64 + 1]; /* numpy.uint8, ..., numpy.float64 by pp_dtype */
  PyObject *torch, *torch_tensor, *torch_from_dlpack, *torch_from_dlpack_public, *torch_raw_stream,
      *torch_current_stream;
  PyObject *torch_dtypes[8]; /* u8 i32 u32 i64 u64 f32 f64 bool */
  PyObject *cupy, *cupy_ndarray, *cupy_from_dlpack, *cupy_current_stream, *cupy_ascontig;
  PyObject *jax_from_dlpack;
} fw;

static PyObject *get_numpy(void) {
  if (fw.numpy) return fw.numpy;
  PyObject *np = PyImport_ImportModule("numpy");
  if (!np) return NULL;
  fw.np_from_dlpack = PyObject_GetAttrString(np, "from_dlpack");
  fw.np_ascontig = PyObject_GetAttrString(np, "ascontiguousarray");
  fw.np_asarray = PyObject_GetAttrString(np, "asarray");
  fw.np_ndarray = PyObject_GetAttrString(np, "ndarray");
  if (!fw.np_from_dlpack || !fw.np_ascontig || !fw.np_asarray || !fw.np_ndarray) {
    Py_DECREF(np);
    return NULL;
  }
  for (int t = PP_U8; t <= PP_F64; t++) {
    fw.np_scalar[t] = PyObject_GetAttrString(np, dt_name(t));
    if (!fw.np_scalar[t]) PyErr_Clear(); /* then 0-d results go through from_dlpack */
  }
  fw.numpy = np;
  return np;
}

/* torch only when the caller has imported it: parprim never imports torch itself */
static bool have_torch(void) {
  if (fw.torch) return true;
  PyObject *mods = PyImport_GetModuleDict();
  PyObject *t = PyDict_GetItemString(mods, "torch");
  if (!t) return false;
  PyObject *tensor = PyObject_GetAttrString(t, "Tensor");
  PyObject *from = PyObject_GetAttrString(t, "from_dlpack");
  if (!tensor || !from) {
    PyErr_Clear();
    Py_XDECREF(tensor);
    Py_XDECREF(from);
    return false;
  }
  static const char *names[8] = {"uint8", "int32", "uint32", "int64", "uint64", "float32", "float64", "bool"};
  for (int i = 0; i < 8; i++) {
    fw.torch_dtypes[i] = PyObject_GetAttrString(t, names[i]);
    if (!fw.torch_dtypes[i]) PyErr_Clear(); /* older torch without uint32 / uint64 */
  }
  PyObject *c = PyObject_GetAttrString(t, "_C");
  fw.torch_raw_stream = c ? PyObject_GetAttrString(c, "_cuda_getCurrentRawStream") : NULL;
  PyErr_Clear();
  /* the converter torch.from_dlpack ends in, called on our capsule without the Python
   * wrapper's checks: a capsule made on the caller's stream needs no stream exchange */
  PyObject *direct = c ? PyObject_GetAttrString(c, "_from_dlpack") : NULL;
  Py_XDECREF(c);
  PyErr_Clear();
  fw.torch_from_dlpack_public = Py_NewRef(from);
  if (direct) Py_SETREF(from, direct);
  PyObject *cuda = PyObject_GetAttrString(t, "cuda");
  fw.torch_current_stream = cuda ? PyObject_GetAttrString(cuda, "current_stream") : NULL;
  Py_XDECREF(cuda);
  PyErr_Clear();
  Py_INCREF(t);
  fw.torch = t;
  fw.torch_tensor = tensor;
  fw.torch_from_dlpack = from;
  return true;
}

static bool have_cupy(void) {
  if (fw.cupy) return true;
  PyObject *mods = PyImport_GetModuleDict();
  PyObject *cp = PyDict_GetItemString(mods, "cupy");
  if (!cp) return false;
  PyObject *nd = PyObject_GetAttrString(cp, "ndarray");
  PyObject *from = PyObject_GetAttrString(cp, "from_dlpack");
  PyObject *cont = PyObject_GetAttrString(cp, "ascontiguousarray");
  PyObject *cuda = PyObject_GetAttrString(cp, "cuda");
  PyObject *cur = cuda ? PyObject_GetAttrString(cuda, "get_current_stream") : NULL;
  Py_XDECREF(cuda);
  if (!nd || !from || !cont || !cur) {
    PyErr_Clear();
    Py_XDECREF(nd);
    Py_XDECREF(from);
    Py_XDECREF(cont);
    Py_XDECREF(cur);
    return false;
  }
  Py_INCREF(cp);
  fw.cupy = cp;
  fw.cupy_ndarray = nd;
  fw.cupy_from_dlpack = from;
  fw.cupy_ascontig = cont;
  fw.cupy_current_stream = cur;
  return true;
}

static PyObject *get_jax_from_dlpack(void) {
  if (fw.jax_from_dlpack) return fw.jax_from_dlpack;
  PyObject *m = PyImport_ImportModule("jax.dlpack");
  if (!m) return NULL;
  fw.jax_from_dlpack = PyObject_GetAttrString(m, "from_dlpack");
  Py_DECREF(m);
  return fw.jax_from_dlpack;
}

static bool is_torch(PyObject *o) {
  return have_torch() && PyObject_TypeCheck(o, (PyTypeObject *)fw.torch_tensor);
}

/* the framework an object's results go back to */
static int framework_of(PyObject *o) {
  if (is_torch(o)) return FW_TORCH;
  if (have_cupy() && PyObject_TypeCheck(o, (PyTypeObject *)fw.cupy_ndarray)) return FW_CUPY;
  if (fw.np_ndarray && PyObject_TypeCheck(o, (PyTypeObject *)fw.np_ndarray)) return FW_NUMPY;
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
/* Context objects                                                                      */
/* ------------------------------------------------------------------------------------ */

typedef struct {
  PyObject_HEAD
  ctx_state *st;
  PyObject *stream_keep; /* the Python stream object whose handle the context last ran on */
} ContextObject;

static PyTypeObject ContextType;

static PyObject *raise_status(pp_status s, const char *msg) {
  PyObject *type = PyExc_RuntimeError;
  switch (s) {
  case PP_ERR_INVALID_ARGUMENT:
  case PP_ERR_OVERFLOW: type = PyExc_ValueError; break;
  case PP_ERR_OUT_OF_MEMORY: type = PyExc_MemoryError; break;
  case PP_ERR_UNSUPPORTED: type = PyExc_NotImplementedError; break;
  default: break;
  }
  PyErr_SetString(type, msg && msg[0] ? msg : pp_status_string(s));
  return NULL;
}

static int parse_backend(PyObject *o, pp_backend *b) {
  const char *s = o && o != Py_None ? PyUnicode_AsUTF8(o) : "auto";
  if (!s) return -1;
  if (!strcmp(s, "auto")) *b = PP_BACKEND_AUTO;
  else if (!strcmp(s, "cpu")) *b = PP_BACKEND_CPU;
  else if (!strcmp(s, "cuda")) *b = PP_BACKEND_CUDA;
  else {
    PyErr_Format(PyExc_ValueError, "parprim.Context: backend must be 'auto', 'cpu' or 'cuda', not '%s'", s);
    return -1;
  }
  return 0;
}

/* Creation runs without the GIL: a CUDA context takes a while, a distributed one waits
 * for its peers. */
static ContextObject *context_create(pp_backend backend, int device, const pp_dist_id *id,
                                     int dist, int nranks, int rank, void *comm) {
  ctx_state *st = calloc(1, sizeof *st);
  if (!st) return (ContextObject *)PyErr_NoMemory();
  st->lock = PyThread_allocate_lock();
  st->cache_lock = PyThread_allocate_lock();
  if (!st->lock || !st->cache_lock) {
    if (st->lock) PyThread_free_lock(st->lock);
    if (st->cache_lock) PyThread_free_lock(st->cache_lock);
    free(st);
    return (ContextObject *)PyErr_NoMemory();
  }
  pp_status s;
  char err[600];
  int dev = -1;
  Py_BEGIN_ALLOW_THREADS
#ifdef PPY_HAVE_CUDA
  int previous = -1;
  if (device >= 0) {
    cudaGetDevice(&previous);
    cudaSetDevice(device);
  }
#endif
  if (comm) s = pp_create_from_comm(&st->ctx, backend, comm);
  else if (dist) s = pp_create_dist(&st->ctx, backend, id, nranks, rank);
  else s = pp_create(&st->ctx, backend);
  snprintf(err, sizeof err, "%s", pp_last_error(s == PP_OK ? st->ctx : NULL));
  if (s == PP_OK && pp_backend_of(st->ctx) == PP_BACKEND_CUDA) {
#ifdef PPY_HAVE_CUDA
    cudaGetDevice(&dev);
#else
    dev = 0;
#endif
  }
#ifdef PPY_HAVE_CUDA
  if (previous >= 0) cudaSetDevice(previous);
#endif
  Py_END_ALLOW_THREADS
  if (s != PP_OK) {
    PyThread_free_lock(st->lock);
    PyThread_free_lock(st->cache_lock);
    free(st);
    return (ContextObject *)raise_status(s, err);
  }
  st->backend = pp_backend_of(st->ctx);
  st->device = dev;
  atomic_init(&st->refs, 1);
  ContextObject *co = PyObject_New(ContextObject, &ContextType);
  if (!co) {
    state_decref(st);
    return NULL;
  }
  co->st = st;
  co->stream_keep = NULL;
  return co;
}

static PyObject *Context_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"backend", "device", "dist_id", "nranks", "rank", "mpi", "comm", NULL};
  PyObject *backend_o = Py_None, *device_o = Py_None, *id_o = Py_None, *comm_o = Py_None;
  int nranks = 0, rank = 0, mpi = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO$OiipO:Context", kwlist, &backend_o, &device_o,
                                   &id_o, &nranks, &rank, &mpi, &comm_o))
    return NULL;
  pp_backend b;
  if (parse_backend(backend_o, &b)) return NULL;
  int device = -1;
  if (device_o != Py_None) {
    device = PyLong_AsLong(device_o);
    if (device == -1 && PyErr_Occurred()) return NULL;
    if (device < 0) return PyErr_Format(PyExc_ValueError, "parprim.Context: device (%d) < 0", device);
  }
  pp_dist_id id;
  int dist = 0;
  void *comm = NULL;
  if (id_o != Py_None) {
    Py_buffer v;
    if (PyObject_GetBuffer(id_o, &v, PyBUF_SIMPLE)) return NULL;
    if (v.len != (Py_ssize_t)sizeof id.bytes) {
      PyBuffer_Release(&v);
      return PyErr_Format(PyExc_ValueError, "parprim.Context: dist_id must be %zu bytes (from parprim.dist_id_create), not %zd",
                          sizeof id.bytes, v.len);
    }
    memcpy(id.bytes, v.buf, sizeof id.bytes);
    PyBuffer_Release(&v);
    dist = 1;
  } else if (mpi) {
    dist = 1;
  }
  if (comm_o != Py_None) {
    comm = PyLong_AsVoidPtr(comm_o);
    if (!comm) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "parprim.Context: comm is a NULL address");
      return NULL;
    }
  }
  (void)type;
  return (PyObject *)context_create(b, device, id_o != Py_None ? &id : NULL, dist, nranks, rank, comm);
}

static void Context_dealloc(ContextObject *self) {
  Py_XDECREF(self->stream_keep);
  if (self->st) state_decref(self->st);
  PyObject_Free(self);
}

static PyObject *Context_repr(ContextObject *self) {
  ctx_state *st = self->st;
  if (st->backend == PP_BACKEND_CUDA)
    return PyUnicode_FromFormat("parprim.Context(backend='cuda', device=%d, rank=%d, nranks=%d)", st->device,
                                pp_rank(st->ctx), pp_nranks(st->ctx));
  return PyUnicode_FromFormat("parprim.Context(backend='cpu', rank=%d, nranks=%d)", pp_rank(st->ctx),
                              pp_nranks(st->ctx));
}

static PyObject *Context_backend(ContextObject *self, void *c) {
  (void)c;
  return PyUnicode_FromString(pp_backend_string(self->st->backend));
}
static PyObject *Context_device(ContextObject *self, void *c) {
  (void)c;
  if (self->st->device < 0) Py_RETURN_NONE;
  return PyLong_FromLong(self->st->device);
}
static PyObject *Context_rank(ContextObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(pp_rank(self->st->ctx));
}
static PyObject *Context_nranks(ContextObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(pp_nranks(self->st->ctx));
}
static PyObject *Context_cached_bytes(ContextObject *self, void *c) {
  (void)c;
  return PyLong_FromSize_t(self->st->cached_bytes);
}

static PyObject *Context_synchronize(ContextObject *self, PyObject *unused) {
  (void)unused;
  ctx_state *st = self->st;
  pp_status s;
  char err[600];
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(st->lock, WAIT_LOCK);
  s = pp_synchronize(st->ctx);
  snprintf(err, sizeof err, "%s", pp_last_error(st->ctx));
  PyThread_release_lock(st->lock);
  Py_END_ALLOW_THREADS
  if (s != PP_OK) return raise_status(s, err);
  Py_RETURN_NONE;
}

static PyObject *Context_empty_cache(ContextObject *self, PyObject *unused) {
  (void)unused;
  ctx_state *st = self->st;
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(st->lock, WAIT_LOCK);
  cache_release_all(st);
  PyThread_release_lock(st->lock);
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
}

static PyObject *Context_device_info(ContextObject *self, PyObject *unused) {
  (void)unused;
  ctx_state *st = self->st;
  pp_device_info info;
  pp_status s;
  char err[600];
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(st->lock, WAIT_LOCK);
  s = pp_get_device_info(st->ctx, &info);
  snprintf(err, sizeof err, "%s", pp_last_error(st->ctx));
  PyThread_release_lock(st->lock);
  Py_END_ALLOW_THREADS
  if (s != PP_OK) return raise_status(s, err);
  return Py_BuildValue("{s:s,s:i,s:i,s:i,s:n,s:n,s:d,s:i,s:i}", "name", info.name, "compute_major",
                       info.compute_major, "compute_minor", info.compute_minor, "multiprocessors",
                       info.multiprocessors, "global_mem_bytes", (Py_ssize_t)info.global_mem_bytes,
                       "l2_bytes", (Py_ssize_t)info.l2_bytes, "peak_bandwidth_gbs",
                       info.peak_bandwidth_gbs, "driver_version", info.driver_version,
                       "runtime_version", info.runtime_version);
}

static PyGetSetDef Context_getset[] = {
    {"backend", (getter)Context_backend, NULL, "'cpu' or 'cuda'", NULL},
    {"device", (getter)Context_device, NULL, "the CUDA device ordinal, None on the CPU", NULL},
    {"rank", (getter)Context_rank, NULL, "this process's rank (0 for a plain context)", NULL},
    {"nranks", (getter)Context_nranks, NULL, "ranks in the group (1 for a plain context)", NULL},
    {"cached_bytes", (getter)Context_cached_bytes, NULL, "freed result memory kept for reuse", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef Context_methods[] = {
    {"synchronize", (PyCFunction)Context_synchronize, METH_NOARGS, "Wait for the work queued on the context's current stream."},
    {"empty_cache", (PyCFunction)Context_empty_cache, METH_NOARGS,
     "Give the freed result memory the context keeps for reuse back to the device."},
    {"device_info", (PyCFunction)Context_device_info, METH_NOARGS, "A dict describing the device (pp_get_device_info)."},
    {NULL, NULL, 0, NULL}};

PyDoc_STRVAR(Context_doc,
             "Context(backend='auto', device=None, *, dist_id=None, nranks=0, rank=0, mpi=False, comm=None)\n\n"
             "A parprim context: a backend ('auto', 'cpu' or 'cuda'), a device, its stream and its memory.\n"
             "Every function takes ctx=; without it a default context per device is used\n"
             "(AUTO: the GPU when usable, else the CPU; PARPRIM_BACKEND=cpu|cuda overrides).\n"
             "A context serialises its calls with a lock, so threads may share one; separate\n"
             "contexts run concurrently.\n\n"
             "Distributed (one rank of a group): dist_id (128 bytes from dist_id_create on one rank,\n"
             "handed to all) with nranks and rank; mpi=True under mpirun; comm=address of an\n"
             "ncclComm_t (cuda) or MPI_Comm (cpu).\n\n"
             "    >>> ctx = parprim.Context('cpu')\n"
             "    >>> parprim.sum(np.ones(4, np.float32), ctx=ctx)\n"
             "    np.float32(4.0)\n");

static PyTypeObject ContextType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "parprim.Context",
    .tp_basicsize = sizeof(ContextObject),
    .tp_dealloc = (destructor)Context_dealloc,
    .tp_repr = (reprfunc)Context_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = Context_doc,
    .tp_methods = Context_methods,
    .tp_getset = Context_getset,
    .tp_new = Context_new,
};

/* Default contexts: one AUTO context, and one per other CUDA device met. */
#define MAX_DEVICES 64
static ContextObject *auto_default;
static ContextObject *device_default[MAX_DEVICES];

static ContextObject *default_context(int device) {
  if (!auto_default) {
    /* creation releases the GIL: another thread may have made one meanwhile */
    ContextObject *made = context_create(PP_BACKEND_AUTO, -1, NULL, 0, 0, 0, NULL);
    if (!made) return NULL;
    if (auto_default) Py_DECREF(made);
    else auto_default = made;
  }
  ContextObject *co = auto_default;
  if (device >= 0 && co->st->backend == PP_BACKEND_CUDA && co->st->device != device) {
    if (device >= MAX_DEVICES) return (ContextObject *)PyErr_Format(PyExc_ValueError, "parprim: device %d out of range", device);
    if (!device_default[device]) {
      ContextObject *made = context_create(PP_BACKEND_CUDA, device, NULL, 0, 0, 0, NULL);
      if (!made) return NULL;
      if (device_default[device]) Py_DECREF(made);
      else device_default[device] = made;
    }
    co = device_default[device];
  }
  Py_INCREF(co);
  return co;
}

static PyObject *py_default_context(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return (PyObject *)default_context(-1);
}

static PyObject *py_dist_id_create(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *backend_o = Py_None;
  if (!PyArg_ParseTuple(args, "|O:dist_id_create", &backend_o)) return NULL;
  pp_backend b;
  if (parse_backend(backend_o, &b)) return NULL;
  pp_dist_id id;
  pp_status s;
  char err[600];
  Py_BEGIN_ALLOW_THREADS
  s = pp_dist_id_create(b, &id);
  snprintf(err, sizeof err, "%s", pp_last_error(NULL));
  Py_END_ALLOW_THREADS
  if (s != PP_OK) return raise_status(s, err[0] ? err : "pp_dist_id_create failed");
  return PyBytes_FromStringAndSize((const char *)id.bytes, sizeof id.bytes);
}

/* ------------------------------------------------------------------------------------ */
/* parprim.Array: a result in memory the module owns, exported through DLPack           */
/* ------------------------------------------------------------------------------------ */

typedef struct {
  PyObject_HEAD
  block *b;
  int ndim;
  int64_t shape[MAXDIM];
  int dtype;
  int dev_type, dev_id;
  uintptr_t stream; /* where the work that wrote it was queued (0: host, already written) */
} ArrayObject;

static PyTypeObject ArrayType;

/* one allocation per export: both DLPack forms and the shape they point to */
typedef struct {
  DLManagedTensorVersioned v;
  DLManagedTensor legacy;
  int64_t shape[MAXDIM];
  block *b;
} export_t;

static void export_free(export_t *e) {
  block_release(e->b);
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
  t.dtype = dt_dl(a->dtype);
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
    if (s != -1 && order_streams(self->stream, s == 0 ? STREAM_LEGACY : (uintptr_t)s)) return NULL;
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
  PyObject *d = Py_BuildValue("{s:N,s:s,s:(NO),s:i,s:O}", "shape", shape, "typestr", dt_typestr(self->dtype), "data",
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
  return PyUnicode_FromString(dt_name(self->dtype));
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
  PyObject *r = PyUnicode_FromFormat("parprim.Array(shape=%R, dtype=%s, device=%s)", shape, dt_name(self->dtype),
                                     self->dev_type == kDLCUDA ? "cuda" : "cpu");
  Py_DECREF(shape);
  return r;
}

static void Array_dealloc(ArrayObject *self) {
  block_release(self->b);
  PyObject_Free(self);
}

static PyGetSetDef Array_getset[] = {
    {"__cuda_array_interface__", (getter)Array_cai, NULL, "CUDA array interface v3 (device memory)", NULL},
    {"__array_interface__", (getter)Array_ai, NULL, "NumPy array interface v3 (host memory)", NULL},
    {"shape", (getter)Array_shape, NULL, "shape", NULL},
    {"dtype", (getter)Array_dtype, NULL, "dtype name", NULL},
    {"device", (getter)Array_device, NULL, "'cpu' or 'cuda:N'", NULL},
    {"data_ptr", (getter)Array_data_ptr, NULL, "address of the first element", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef Array_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))Array_dlpack, METH_VARARGS | METH_KEYWORDS, "DLPack export (versioned when max_version >= (1, 0))."},
    {"__dlpack_device__", (PyCFunction)Array_dlpack_device, METH_NOARGS, "(device_type, device_id)"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject ArrayType = {
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

/* ------------------------------------------------------------------------------------ */
/* One call: its context, stream and array arguments                                    */
/* ------------------------------------------------------------------------------------ */

typedef struct {
  PyObject *obj;
  const char *name;
  void *data;
  int dtype;
  int ndim;
  int64_t shape[MAXDIM];
  int64_t strides[MAXDIM]; /* bytes */
  size_t n, itemsize;
  int dev_type, dev_id;
  bool readonly;
  uintptr_t wait_stream; /* __cuda_array_interface__'s stream, to be waited for */
  /* what to give back when the call ends */
  Py_buffer view;
  bool has_view;
  PyObject *capsule;
  void *managed;
  bool versioned;
  PyObject *hold;
} arr;

typedef struct {
  const char *fn;
  PyObject *ctx_arg, *stream_arg;
  bool copy;
  ContextObject *ctxo;
  ctx_state *st;
  uintptr_t stream;
  PyObject *stream_obj; /* the Python object the stream handle came from, kept alive */
  int fw;
  bool out_host;
  int na;
  arr a[MAXARGS];
  char err[600];
  bool err_set;
} call;

static void call_init(call *c, const char *fn, PyObject *ctx, PyObject *stream, int copy) {
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

static void call_end(call *c) {
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
    if (fw.torch_raw_stream) {
      r = PyObject_CallFunction(fw.torch_raw_stream, "i", dev_id);
      if (!r && PyErr_ExceptionMatches(PyExc_TypeError)) { /* a torch without this private call */
        PyErr_Clear();
        Py_CLEAR(fw.torch_raw_stream);
      }
    }
    if (!r && !fw.torch_raw_stream && !PyErr_Occurred()) {
      if (!fw.torch_current_stream) {
        PyErr_Format(PyExc_RuntimeError, "parprim.%s: this torch has no torch.cuda.current_stream", c->fn);
        return -1;
      }
      PyObject *s = PyObject_CallFunction(fw.torch_current_stream, "i", dev_id);
      r = s ? PyObject_GetAttrString(s, "cuda_stream") : NULL;
      Py_XDECREF(s);
    }
    if (!r) return -1;
    unsigned long long x = PyLong_AsUnsignedLongLong(r);
    Py_DECREF(r);
    if (x == (unsigned long long)-1 && PyErr_Occurred()) return -1;
    c->stream = x ? (uintptr_t)x : STREAM_LEGACY;
  } else if (fw_kind == FW_CUPY) {
    PyObject *s = PyObject_CallNoArgs(fw.cupy_current_stream);
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
      if (!PyObject_TypeCheck(c->ctx_arg, &ContextType)) {
        PyErr_Format(PyExc_TypeError, "parprim.%s: ctx must be a parprim.Context, not %.100s", c->fn,
                     Py_TYPE(c->ctx_arg)->tp_name);
        return -1;
      }
      c->ctxo = (ContextObject *)Py_NewRef(c->ctx_arg);
    } else {
      c->ctxo = default_context(on_device ? a->dev_id : -1);
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
    PyErr_Format(PyExc_TypeError, "parprim.%s: %s has dtype %s; parprim takes %s", c->fn, a->name, what, DTYPES_TAKEN);
    return -1;
  }
  a->dtype = dt;
  a->itemsize = dt_size(dt);
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
  if (set_dtype(c, a, dt_from_format(a->view.format, a->view.itemsize), a->view.format ? a->view.format : "B"))
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
  return call_bind(c, a, fw.np_ndarray && PyObject_TypeCheck(obj, (PyTypeObject *)fw.np_ndarray) ? FW_NUMPY : framework_of(obj));
}

static int get_int_attr(PyObject *o, const char *name, long long *v) {
  PyObject *r = PyObject_GetAttrString(o, name);
  if (!r) return -1;
  *v = PyLong_AsLongLong(r);
  Py_DECREF(r);
  return (*v == -1 && PyErr_Occurred()) ? -1 : 0;
}

static int call_int_method(PyObject *o, const char *name, long long *v) {
  PyObject *r = PyObject_CallMethod(o, name, NULL);
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
  PyObject *dtype = PyObject_GetAttrString(obj, "dtype");
  if (!dtype) return -1;
  static const int map[8] = {PP_U8, PP_I32, PP_U32, PP_I64, PP_U64, PP_F32, PP_F64, DT_BOOL};
  int dt = -1;
  for (int i = 0; i < 8; i++)
    if (fw.torch_dtypes[i] == dtype) dt = map[i];
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
  long long is_cuda, dev, ptr;
  if (get_int_attr(obj, "is_cuda", &is_cuda)) return -1;
  if (is_cuda) {
    if (call_int_method(obj, "get_device", &dev)) return -1;
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
  PyObject *shape = PyObject_GetAttrString(obj, "shape");
  if (!shape) return -1;
  int r = tuple_to_i64(shape, a->shape, MAXDIM, &a->ndim);
  Py_DECREF(shape);
  if (r) return -1;
  PyObject *stride = PyObject_CallMethod(obj, "stride", NULL);
  if (!stride) return -1;
  int nd;
  r = tuple_to_i64(stride, a->strides, MAXDIM, &nd);
  Py_DECREF(stride);
  if (r) return -1;
  for (int i = 0; i < a->ndim; i++) a->strides[i] *= (int64_t)a->itemsize;
  if (set_shape_count(c, a)) return -1;
  if (call_bind(c, a, FW_TORCH)) return -1;
  if (call_int_method(obj, "data_ptr", &ptr)) return -1;
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
  if (set_dtype(c, a, dt_from_dl(t->dtype), what)) return -1;
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
  if (call_bind(c, a, framework_of(obj))) return -1;
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
  if (call_bind(c, a, framework_of(obj))) goto done;
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
static size_t arr_row_pitch(const arr *a) {
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
  if (fw_kind == FW_CUPY) f = fw.cupy_ascontig;
  else if (dev_is_host(a->dev_type) && get_numpy()) f = fw.np_ascontig;
  if (f == fw.np_ascontig && a->capsule) { /* a host DLPack producer NumPy reads through from_dlpack */
    PyObject *view = PyObject_CallOneArg(fw.np_from_dlpack, a->obj);
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

enum { ARG_ANY_LAYOUT = 1 }; /* the caller checks the layout itself (pitched images, matrices) */

static arr *call_arg_impl(call *c, PyObject *obj, int role, const char *name, int conv, int flags, int depth) {
  if (c->na >= MAXARGS) {
    PyErr_Format(PyExc_SystemError, "parprim.%s: too many array arguments", c->fn);
    return NULL;
  }
  arr *a = &c->a[c->na++];
  memset(a, 0, sizeof *a);
  a->obj = obj;
  a->name = name;
  if (!fw.numpy && !get_numpy()) return NULL;
  int rc;
  if (is_torch(obj)) rc = parse_torch(c, a, obj);
  else if (PyObject_CheckBuffer(obj)) rc = parse_buffer(c, a, obj, role);
  else if (PyObject_HasAttrString(obj, "__dlpack__")) rc = parse_dlpack(c, a, obj);
  else if (PyObject_HasAttrString(obj, "__cuda_array_interface__")) rc = parse_cai(c, a, obj);
  else if (conv != CONV_NONE && role == ROLE_IN && depth == 0) {
    PyObject *np = PyObject_CallFunction(fw.np_asarray, "Os", obj, conv == CONV_F32 ? "float32" : "float64");
    if (!np) return NULL;
    c->na--;
    arr *r = call_arg_impl(c, np, role, name, conv, flags, depth + 1);
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
    PyObject *cp = contiguous_copy(c, a, is_torch(obj) ? FW_TORCH : framework_of(obj));
    if (!cp) return NULL;
    arr_release(a);
    c->na--;
    arr *r = call_arg_impl(c, cp, role, name, conv, flags, depth + 1);
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

static arr *call_arg(call *c, PyObject *obj, int role, const char *name) {
  return call_arg_impl(c, obj, role, name, CONV_NONE, 0, 0);
}

static int want_dtype(call *c, arr *a, int dt) {
  if (a->dtype != dt) {
    PyErr_Format(PyExc_TypeError, "parprim.%s: %s has dtype %s; %s needed", c->fn, a->name, dt_name(a->dtype), dt_name(dt));
    return -1;
  }
  return 0;
}

static int want_pp_dtype(call *c, arr *a) {
  if (a->dtype == DT_BOOL) {
    PyErr_Format(PyExc_TypeError, "parprim.%s: %s has dtype bool; parprim takes %s", c->fn, a->name, DTYPES_TAKEN);
    return -1;
  }
  return 0;
}

/* out=: same dtype as the result and as many elements */
static int check_out(call *c, arr *o, int dt, size_t n) {
  if (want_dtype(c, o, dt)) return -1;
  if (o->n != n) {
    PyErr_Format(PyExc_ValueError, "parprim.%s: out has %zu elements; the result has %zu", c->fn, o->n, n);
    return -1;
  }
  return 0;
}

/* ------------------------------------------------------------------------------------ */
/* Running the library: lock, stream, GIL released                                      */
/* ------------------------------------------------------------------------------------ */

typedef pp_status (*job_fn)(call *c, void *job);

static int order_inputs(call *c) {
  for (int i = 0; i < c->na; i++)
    if (c->a[i].wait_stream && order_streams(c->a[i].wait_stream, c->stream)) return -1;
  return 0;
}

static int run(call *c, job_fn fn, void *job) {
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
  s = PP_OK;
  if (st->backend == PP_BACKEND_CUDA) s = pp_set_stream(st->ctx, (void *)c->stream);
  if (s == PP_OK) s = fn(c, job);
  if (s != PP_OK && !c->err_set) snprintf(c->err, sizeof c->err, "%s", pp_last_error(st->ctx));
  PyThread_release_lock(st->lock);
  Py_END_ALLOW_THREADS
  if (s != PP_OK) {
    raise_status(s, c->err);
    return -1;
  }
  return 0;
}

/* a result buffer: the caller's out= array, or a new block (host or the context's device) */
typedef struct {
  arr *user;
  block *b;
  void *ptr;
} outbuf;

/* inside a job (lock held, no GIL) */
static pp_status out_get(call *c, outbuf *o, size_t bytes) {
  if (o->user) {
    o->ptr = o->user->data;
    return PP_OK;
  }
  if (c->out_host) {
    o->b = host_block(bytes);
    if (!o->b) {
      snprintf(c->err, sizeof c->err, "parprim.%s: no host memory for a %zu-byte result", c->fn, bytes);
      c->err_set = true;
      return PP_ERR_OUT_OF_MEMORY;
    }
  } else {
    pp_status s = device_block(c->st, bytes, &o->b);
    if (s != PP_OK) return s;
  }
  o->ptr = o->b->ptr;
  return PP_OK;
}

static void out_drop(outbuf *o) {
  block_release(o->b);
  o->b = NULL;
}

/* A result in the caller's framework. 0-d results for NumPy become NumPy scalars. */
static PyObject *wrap_block(call *c, block *b, int ndim, const int64_t *shape, int dtype) {
  ArrayObject *a = PyObject_New(ArrayObject, &ArrayType);
  if (!a) {
    block_release(b);
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
    r = cap ? PyObject_CallOneArg(fw.torch_from_dlpack, cap) : NULL;
    Py_XDECREF(cap);
    if (!r && fw.torch_from_dlpack != fw.torch_from_dlpack_public && PyErr_ExceptionMatches(PyExc_TypeError)) {
      /* a torch whose private converter takes other arguments: the public one from now on */
      PyErr_Clear();
      Py_SETREF(fw.torch_from_dlpack, Py_NewRef(fw.torch_from_dlpack_public));
      cap = array_capsule(a, false);
      r = cap ? PyObject_CallOneArg(fw.torch_from_dlpack, cap) : NULL;
      Py_XDECREF(cap);
    }
    break;
  }
  case FW_CUPY: r = PyObject_CallOneArg(fw.cupy_from_dlpack, (PyObject *)a); break;
  case FW_JAX: {
    PyObject *f = get_jax_from_dlpack();
    r = f ? PyObject_CallOneArg(f, (PyObject *)a) : NULL;
    break;
  }
  case FW_NUMPY:
    if (ndim == 0 && fw.np_scalar[dtype]) { /* a NumPy scalar straight from the value */
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
      r = v ? PyObject_CallOneArg(fw.np_scalar[dtype], v) : NULL;
      Py_XDECREF(v);
      break;
    }
    r = PyObject_CallOneArg(fw.np_from_dlpack, (PyObject *)a);
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

static PyObject *out_result(call *c, outbuf *o, int ndim, const int64_t *shape, int dtype) {
  if (o->user) return Py_NewRef(o->user->obj);
  block *b = o->b;
  o->b = NULL;
  return wrap_block(c, b, ndim, shape, dtype);
}

/* ------------------------------------------------------------------------------------ */
/* Enumerations by name                                                                 */
/* ------------------------------------------------------------------------------------ */

typedef struct {
  const char *name;
  int value;
} named;

static int by_name(call *c, const char *what, PyObject *o, const named *table, int *out) {
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
/* scipy.ndimage's names too: constant (cval 0), nearest, mirror */
static const named BORDERS[] = {{"zero", PP_BORDER_ZERO},       {"clamp", PP_BORDER_CLAMP},
                                {"mirror", PP_BORDER_MIRROR},   {"constant", PP_BORDER_ZERO},
                                {"nearest", PP_BORDER_CLAMP},   {NULL, 0}};

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
    PyErr_Format(PyExc_TypeError, "parprim.%s: value must be an integer for %s data, not %.100s", c->fn, dt_name(t),
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
    PyErr_Format(PyExc_ValueError, "parprim.%s: value %R is out of range for %s", c->fn, v, dt_name(t));
    return -1;
  }
  return 0;
}

#define COMMON_KW "out", "ctx", "stream", "copy"

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
  pp_status s = out_get(c, &j->o, j->x->itemsize);
  if (s == PP_OK) s = pp_reduce(c->st->ctx, j->op, (pp_dtype)j->x->dtype, j->x->data, j->x->n, j->o.ptr);
  if (s != PP_OK) out_drop(&j->o);
  return s;
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
  call_init(&c, fn, ctx, stream, copy);
  reduce_job j = {.op = (pp_op)op};
  PyObject *r = NULL;
  if (op_o && by_name(&c, "op", op_o, OPS, &op)) goto done;
  j.op = (pp_op)op;
  if (!(j.x = call_arg(&c, x, ROLE_IN, "x")) || want_pp_dtype(&c, j.x)) goto done;
  if (out != Py_None) {
    if (!(j.o.user = call_arg(&c, out, ROLE_OUT, "out")) || check_out(&c, j.o.user, j.x->dtype, 1)) goto done;
  }
  if (run(&c, reduce_run, &j)) goto done;
  r = out_result(&c, &j.o, 0, NULL, j.x->dtype);
done:
  call_end(&c);
  return r;
}

static PyObject *py_sum(PyObject *s, PyObject *a, PyObject *k) { (void)s; return do_reduce("sum", PP_SUM, a, k, false); }
static PyObject *py_min(PyObject *s, PyObject *a, PyObject *k) { (void)s; return do_reduce("min", PP_MIN, a, k, false); }
static PyObject *py_max(PyObject *s, PyObject *a, PyObject *k) { (void)s; return do_reduce("max", PP_MAX, a, k, false); }
static PyObject *py_reduce(PyObject *s, PyObject *a, PyObject *k) { (void)s; return do_reduce("reduce", PP_SUM, a, k, true); }

static pp_status argreduce_run(call *c, void *p) {
  reduce_job *j = p;
  pp_status s = out_get(c, &j->o, j->x->itemsize);
  if (s == PP_OK) s = out_get(c, &j->idx, sizeof(uint64_t));
  if (s == PP_OK)
    s = pp_argreduce(c->st->ctx, j->op, (pp_dtype)j->x->dtype, j->x->data, j->x->n, j->o.ptr, (uint64_t *)j->idx.ptr);
  if (s != PP_OK) {
    out_drop(&j->o);
    out_drop(&j->idx);
  }
  return s;
}

static PyObject *do_argreduce(const char *fn, int op, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"x", "return_value", "ctx", "stream", "copy", NULL};
  PyObject *x, *ctx = Py_None, *stream = Py_None;
  int copy = 0, return_value = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$pOOp", kwlist, &x, &return_value, &ctx, &stream, &copy)) return NULL;
  call c;
  call_init(&c, fn, ctx, stream, copy);
  reduce_job j = {.op = (pp_op)op};
  PyObject *r = NULL;
  if (!(j.x = call_arg(&c, x, ROLE_IN, "x")) || want_pp_dtype(&c, j.x)) goto done;
  if (run(&c, argreduce_run, &j)) goto done;
  PyObject *value = out_result(&c, &j.o, 0, NULL, j.x->dtype);
  PyObject *index = out_result(&c, &j.idx, 0, NULL, PP_I64);
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
  call_end(&c);
  return r;
}

static PyObject *py_argmin(PyObject *s, PyObject *a, PyObject *k) { (void)s; return do_argreduce("argmin", PP_MIN, a, k); }
static PyObject *py_argmax(PyObject *s, PyObject *a, PyObject *k) { (void)s; return do_argreduce("argmax", PP_MAX, a, k); }

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
  pp_status s = out_get(c, &j->o, j->x->n * j->x->itemsize);
  if (s == PP_OK)
    s = pp_scan(c->st->ctx, j->op, (pp_dtype)j->x->dtype, j->x->data, j->o.ptr, j->x->n, j->inclusive);
  if (s != PP_OK) out_drop(&j->o);
  return s;
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
  call_init(&c, fn, ctx, stream, copy);
  int op = PP_SUM;
  scan_job j = {.inclusive = cumsum ? !exclusive : inclusive != 0};
  PyObject *r = NULL;
  if (op_o && by_name(&c, "op", op_o, OPS, &op)) goto done;
  j.op = (pp_op)op;
  if (!(j.x = call_arg(&c, x, ROLE_IN, "x")) || want_pp_dtype(&c, j.x)) goto done;
  if (out != Py_None) {
    if (!(j.o.user = call_arg(&c, out, ROLE_OUT, "out")) || check_out(&c, j.o.user, j.x->dtype, j.x->n)) goto done;
  }
  if (run(&c, scan_run, &j)) goto done;
  r = out_result(&c, &j.o, j.x->ndim, j.x->shape, j.x->dtype);
done:
  call_end(&c);
  return r;
}

static PyObject *py_scan(PyObject *s, PyObject *a, PyObject *k) { (void)s; return do_scan("scan", a, k, false); }
static PyObject *py_cumsum(PyObject *s, PyObject *a, PyObject *k) { (void)s; return do_scan("cumsum", a, k, true); }

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
  pp_status s = out_get(c, &j->o, j->x->n * j->x->itemsize);
  if (s != PP_OK) return s;
  if (j->kind == 0)
    s = pp_select(ctx, (pp_dtype)j->x->dtype, j->x->data, j->x->n, j->cmp, j->value, j->o.ptr, &j->count);
  else if (j->kind == 1)
    s = pp_select_flagged(ctx, j->x->itemsize, j->x->data, j->flags->data, j->x->n, j->o.ptr, &j->count);
  else
    s = pp_partition(ctx, (pp_dtype)j->x->dtype, j->x->data, j->x->n, j->cmp, j->value, j->o.ptr, &j->count);
  if (s != PP_OK) out_drop(&j->o);
  return s;
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
  call_init(&c, fn, ctx, stream, copy);
  select_job j = {.kind = kind};
  PyObject *r = NULL;
  int cmp = PP_GT;
  if (cmp_o && by_name(&c, "cmp", cmp_o, CMPS, &cmp)) goto done;
  j.cmp = (pp_cmp)cmp;
  if (!(j.x = call_arg(&c, x, ROLE_IN, "x")) || want_pp_dtype(&c, j.x)) goto done;
  if (value && scalar_of(&c, value, j.x->dtype, j.value)) goto done;
  if (flags) {
    if (!(j.flags = call_arg(&c, flags, ROLE_IN, "flags"))) goto done;
    if (j.flags->dtype != PP_U8 && j.flags->dtype != DT_BOOL) {
      PyErr_Format(PyExc_TypeError, "parprim.%s: flags must be bool or uint8, not %s", fn, dt_name(j.flags->dtype));
      goto done;
    }
    if (j.flags->n != j.x->n) {
      PyErr_Format(PyExc_ValueError, "parprim.%s: flags has %zu elements, x has %zu", fn, j.flags->n, j.x->n);
      goto done;
    }
  }
  if (out != Py_None) {
    if (!(j.o.user = call_arg(&c, out, ROLE_OUT, "out")) || check_out(&c, j.o.user, j.x->dtype, j.x->n)) goto done;
  }
  if (run(&c, select_run, &j)) goto done;
  if (kind == 2) {
    int64_t n = (int64_t)j.x->n;
    PyObject *o = out_result(&c, &j.o, 1, &n, j.x->dtype);
    if (o) r = Py_BuildValue("(NK)", o, (unsigned long long)j.count);
  } else {
    int64_t n = (int64_t)j.count;
    r = out_result(&c, &j.o, 1, &n, j.x->dtype);
  }
done:
  out_drop(&j.o);
  call_end(&c);
  return r;
}

static PyObject *py_select(PyObject *s, PyObject *a, PyObject *k) { (void)s; return do_select("select", 0, a, k); }
static PyObject *py_select_flagged(PyObject *s, PyObject *a, PyObject *k) { (void)s; return do_select("select_flagged", 1, a, k); }
static PyObject *py_partition(PyObject *s, PyObject *a, PyObject *k) { (void)s; return do_select("partition", 2, a, k); }

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

static pp_status sort_run(call *c, void *p) {
  sort_job *j = p;
  pp_context *ctx = c->st->ctx;
  size_t n = j->x->n;
  size_t vsize = j->values ? j->values->itemsize : j->indices ? j->index_size : 0;
  pp_status s = out_get(c, &j->keys, n * j->x->itemsize);
  if (s == PP_OK && vsize) s = out_get(c, &j->vals, n * vsize);
  if (s == PP_OK) s = pp_copy(ctx, j->keys.ptr, j->x->data, n * j->x->itemsize);
  if (s == PP_OK && j->values) s = pp_copy(ctx, j->vals.ptr, j->values->data, n * vsize);
  if (s == PP_OK && j->indices) s = fill_iota(c, j->vals.ptr, n, vsize);
  if (s == PP_OK) s = pp_sort(ctx, (pp_dtype)j->x->dtype, j->keys.ptr, vsize ? j->vals.ptr : NULL, vsize, n, &j->opts);
  if (s != PP_OK) {
    out_drop(&j->keys);
    out_drop(&j->vals);
  }
  return s;
}

PyDoc_STRVAR(sort_doc,
             "sort(x, *, values=None, descending=False, algorithm='auto', return_indices=False,\n"
             "     index_dtype='int64', out=None, values_out=None, ctx=None, stream=None, copy=False)\n\n"
             "Stable sort of x (flattened). Floats: -0.0 == +0.0, NaN last (first when descending).\n"
             "values= sorts (keys, values) pairs (values of 4 or 8 bytes) and returns both;\n"
             "return_indices=True returns (sorted, indices) like torch.sort.\n"
             "algorithm: 'auto', 'radix', 'merge', 'sample' or 'quick'. out=x sorts in place.\n\n"
             "    >>> parprim.sort(np.array([3, 1, 2], np.int32))\n"
             "    array([1, 2, 3], dtype=int32)\n");

static PyObject *py_sort(PyObject *self, PyObject *args, PyObject *kw) {
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
  call_init(&c, "sort", ctx, stream, copy);
  sort_job j = {.opts = {descending ? PP_DESCENDING : PP_ASCENDING, PP_SORT_AUTO}, .indices = return_indices != 0,
                .index_size = 8};
  PyObject *r = NULL;
  int algo = PP_SORT_AUTO;
  if (algo_o && by_name(&c, "algorithm", algo_o, ALGOS, &algo)) goto done;
  j.opts.algo = (pp_sort_algo)algo;
  if (index_dtype) {
    static const named IDX[] = {{"int64", 8}, {"int32", 4}, {NULL, 0}};
    int sz;
    if (by_name(&c, "index_dtype", index_dtype, IDX, &sz)) goto done;
    j.index_size = (size_t)sz;
  }
  if (values != Py_None && return_indices) {
    PyErr_SetString(PyExc_ValueError, "parprim.sort: values= and return_indices=True exclude each other");
    goto done;
  }
  if (!(j.x = call_arg(&c, x, ROLE_IN, "x")) || want_pp_dtype(&c, j.x)) goto done;
  if (j.indices && j.index_size == 4 && j.x->n > (size_t)INT32_MAX) {
    PyErr_Format(PyExc_ValueError, "parprim.sort: %zu elements do not fit int32 indices", j.x->n);
    goto done;
  }
  if (values != Py_None) {
    if (!(j.values = call_arg(&c, values, ROLE_IN, "values"))) goto done;
    if (j.values->itemsize != 4 && j.values->itemsize != 8) {
      PyErr_Format(PyExc_TypeError, "parprim.sort: values must have 4- or 8-byte elements, not %s", dt_name(j.values->dtype));
      goto done;
    }
    if (j.values->n != j.x->n) {
      PyErr_Format(PyExc_ValueError, "parprim.sort: values has %zu elements, x has %zu", j.values->n, j.x->n);
      goto done;
    }
  }
  if (out != Py_None) {
    if (!(j.keys.user = call_arg(&c, out, ROLE_OUT, "out")) || check_out(&c, j.keys.user, j.x->dtype, j.x->n)) goto done;
  }
  if (values_out != Py_None) {
    if (!j.values) {
      PyErr_SetString(PyExc_ValueError, "parprim.sort: values_out= needs values=");
      goto done;
    }
    if (!(j.vals.user = call_arg(&c, values_out, ROLE_OUT, "values_out")) ||
        check_out(&c, j.vals.user, j.values->dtype, j.x->n))
      goto done;
  }
  if (run(&c, sort_run, &j)) goto done;
  int64_t n = (int64_t)j.x->n;
  PyObject *keys = out_result(&c, &j.keys, 1, &n, j.x->dtype);
  if (!keys || (!j.values && !j.indices)) {
    r = keys;
    goto done;
  }
  int vdt = j.values ? j.values->dtype : j.index_size == 8 ? PP_I64 : PP_I32;
  PyObject *vals = out_result(&c, &j.vals, 1, &n, vdt);
  r = vals ? PyTuple_Pack(2, keys, vals) : NULL;
  Py_DECREF(keys);
  Py_XDECREF(vals);
done:
  out_drop(&j.keys);
  out_drop(&j.vals);
  call_end(&c);
  return r;
}

typedef struct {
  arr *a, *b;
  outbuf o;
  pp_order order;
} merge_job;

static pp_status merge_run(call *c, void *p) {
  merge_job *j = p;
  pp_status s = out_get(c, &j->o, (j->a->n + j->b->n) * j->a->itemsize);
  if (s == PP_OK)
    s = pp_merge(c->st->ctx, (pp_dtype)j->a->dtype, j->a->data, j->a->n, j->b->data, j->b->n, j->o.ptr, j->order);
  if (s != PP_OK) out_drop(&j->o);
  return s;
}

static PyObject *py_merge(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"a", "b", "descending", COMMON_KW, NULL};
  PyObject *a, *b, *out = Py_None, *ctx = Py_None, *stream = Py_None;
  int descending = 0, copy = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|$pOOOp", kwlist, &a, &b, &descending, &out, &ctx, &stream, &copy))
    return NULL;
  call c;
  call_init(&c, "merge", ctx, stream, copy);
  merge_job j = {.order = descending ? PP_DESCENDING : PP_ASCENDING};
  PyObject *r = NULL;
  if (!(j.a = call_arg(&c, a, ROLE_IN, "a")) || want_pp_dtype(&c, j.a)) goto done;
  if (!(j.b = call_arg(&c, b, ROLE_IN, "b")) || want_dtype(&c, j.b, j.a->dtype)) goto done;
  if (out != Py_None) {
    if (!(j.o.user = call_arg(&c, out, ROLE_OUT, "out")) || check_out(&c, j.o.user, j.a->dtype, j.a->n + j.b->n)) goto done;
  }
  if (run(&c, merge_run, &j)) goto done;
  int64_t n = (int64_t)(j.a->n + j.b->n);
  r = out_result(&c, &j.o, 1, &n, j.a->dtype);
done:
  call_end(&c);
  return r;
}

/* ------------------------------------------------------------------------------------ */
/* Top-k                                                                                */
/* ------------------------------------------------------------------------------------ */

static PyTypeObject *TopKType;

typedef struct {
  arr *x;
  size_t k, rows, cols;
  bool largest, by_rows;
  outbuf vals, idx;
} topk_job;

static pp_status topk_run(call *c, void *p) {
  topk_job *j = p;
  size_t count = j->by_rows ? j->rows * j->k : j->k;
  pp_status s = out_get(c, &j->vals, count * j->x->itemsize);
  if (s == PP_OK) s = out_get(c, &j->idx, count * sizeof(uint64_t));
  if (s == PP_OK) {
    if (j->by_rows)
      s = pp_topk_rows(c->st->ctx, (pp_dtype)j->x->dtype, j->x->data, j->rows, j->cols, j->k, j->largest, j->vals.ptr,
                       (uint64_t *)j->idx.ptr);
    else
      s = pp_topk(c->st->ctx, (pp_dtype)j->x->dtype, j->x->data, j->x->n, j->k, j->largest, j->vals.ptr,
                  (uint64_t *)j->idx.ptr);
  }
  if (s != PP_OK) {
    out_drop(&j->vals);
    out_drop(&j->idx);
  }
  return s;
}

static PyObject *py_topk(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"x", "k", "largest", "dim", "ctx", "stream", "copy", NULL};
  PyObject *x, *ctx = Py_None, *stream = Py_None;
  Py_ssize_t k;
  int largest = 1, copy = 0, dim = -1;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "On|$piOOp", kwlist, &x, &k, &largest, &dim, &ctx, &stream, &copy)) return NULL;
  call c;
  call_init(&c, "topk", ctx, stream, copy);
  topk_job j = {.largest = largest != 0};
  PyObject *r = NULL;
  if (k < 0) {
    PyErr_Format(PyExc_ValueError, "parprim.topk: k (%zd) < 0", k);
    goto done;
  }
  j.k = (size_t)k;
  if (!(j.x = call_arg(&c, x, ROLE_IN, "x")) || want_pp_dtype(&c, j.x)) goto done;
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
  if (run(&c, topk_run, &j)) goto done;
  int64_t shape[2] = {(int64_t)j.rows, (int64_t)j.k};
  int nd = j.by_rows ? 2 : 1;
  const int64_t *sh = j.by_rows ? shape : shape + 1;
  PyObject *v = out_result(&c, &j.vals, nd, sh, j.x->dtype);
  PyObject *i = v ? out_result(&c, &j.idx, nd, sh, PP_I64) : NULL;
  if (v && i && (r = PyStructSequence_New(TopKType))) {
    PyStructSequence_SET_ITEM(r, 0, v);
    PyStructSequence_SET_ITEM(r, 1, i);
  } else {
    Py_XDECREF(v);
    Py_XDECREF(i);
  }
done:
  out_drop(&j.vals);
  out_drop(&j.idx);
  call_end(&c);
  return r;
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
  pp_status s = out_get(c, &j->o, bins * sizeof(uint64_t));
  if (s != PP_OK) return s;
  if (j->kind == 0)
    s = pp_histogram_even(ctx, (pp_dtype)j->x->dtype, j->x->data, j->x->n, j->bins, j->lo, j->hi, j->o.ptr);
  else if (j->kind == 1)
    s = pp_histogram_range(ctx, (pp_dtype)j->x->dtype, j->x->data, j->x->n, j->edges->data, j->bins, j->o.ptr);
  else
    s = pp_histogram_image(ctx, j->x->data, j->width, j->height, j->pitch, j->channels, j->o.ptr);
  if (s != PP_OK) out_drop(&j->o);
  return s;
}

PyDoc_STRVAR(histogram_doc,
             "histogram(x, bins, range=None, *, out=None, ctx=None, stream=None, copy=False)\n\n"
             "Counts (int64) of x in bins. bins an int: even bins over range=(lo, hi), where x counts\n"
             "when lo <= x < hi (values equal to hi are not counted, unlike numpy's last bin).\n"
             "bins an array of bins+1 increasing edges: x counts in bin i when edges[i] <= x < edges[i+1].\n"
             "NaN is never counted.\n\n"
             "    >>> parprim.histogram(np.array([0.5, 1.5, 1.7], np.float32), 2, range=(0, 2))\n"
             "    array([1, 2])\n");

static PyObject *py_histogram(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"x", "bins", "range", COMMON_KW, NULL};
  PyObject *x, *bins, *range = Py_None, *out = Py_None, *ctx = Py_None, *stream = Py_None;
  int copy = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O$OOOp", kwlist, &x, &bins, &range, &out, &ctx, &stream, &copy))
    return NULL;
  call c;
  call_init(&c, "histogram", ctx, stream, copy);
  hist_job j = {0};
  PyObject *r = NULL;
  if (!(j.x = call_arg(&c, x, ROLE_IN, "x")) || want_pp_dtype(&c, j.x)) goto done;
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
    if (!(j.edges = call_arg_impl(&c, bins, ROLE_IN, "bins", CONV_F64, 0, 0)) || want_dtype(&c, j.edges, PP_F64)) goto done;
    if (j.edges->ndim != 1 || j.edges->n < 2) {
      PyErr_SetString(PyExc_ValueError, "parprim.histogram: edges must be 1-D with at least 2 entries");
      goto done;
    }
    j.bins = j.edges->n - 1;
  }
  if (out != Py_None) {
    if (!(j.o.user = call_arg(&c, out, ROLE_OUT, "out"))) goto done;
    if (j.o.user->dtype != PP_I64 && j.o.user->dtype != PP_U64) {
      PyErr_Format(PyExc_TypeError, "parprim.histogram: out must be int64 or uint64, not %s", dt_name(j.o.user->dtype));
      goto done;
    }
    if (check_out(&c, j.o.user, j.o.user->dtype, j.bins)) goto done;
  }
  if (run(&c, hist_run, &j)) goto done;
  int64_t n = (int64_t)j.bins;
  r = out_result(&c, &j.o, 1, &n, PP_I64);
done:
  call_end(&c);
  return r;
}

static PyObject *py_histogram_image(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"pixels", COMMON_KW, NULL};
  PyObject *x, *out = Py_None, *ctx = Py_None, *stream = Py_None;
  int copy = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$OOOp", kwlist, &x, &out, &ctx, &stream, &copy)) return NULL;
  call c;
  call_init(&c, "histogram_image", ctx, stream, copy);
  hist_job j = {.kind = 2};
  PyObject *r = NULL;
  if (!(j.x = call_arg_impl(&c, x, ROLE_IN, "pixels", CONV_NONE, ARG_ANY_LAYOUT, 0)) || want_dtype(&c, j.x, PP_U8))
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
    if (!(j.o.user = call_arg(&c, out, ROLE_OUT, "out"))) goto done;
    if (check_out(&c, j.o.user, j.o.user->dtype == PP_U64 ? PP_U64 : PP_I64, (size_t)j.channels * 256)) goto done;
  }
  if (run(&c, hist_run, &j)) goto done;
  int64_t shape[2] = {j.channels, 256};
  r = out_result(&c, &j.o, 2, shape, PP_I64);
done:
  call_end(&c);
  return r;
}

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

typedef struct {
  arr *a, *b;
  pp_trans ta, tb;
  size_t m, n, k, lda, ldb, ldc;
  float alpha, beta;
  outbuf o;
} gemm_job;

static pp_status gemm_run(call *c, void *p) {
  gemm_job *j = p;
  pp_status s = out_get(c, &j->o, j->m * j->ldc * sizeof(float));
  if (s == PP_OK)
    s = pp_sgemm(c->st->ctx, PP_ROW_MAJOR, j->ta, j->tb, j->m, j->n, j->k, j->alpha, j->a->data, j->lda, j->b->data,
                 j->ldb, j->beta, j->o.ptr, j->ldc);
  if (s != PP_OK) out_drop(&j->o);
  return s;
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
  call_init(&c, fn, ctx, stream, copy);
  gemm_job j = {.alpha = (float)alpha, .beta = (float)beta};
  PyObject *r = NULL;
  bool at, bt;
  if (!(j.a = call_arg_impl(&c, a, ROLE_IN, "a", CONV_NONE, ARG_ANY_LAYOUT, 0)) || want_dtype(&c, j.a, PP_F32)) goto done;
  if (!(j.b = call_arg_impl(&c, b, ROLE_IN, "b", CONV_NONE, ARG_ANY_LAYOUT, 0)) || want_dtype(&c, j.b, PP_F32)) goto done;
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
  if (target != Py_None) {
    bool ct;
    if (!(j.o.user = call_arg_impl(&c, target, inplace ? ROLE_INOUT : ROLE_OUT, inplace ? "c" : "out", CONV_NONE,
                                   ARG_ANY_LAYOUT, 0)) ||
        want_dtype(&c, j.o.user, PP_F32) || as_matrix(&c, j.o.user, &j.ldc, &ct))
      goto done;
    if (ct || (size_t)j.o.user->shape[0] != j.m || (size_t)j.o.user->shape[1] != j.n) {
      PyErr_Format(PyExc_ValueError, "parprim.%s: %s must be a row-major %zu x %zu float32 matrix", fn,
                   inplace ? "c" : "out", j.m, j.n);
      goto done;
    }
  }
  if (run(&c, gemm_run, &j)) goto done;
  int64_t shape[2] = {(int64_t)j.m, (int64_t)j.n};
  r = out_result(&c, &j.o, 2, shape, PP_F32);
done:
  call_end(&c);
  return r;
}

static PyObject *py_matmul(PyObject *s, PyObject *a, PyObject *k) { (void)s; return do_gemm("matmul", false, a, k); }
static PyObject *py_sgemm(PyObject *s, PyObject *a, PyObject *k) { (void)s; return do_gemm("sgemm", true, a, k); }

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
  pp_status s = out_get(c, &j->o, j->height * j->dst_pitch * sizeof(float));
  if (s != PP_OK) return s;
  if (j->filter)
    s = pp_conv2d(c->st->ctx, j->src->data, j->width, j->height, j->src_pitch, j->filter->data,
                  (size_t)j->filter->shape[1], (size_t)j->filter->shape[0], j->border, j->o.ptr, j->dst_pitch);
  else
    s = pp_conv2d_separable(c->st->ctx, j->src->data, j->width, j->height, j->src_pitch, j->row->data, j->row->n,
                            j->col->data, j->col->n, j->border, j->o.ptr, j->dst_pitch);
  if (s != PP_OK) out_drop(&j->o);
  return s;
}

static int as_image(call *c, arr *a, size_t *pitch) {
  *pitch = arr_row_pitch(a);
  if (!*pitch) {
    PyErr_Format(PyExc_ValueError, "parprim.%s: %s must be a 2-D float32 image with compact rows", c->fn, a->name);
    return -1;
  }
  return 0;
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
  call_init(&c, fn, ctx, stream, copy);
  conv_job j = {0};
  PyObject *r = NULL;
  int border = PP_BORDER_ZERO;
  if (border_o && by_name(&c, "border", border_o, BORDERS, &border)) goto done;
  j.border = (pp_border)border;
  if (!(j.src = call_arg_impl(&c, image, ROLE_IN, "image", CONV_NONE, ARG_ANY_LAYOUT, 0)) || want_dtype(&c, j.src, PP_F32) ||
      as_image(&c, j.src, &j.src_pitch))
    goto done;
  j.height = (size_t)j.src->shape[0];
  j.width = (size_t)j.src->shape[1];
  if (!separable) {
    if (!(j.filter = call_arg_impl(&c, f1, ROLE_IN, "filter", CONV_F32, 0, 0)) || want_dtype(&c, j.filter, PP_F32)) goto done;
    if (j.filter->ndim != 2) {
      PyErr_Format(PyExc_ValueError, "parprim.%s: filter must be 2-D (fh, fw), not %d-D", fn, j.filter->ndim);
      goto done;
    }
  } else {
    if (!(j.row = call_arg_impl(&c, f1, ROLE_IN, "row_filter", CONV_F32, 0, 0)) || want_dtype(&c, j.row, PP_F32)) goto done;
    if (!(j.col = call_arg_impl(&c, f2, ROLE_IN, "col_filter", CONV_F32, 0, 0)) || want_dtype(&c, j.col, PP_F32)) goto done;
    if (j.row->ndim != 1 || j.col->ndim != 1) {
      PyErr_Format(PyExc_ValueError, "parprim.%s: row_filter and col_filter must be 1-D", fn);
      goto done;
    }
  }
  j.dst_pitch = j.width > 0 ? j.width : 1;
  if (out != Py_None) {
    if (!(j.o.user = call_arg_impl(&c, out, ROLE_OUT, "out", CONV_NONE, ARG_ANY_LAYOUT, 0)) ||
        want_dtype(&c, j.o.user, PP_F32) || as_image(&c, j.o.user, &j.dst_pitch))
      goto done;
    if ((size_t)j.o.user->shape[0] != j.height || (size_t)j.o.user->shape[1] != j.width) {
      PyErr_Format(PyExc_ValueError, "parprim.%s: out must be %zu x %zu like the image", fn, j.height, j.width);
      goto done;
    }
  }
  if (run(&c, conv_run, &j)) goto done;
  int64_t shape[2] = {(int64_t)j.height, (int64_t)j.width};
  r = out_result(&c, &j.o, 2, shape, PP_F32);
done:
  call_end(&c);
  return r;
}

static PyObject *py_conv2d(PyObject *s, PyObject *a, PyObject *k) { (void)s; return do_conv("conv2d", false, a, k); }
static PyObject *py_conv2d_separable(PyObject *s, PyObject *a, PyObject *k) { (void)s; return do_conv("conv2d_separable", true, a, k); }

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
    s = out_get(c, &j->ax, bytes);
    if (s == PP_OK) s = out_get(c, &j->ay, bytes);
    if (s == PP_OK) s = out_get(c, &j->az, bytes);
    if (s == PP_OK) s = pp_nbody_accel(ctx, &j->b, j->softening, j->ax.ptr, j->ay.ptr, j->az.ptr);
    if (s != PP_OK) {
      out_drop(&j->ax);
      out_drop(&j->ay);
      out_drop(&j->az);
    }
  } else if (j->op == 1) {
    s = pp_nbody_step(ctx, &j->b, j->dt, j->softening, j->steps);
  } else {
    s = pp_nbody_energy(ctx, &j->b, j->softening, &j->kinetic, &j->potential);
  }
  return s;
}

static PyObject *py_nbody(PyObject *self, PyObject *args, PyObject *kw) {
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
  call_init(&c, "NBody", ctx, stream, 0);
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
    arr *a = call_arg(&c, o[i], role, names[i]);
    if (!a || want_dtype(&c, a, PP_F32)) goto done;
    if (i == 0) j.b.n = a->n;
    if (a->n != j.b.n) {
      PyErr_Format(PyExc_ValueError, "parprim.NBody: %s has %zu elements, x has %zu", names[i], a->n, j.b.n);
      goto done;
    }
    *fields[i] = a->data;
  }
  if (run(&c, nbody_run, &j)) goto done;
  if (j.op == 0) {
    int64_t n = (int64_t)j.b.n;
    PyObject *x = out_result(&c, &j.ax, 1, &n, PP_F32);
    PyObject *y = x ? out_result(&c, &j.ay, 1, &n, PP_F32) : NULL;
    PyObject *z = y ? out_result(&c, &j.az, 1, &n, PP_F32) : NULL;
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
  out_drop(&j.ax);
  out_drop(&j.ay);
  out_drop(&j.az);
  call_end(&c);
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
  pp_status s = out_get(c, &j->o, 8);
  for (int w = 0; s == PP_OK && w < 10; w++) s = pp_reduce(ctx, PP_SUM, (pp_dtype)j->x->dtype, j->x->data, j->x->n, j->o.ptr);
  if (s == PP_OK) s = pp_synchronize(ctx);
  double t0 = now_s();
  for (long i = 0; s == PP_OK && i < j->iters; i++)
    s = pp_reduce(ctx, PP_SUM, (pp_dtype)j->x->dtype, j->x->data, j->x->n, j->o.ptr);
  if (s == PP_OK) s = pp_synchronize(ctx);
  j->seconds = now_s() - t0;
  out_drop(&j->o);
  return s;
}

static PyObject *py_bench_reduce_c(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *kwlist[] = {"x", "iters", "ctx", NULL};
  PyObject *x, *ctx = Py_None;
  long iters = 1000;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|l$O", kwlist, &x, &iters, &ctx)) return NULL;
  call c;
  call_init(&c, "_bench_reduce_c", ctx, Py_None, 0);
  bench_job j = {.iters = iters > 0 ? iters : 1};
  PyObject *r = NULL;
  if ((j.x = call_arg(&c, x, ROLE_IN, "x")) && !want_pp_dtype(&c, j.x) && !run(&c, bench_run, &j))
    r = PyFloat_FromDouble(j.seconds / (double)j.iters);
  call_end(&c);
  return r;
}

/* ------------------------------------------------------------------------------------ */
/* The module                                                                           */
/* ------------------------------------------------------------------------------------ */

#define KW (PyCFunction)(void (*)(void))
#define ARGS_KW METH_VARARGS | METH_KEYWORDS
#define COMMON_DOC "ctx= picks a parprim.Context, stream= a CUDA stream (int or object with .cuda_stream / .ptr),\n" \
                   "copy=True copies a non-contiguous input instead of refusing it.\n\n"

static PyMethodDef methods[] = {
    {"sum", KW py_sum, ARGS_KW,
     "sum(x, *, out=None, ctx=None, stream=None, copy=False)\n\nSum of all elements, in x's dtype (integers wrap).\n"
     "The result stays on x's device: a 0-d tensor for torch / CuPy / JAX, a NumPy scalar for NumPy.\n" COMMON_DOC
     "    >>> parprim.sum(np.arange(5, dtype=np.int32))\n    np.int32(10)\n"},
    {"min", KW py_min, ARGS_KW,
     "min(x, *, out=None, ctx=None, stream=None, copy=False)\n\nSmallest element; NaN ignored unless all are NaN;\n"
     "empty x gives the largest value of the dtype (+inf).\n\n    >>> parprim.min(np.array([3., 1.], np.float32))\n    np.float32(1.0)\n"},
    {"max", KW py_max, ARGS_KW,
     "max(x, *, out=None, ctx=None, stream=None, copy=False)\n\nLargest element; NaN ignored unless all are NaN;\n"
     "empty x gives the lowest value of the dtype (-inf).\n\n    >>> parprim.max(np.array([3., 1.], np.float32))\n    np.float32(3.0)\n"},
    {"reduce", KW py_reduce, ARGS_KW,
     "reduce(x, op='sum', *, out=None, ctx=None, stream=None, copy=False)\n\nop: 'sum', 'min' or 'max'.\n\n"
     "    >>> parprim.reduce(np.array([1, 5], np.uint32), 'max')\n    np.uint32(5)\n"},
    {"argmin", KW py_argmin, ARGS_KW,
     "argmin(x, *, return_value=False, ctx=None, stream=None, copy=False)\n\nIndex (int64) of the first smallest element\n"
     "(-0.0 ties with +0.0, NaN ignored); with return_value=True, (value, index).\n\n"
     "    >>> parprim.argmin(np.array([3., 1., 1.], np.float32))\n    np.int64(1)\n"},
    {"argmax", KW py_argmax, ARGS_KW,
     "argmax(x, *, return_value=False, ctx=None, stream=None, copy=False)\n\nIndex (int64) of the first largest element;\n"
     "with return_value=True, (value, index).\n\n    >>> parprim.argmax(np.array([3., 7.], np.float32))\n    np.int64(1)\n"},
    {"scan", KW py_scan, ARGS_KW,
     "scan(x, op='sum', *, inclusive=True, out=None, ctx=None, stream=None, copy=False)\n\n"
     "Prefix sum / min / max over x in memory order (the result has x's shape). Exclusive scans start\n"
     "from the identity of op. out=x scans in place.\n\n"
     "    >>> parprim.scan(np.array([3, 1, 2], np.int32), 'max')\n    array([3, 3, 3], dtype=int32)\n"},
    {"cumsum", KW py_cumsum, ARGS_KW,
     "cumsum(x, *, exclusive=False, out=None, ctx=None, stream=None, copy=False)\n\nInclusive (or exclusive) prefix sum.\n\n"
     "    >>> parprim.cumsum(np.array([1, 2, 3], np.int32))\n    array([1, 3, 6], dtype=int32)\n"},
    {"select", KW py_select, ARGS_KW,
     "select(x, cmp, value, *, ctx=None, stream=None, copy=False)\n\nThe elements of x with (x cmp value), in order.\n"
     "cmp: '>', '>=', '<', '<=', '==', '!=' (or 'gt', ...). NaN compares false except under '!='.\n"
     "The count is needed on the host to size the result, so this call waits for the device.\n\n"
     "    >>> parprim.select(np.array([1, 5, 3], np.int32), '>', 2)\n    array([5, 3], dtype=int32)\n"},
    {"select_flagged", KW py_select_flagged, ARGS_KW,
     "select_flagged(x, flags, *, ctx=None, stream=None, copy=False)\n\nThe elements of x whose flag (bool or uint8) is set.\n\n"
     "    >>> parprim.select_flagged(np.array([1, 2, 3], np.int32), np.array([True, False, True]))\n"
     "    array([1, 3], dtype=int32)\n"},
    {"partition", KW py_partition, ARGS_KW,
     "partition(x, cmp, value, *, out=None, ctx=None, stream=None, copy=False)\n\n"
     "Stable split: (array of the matching elements then the others, number matching).\n\n"
     "    >>> parprim.partition(np.array([1, 5, 3], np.int32), '>', 2)\n    (array([5, 3, 1], dtype=int32), 2)\n"},
    {"sort", KW py_sort, ARGS_KW, sort_doc},
    {"merge", KW py_merge, ARGS_KW,
     "merge(a, b, *, descending=False, out=None, ctx=None, stream=None, copy=False)\n\n"
     "Merge two sorted arrays of one dtype; stable (a before b on ties).\n\n"
     "    >>> parprim.merge(np.array([1, 4], np.int32), np.array([2, 3], np.int32))\n    array([1, 2, 3, 4], dtype=int32)\n"},
    {"topk", KW py_topk, ARGS_KW,
     "topk(x, k, *, largest=True, dim=-1, ctx=None, stream=None, copy=False)\n\n"
     "The k largest (smallest) values in order and their int64 indices, as TopK(values, indices), like\n"
     "torch.topk. 2-D x: top-k of each row (indices within the row). NaN counts as largest.\n\n"
     "    >>> parprim.topk(np.array([1., 9., 5.], np.float32), 2)\n"
     "    parprim.TopK(values=array([9., 5.], dtype=float32), indices=array([1, 2]))\n"},
    {"histogram", KW py_histogram, ARGS_KW, histogram_doc},
    {"histogram_image", KW py_histogram_image, ARGS_KW,
     "histogram_image(pixels, *, out=None, ctx=None, stream=None, copy=False)\n\n"
     "Per-channel 256-bin counts (channels, 256) of a uint8 (height, width[, channels]) image, 1..4\n"
     "interleaved channels; rows may be padded (a slice of a wider image).\n\n"
     "    >>> parprim.histogram_image(np.zeros((2, 2, 3), np.uint8))[:, 0]\n    array([4, 4, 4])\n"},
    {"matmul", KW py_matmul, ARGS_KW,
     "matmul(a, b, *, trans_a=False, trans_b=False, alpha=1.0, out=None, ctx=None, stream=None, copy=False)\n\n"
     "alpha * op(a) @ op(b) in float32 (plain FP32 arithmetic). Row- and column-major inputs (a.T) are\n"
     "read in place.\n\n    >>> parprim.matmul(np.eye(2, dtype=np.float32), np.ones((2, 3), np.float32)).shape\n    (2, 3)\n"},
    {"sgemm", KW py_sgemm, ARGS_KW,
     "sgemm(a, b, c, alpha=1.0, beta=0.0, *, trans_a=False, trans_b=False, ctx=None, stream=None)\n\n"
     "CBLAS SGEMM in place: c = alpha * op(a) @ op(b) + beta * c (c is not read when beta == 0).\n"
     "Returns c.\n\n    >>> c = np.ones((2, 2), np.float32)\n"
     "    >>> parprim.sgemm(np.eye(2, dtype=np.float32), np.eye(2, dtype=np.float32), c, 1.0, 1.0)[0]\n"
     "    array([2., 1.], dtype=float32)\n"},
    {"conv2d", KW py_conv2d, ARGS_KW,
     "conv2d(image, filter, border='zero', *, out=None, ctx=None, stream=None, copy=False)\n\n"
     "2-D correlation (filter not flipped, centred at (fh//2, fw//2)) of a float32 image (height, width).\n"
     "border: 'zero' (scipy 'constant'), 'clamp' ('nearest') or 'mirror' (without repeating the edge).\n\n"
     "    >>> parprim.conv2d(np.ones((4, 4), np.float32), np.ones((3, 3), np.float32), 'clamp')[0, 0]\n"
     "    np.float32(9.0)\n"},
    {"conv2d_separable", KW py_conv2d_separable, ARGS_KW,
     "conv2d_separable(image, row_filter, col_filter, border='zero', *, out=None, ctx=None, stream=None, copy=False)\n\n"
     "conv2d with the filter outer(col_filter, row_filter), in two 1-D passes.\n\n"
     "    >>> parprim.conv2d_separable(np.ones((4, 4), np.float32), [1, 1, 1], [1, 1, 1], 'clamp')[0, 0]\n"
     "    np.float32(9.0)\n"},
    {"_nbody", KW py_nbody, ARGS_KW, "_nbody(op, x, y, z, vx, vy, vz, mass, softening, dt=0, steps=1): see parprim.NBody"},
    {"_bench_reduce_c", KW py_bench_reduce_c, ARGS_KW,
     "_bench_reduce_c(x, iters=1000, *, ctx=None) -> seconds per pp_reduce(SUM) call, timed in a C loop"},
    {"default_context", (PyCFunction)py_default_context, METH_NOARGS,
     "default_context() -> the Context calls use when given no ctx= and no device array\n\n"
     "    >>> parprim.default_context().nranks\n    1\n"},
    {"dist_id_create", (PyCFunction)py_dist_id_create, METH_VARARGS,
     "dist_id_create(backend='auto') -> bytes: the 128-byte id one rank makes and hands to every rank\n"
     "for Context(dist_id=..., nranks=..., rank=...). NotImplementedError names what a build lacks\n"
     "(MPI for 'cpu', NCCL for 'cuda').\n\n"
     "    >>> ident = parprim.dist_id_create('cpu')  # doctest: +SKIP\n"
     "    >>> ctx = parprim.Context('cpu', dist_id=ident, nranks=4, rank=0)  # doctest: +SKIP\n"},
    {NULL, NULL, 0, NULL}};

static PyStructSequence_Field topk_fields[] = {{"values", "the k largest (smallest) values, in order"},
                                               {"indices", "their int64 indices"},
                                               {NULL, NULL}};
static PyStructSequence_Desc topk_desc = {"parprim.TopK", "topk's result: (values, indices)", topk_fields, 2};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "parprim._parprim",
                                       "parprim's C extension: see the parprim package.", -1, methods,
                                       NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__parprim(void) {
  if (PyType_Ready(&ContextType) < 0 || PyType_Ready(&ArrayType) < 0) return NULL;
  TopKType = PyStructSequence_NewType(&topk_desc);
  if (!TopKType) return NULL;
  PyObject *m = PyModule_Create(&moduledef);
  if (!m) return NULL;
  if (PyModule_AddObjectRef(m, "Context", (PyObject *)&ContextType) ||
      PyModule_AddObjectRef(m, "Array", (PyObject *)&ArrayType) ||
      PyModule_AddObjectRef(m, "TopK", (PyObject *)TopKType) ||
      PyModule_AddStringConstant(m, "library_version", pp_version()) ||
      PyModule_AddObjectRef(m, "has_cuda", pp_has_cuda_backend() ? Py_True : Py_False)) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
