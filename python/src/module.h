/* module.h — what the files of parprim's extension module share. */
#ifndef PPY_MODULE_H
#define PPY_MODULE_H

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

enum { ARG_ANY_LAYOUT = 1 }; /* the caller checks the layout itself (pitched images, matrices) */
#define COMMON_KW "out", "ctx", "stream", "copy" /* keywords most functions take */

#define PPY_DTYPES_TAKEN "uint8, int32, uint32, int64, uint64, float32 or float64"

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
  bool dist;  /* one rank of a group (pp_create_dist or pp_create_from_comm) */
};

typedef struct {
  PyObject *numpy, *np_from_dlpack, *np_ascontig, *np_asarray, *np_ndarray;
  PyObject *np_scalar[PP_F64 + 1]; /* numpy.uint8, ..., numpy.float64 by pp_dtype */
  PyObject *torch, *torch_tensor, *torch_from_dlpack, *torch_from_dlpack_public, *torch_raw_stream,
      *torch_current_stream;
  PyObject *torch_dtypes[8]; /* u8 i32 u32 i64 u64 f32 f64 bool */
  PyObject *cupy, *cupy_ndarray, *cupy_from_dlpack, *cupy_current_stream, *cupy_ascontig;
  PyObject *jax_from_dlpack;
} ppy_frameworks;
extern ppy_frameworks ppy_fw;

typedef struct {
  PyObject_HEAD
  ctx_state *st;
  PyObject *stream_keep; /* the Python stream object whose handle the context last ran on */
} ContextObject;

typedef struct {
  PyObject_HEAD
  block *b;
  int ndim;
  int64_t shape[MAXDIM];
  int dtype;
  int dev_type, dev_id;
  uintptr_t stream; /* where the work that wrote it was queued (0: host, already written) */
} ArrayObject;

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

typedef pp_status (*job_fn)(call *c, void *job);

/* a result buffer: the caller's out= array, or a new block (host or the context's device) */
typedef struct {
  arr *user;
  block *b;
  void *ptr;
} outbuf;

typedef struct {
  const char *name;
  int value;
} named;

extern PyTypeObject ppy_ContextType, ppy_ArrayType;
extern PyTypeObject *ppy_TopKType;

/* context.c: memory, streams, contexts */
void ppy_block_release(block *b);
block *ppy_host_block(size_t bytes);
pp_status ppy_device_block(ctx_state *st, size_t bytes, block **out);
int ppy_order_streams(uintptr_t producer, uintptr_t consumer);
PyObject *ppy_raise_status(pp_status s, const char *msg);
ContextObject *ppy_default_context(int device);
PyObject *py_default_context(PyObject *self, PyObject *unused);
PyObject *py_dist_id_create(PyObject *self, PyObject *args);
/* interop.c: dtypes, frameworks, results handed to them */
size_t ppy_dt_size(int t);
const char *ppy_dt_name(int t);
const char *ppy_dt_typestr(int t);
DLDataType ppy_dt_dl(int t);
int ppy_dt_from_dl(DLDataType d);
int ppy_dt_from_format(const char *f, Py_ssize_t itemsize);
PyObject *ppy_get_numpy(void);
bool ppy_is_torch(PyObject *o);
int ppy_framework_of(PyObject *o);
PyObject *ppy_wrap_block(call *c, block *b, int ndim, const int64_t *shape, int dtype);
/* call.c: arguments, the locked run, result buffers */
void ppy_call_init(call *c, const char *fn, PyObject *ctx, PyObject *stream, int copy);
void ppy_call_end(call *c);
size_t ppy_arr_row_pitch(const arr *a);
arr *ppy_call_arg_impl(call *c, PyObject *obj, int role, const char *name, int conv, int flags, int depth);
arr *ppy_call_arg(call *c, PyObject *obj, int role, const char *name);
int ppy_want_dtype(call *c, arr *a, int dt);
int ppy_want_pp_dtype(call *c, arr *a);
int ppy_check_out(call *c, arr *o, int dt, size_t n);
arr *ppy_input(call *c, PyObject *obj, const char *name);
int ppy_user_out(call *c, outbuf *o, PyObject *out, int dt, size_t n);
PyObject *ppy_call_return(call *c, PyObject *result);
pp_status ppy_job_end(pp_status s, outbuf *a, outbuf *b);
PyObject *ppy_call_return_outs(call *c, PyObject *result, outbuf *a, outbuf *b);
PyObject *ppy_run_result(call *c, job_fn fn, void *job, outbuf *o, int ndim, const int64_t *shape, int dtype);
int ppy_run(call *c, job_fn fn, void *job);
pp_status ppy_out_get(call *c, outbuf *o, size_t bytes);
void ppy_out_drop(outbuf *o);
PyObject *ppy_out_result(call *c, outbuf *o, int ndim, const int64_t *shape, int dtype);
/* py_<name>, a function of the module table that is one shared do_<family>(...) call; the
 * call names the Python arguments args and kw. */
#define PPY_FUNCTION(name, ...)                                                                \
  PyObject *py_##name(PyObject *self, PyObject *args, PyObject *kw) {                         \
    (void)self;                                                                                \
    return __VA_ARGS__;                                                                        \
  }

/* A read-only attribute <attr> of a Python type <type>, read by <type>_<attr>(self, closure). */
#define PPY_GETTER(type, attr, doc) {#attr, (getter)type##_##attr, NULL, doc, NULL}
/* A method <name> without arguments of a Python type <type>, run by <type>_<name>(self, unused). */
#define PPY_METHOD_NOARGS(type, name, doc) {#name, (PyCFunction)type##_##name, METH_NOARGS, doc}

/* primitives.c, dense.c: enumerations by name and the functions of the module table */
int ppy_by_name(call *c, const char *what, PyObject *o, const named *table, int *out);
PyObject *py_sum(PyObject *s, PyObject *a, PyObject *k);
PyObject *py_min(PyObject *s, PyObject *a, PyObject *k);
PyObject *py_max(PyObject *s, PyObject *a, PyObject *k);
PyObject *py_reduce(PyObject *s, PyObject *a, PyObject *k);
PyObject *py_argmin(PyObject *s, PyObject *a, PyObject *k);
PyObject *py_argmax(PyObject *s, PyObject *a, PyObject *k);
PyObject *py_scan(PyObject *s, PyObject *a, PyObject *k);
PyObject *py_cumsum(PyObject *s, PyObject *a, PyObject *k);
PyObject *py_select(PyObject *s, PyObject *a, PyObject *k);
PyObject *py_select_flagged(PyObject *s, PyObject *a, PyObject *k);
PyObject *py_partition(PyObject *s, PyObject *a, PyObject *k);
PyObject *py_sort(PyObject *self, PyObject *args, PyObject *kw);
PyObject *py_merge(PyObject *self, PyObject *args, PyObject *kw);
PyObject *py_topk(PyObject *self, PyObject *args, PyObject *kw);
PyObject *py_histogram(PyObject *self, PyObject *args, PyObject *kw);
PyObject *py_histogram_image(PyObject *self, PyObject *args, PyObject *kw);
PyObject *py_matmul(PyObject *s, PyObject *a, PyObject *k);
PyObject *py_sgemm(PyObject *s, PyObject *a, PyObject *k);
PyObject *py_conv2d(PyObject *s, PyObject *a, PyObject *k);
PyObject *py_conv2d_separable(PyObject *s, PyObject *a, PyObject *k);
PyObject *py_nbody(PyObject *self, PyObject *args, PyObject *kw);
PyObject *py_bench_reduce_c(PyObject *self, PyObject *args, PyObject *kw);

#endif /* PPY_MODULE_H */
