/* context.c — contexts (a lock each), the memory results are made of (a per-context cache
 * over pp_malloc), stream ordering, and the Context type. */
#include "module.h"

/* ------------------------------------------------------------------------------------ */
/* Context state and the output memory cache                                            */
/* ------------------------------------------------------------------------------------ */




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
void ppy_block_release(block *b) {
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

block *ppy_host_block(size_t bytes) {
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
pp_status ppy_device_block(ctx_state *st, size_t bytes, block **out) {
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
int ppy_order_streams(uintptr_t producer, uintptr_t consumer) {
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
/* Context objects                                                                      */
/* ------------------------------------------------------------------------------------ */



PyObject *ppy_raise_status(pp_status s, const char *msg) {
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
    return (ContextObject *)ppy_raise_status(s, err);
  }
  st->backend = pp_backend_of(st->ctx);
  st->device = dev;
  st->dist = comm || dist;
  atomic_init(&st->refs, 1);
  ContextObject *co = PyObject_New(ContextObject, &ppy_ContextType);
  if (co) {
    co->st = st;
    co->stream_keep = NULL;
  } else {
    state_decref(st); /* no object to own the state */
  }
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
  if (s != PP_OK) return ppy_raise_status(s, err);
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
  if (s != PP_OK) return ppy_raise_status(s, err);
  return Py_BuildValue("{s:s,s:i,s:i,s:i,s:n,s:n,s:d,s:i,s:i}", "name", info.name, "compute_major",
                       info.compute_major, "compute_minor", info.compute_minor, "multiprocessors",
                       info.multiprocessors, "global_mem_bytes", (Py_ssize_t)info.global_mem_bytes,
                       "l2_bytes", (Py_ssize_t)info.l2_bytes, "peak_bandwidth_gbs",
                       info.peak_bandwidth_gbs, "driver_version", info.driver_version,
                       "runtime_version", info.runtime_version);
}

static PyGetSetDef Context_getset[] = {
    PPY_GETTER(Context, backend, "'cpu' or 'cuda'"),
    PPY_GETTER(Context, device, "the CUDA device ordinal, None on the CPU"),
    PPY_GETTER(Context, rank, "this process's rank (0 for a plain context)"),
    PPY_GETTER(Context, nranks, "ranks in the group (1 for a plain context)"),
    PPY_GETTER(Context, cached_bytes, "freed result memory kept for reuse"),
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef Context_methods[] = {
    PPY_METHOD_NOARGS(Context, synchronize, "Wait for the work queued on the context's current stream."),
    PPY_METHOD_NOARGS(Context, empty_cache, "Give the freed result memory the context keeps for reuse back to the device."),
    PPY_METHOD_NOARGS(Context, device_info, "A dict describing the device (pp_get_device_info)."),
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

PyTypeObject ppy_ContextType = {
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

ContextObject *ppy_default_context(int device) {
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

PyObject *py_default_context(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return (PyObject *)ppy_default_context(-1);
}

PyObject *py_dist_id_create(PyObject *self, PyObject *args) {
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
  if (s != PP_OK) return ppy_raise_status(s, err[0] ? err : "pp_dist_id_create failed");
  return PyBytes_FromStringAndSize((const char *)id.bytes, sizeof id.bytes);
}
