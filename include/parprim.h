/*
 * parprim.h — data-parallel primitives for NVIDIA GPUs and any CPU, from C.
 *
 * This is the only public header. It is plain C11 (and C++ through extern "C") and
 * includes no CUDA header. Every function below is its own manual: inputs, outputs,
 * errors. The contract it implements is docs/API.md (shared/API.md in the project).
 *
 * Conventions that hold for every call:
 *  - Every call returns a pp_status. On failure pp_last_error(ctx) names the function
 *    and the bad value, outputs are not written on argument errors, and the context
 *    stays usable.
 *  - Data pointers may be ordinary host memory, memory from pp_malloc, or (CUDA
 *    backend) device or managed memory the caller got from CUDA. The library finds out
 *    where each lives and stages host data itself.
 *  - Work is queued on the context's stream. A call whose outputs include host memory
 *    returns once they are written; otherwise pp_synchronize waits for the work.
 *  - A context is used by one thread at a time; separate contexts may run concurrently.
 *  - n == 0 is valid everywhere: the call writes the empty result (sum 0, count 0, ...).
 *  - Sizes are size_t; inputs beyond 2^31 and 2^32 elements work where memory allows.
 *  - Overlap: an output shares no byte with any other argument, except out == in (same
 *    address, same size) for pp_scan, pp_select, pp_select_flagged and pp_partition.
 *    Inputs may overlap each other. Pitched and strided data span first to last element,
 *    gaps included. A violation returns INVALID_ARGUMENT ("pp_fn: <output> overlaps
 *    <argument>") and writes nothing (docs/API.md, "Overlapping buffers").
 */
#ifndef PARPRIM_H
#define PARPRIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PARPRIM_VERSION_MAJOR 0
#define PARPRIM_VERSION_MINOR 1
#define PARPRIM_VERSION_PATCH 0

/* ------------------------------------------------------------------------------------ */
/* Basics                                                                               */
/* ------------------------------------------------------------------------------------ */

typedef enum pp_status {
  PP_OK = 0,
  PP_ERR_INVALID_ARGUMENT = 1, /* NULL where data is needed, k > n, bins == 0, lo >= hi, bad enum, ... */
  PP_ERR_UNSUPPORTED = 2,      /* valid request this backend/dtype does not provide */
  PP_ERR_OUT_OF_MEMORY = 3,    /* host or device allocation failed; nothing was written to outputs */
  PP_ERR_NO_DEVICE = 4,        /* PP_BACKEND_CUDA asked for, no usable GPU or driver */
  PP_ERR_DEVICE = 5,           /* a CUDA runtime/driver error; pp_last_error() has the text */
  PP_ERR_OVERFLOW = 6          /* a size computation would overflow (n * elem_size, width * pitch, ...) */
} pp_status;

typedef enum pp_backend { PP_BACKEND_AUTO = 0, PP_BACKEND_CPU = 1, PP_BACKEND_CUDA = 2 } pp_backend;
typedef enum pp_dtype { PP_U8, PP_I32, PP_U32, PP_I64, PP_U64, PP_F32, PP_F64 } pp_dtype;
typedef enum pp_op { PP_SUM, PP_MIN, PP_MAX } pp_op;
typedef enum pp_cmp { PP_GT, PP_GE, PP_LT, PP_LE, PP_EQ, PP_NE } pp_cmp;
typedef enum pp_order { PP_ASCENDING = 0, PP_DESCENDING = 1 } pp_order;

typedef struct pp_context pp_context;

/* Create a context on a backend. AUTO picks CUDA when a GPU is usable, else the CPU
 * (the environment variable PARPRIM_BACKEND=cpu|cuda overrides AUTO).
 * Errors: INVALID_ARGUMENT (ctx NULL, bad enum), NO_DEVICE (CUDA asked for and no usable
 * GPU, or the library was built without CUDA), OUT_OF_MEMORY. On failure *ctx is NULL and
 * pp_last_error(NULL) says why. */
pp_status pp_create(pp_context **ctx, pp_backend backend);
/* Release a context and everything it holds, after waiting for its queued work. NULL is a no-op. */
void pp_destroy(pp_context *ctx);
/* The backend the context runs on (CPU or CUDA, never AUTO); AUTO for NULL. */
pp_backend pp_backend_of(const pp_context *ctx);
/* A static text for any status value, also unknown ones; never NULL. */
const char *pp_status_string(pp_status s);
/* Detail of the last failure on ctx, "" if none. With NULL: the last failed pp_create of
 * this thread. The text stays valid until the next call on ctx. */
const char *pp_last_error(const pp_context *ctx);
/* Bytes of one element of t; 0 for an invalid value. */
size_t pp_dtype_size(pp_dtype t);
/* Wait for all work queued on ctx. */
pp_status pp_synchronize(pp_context *ctx);
/* CUDA backend: queue work on this cudaStream_t (NULL: the context's own stream).
 * Waits for work queued on the previous stream first. CPU backend: UNSUPPORTED unless
 * cuda_stream is NULL. */
pp_status pp_set_stream(pp_context *ctx, void *cuda_stream);
/* "major.minor.patch" */
const char *pp_version(void);

/* Memory the backend is fastest on (device memory on CUDA, aligned host memory on the
 * CPU), aligned to at least 256 bytes. bytes == 0 gives *ptr = NULL. */
pp_status pp_malloc(pp_context *ctx, void **ptr, size_t bytes);
/* Free memory from pp_malloc on the same context; NULL is a no-op. */
pp_status pp_free(pp_context *ctx, void *ptr);
/* Copy bytes between any two kinds of memory; returns once a host dst is written. */
pp_status pp_copy(pp_context *ctx, void *dst, const void *src, size_t bytes);

/* Additions beyond the contract, for tools and diagnostics. */
const char *pp_backend_string(pp_backend b); /* "auto", "cpu", "cuda", "unknown" */
const char *pp_dtype_string(pp_dtype t);     /* "u8", "i32", ..., "unknown" */
/* true when this build of the library contains the CUDA backend */
bool pp_has_cuda_backend(void);

typedef struct pp_device_info {
  char name[256];          /* GPU name, or the CPU model for the CPU backend */
  int compute_major;       /* 0 on the CPU */
  int compute_minor;
  int multiprocessors;     /* SMs, or logical CPUs (OpenMP threads) */
  size_t global_mem_bytes; /* device memory; 0 when unknown (CPU) */
  size_t l2_bytes;
  double peak_bandwidth_gbs; /* from memory clock and bus width; 0 when unknown */
  int driver_version;      /* CUDA driver and runtime versions (e.g. 13000); 0 on the CPU */
  int runtime_version;
} pp_device_info;
/* Describe the device the context runs on. */
pp_status pp_get_device_info(pp_context *ctx, pp_device_info *info);

/* ------------------------------------------------------------------------------------ */
/* Reduce, scan, select                                                                 */
/* ------------------------------------------------------------------------------------ */

/* out: one element of t. Integer SUM wraps in t. f32 SUM is accumulated in double per
 * thread, so its error stays within that of pairwise summation. MIN/MAX of floats ignore
 * NaN unless all are NaN (then NaN). n == 0: SUM 0, MIN the largest value of t (+inf),
 * MAX the lowest (-inf). Float MIN/MAX order -0.0 below +0.0 (MIN of {+0.0, -0.0} is -0.0,
 * MAX is +0.0). */
pp_status pp_reduce(pp_context *ctx, pp_op op, pp_dtype t, const void *in, size_t n, void *out);
/* op MIN or MAX. First index on ties (-0.0 ties with +0.0); NaN ignored like pp_reduce;
 * all NaN gives NaN and index 0; n == 0 gives the pp_reduce identity and index 0. */
pp_status pp_argreduce(pp_context *ctx, pp_op op, pp_dtype t, const void *in, size_t n,
                       void *value_out, uint64_t *index_out);
/* Prefix SUM/MIN/MAX; exclusive scans start from the identity of op (out[0] = +inf for
 * float MIN). Float MIN/MAX ignore NaN (NaN only where the whole prefix is NaN) and order
 * -0.0 below +0.0. out == in allowed; any other overlap is INVALID_ARGUMENT. */
pp_status pp_scan(pp_context *ctx, pp_op op, pp_dtype t, const void *in, void *out, size_t n,
                  bool inclusive);
/* Keep x where (x cmp *value), in order; value points to one element of t in host memory,
 * so 64-bit keys compare exactly. NaN compares false except under PP_NE. *count (host or
 * device) receives the number kept. Writes out[0, *count) and nothing past it. out == in
 * allowed (the input is first copied to scratch). */
pp_status pp_select(pp_context *ctx, pp_dtype t, const void *in, size_t n, pp_cmp cmp,
                    const void *value, void *out, uint64_t *count);
/* Keep the elements (elem_size bytes each) whose flag is non-zero, in order. Writes
 * out[0, *count) and nothing past it; out == in allowed; flags never overlaps out. */
pp_status pp_select_flagged(pp_context *ctx, size_t elem_size, const void *in,
                            const uint8_t *flags, size_t n, void *out, uint64_t *count);
/* Stable split: the matching elements in order, then the others in order. out == in
 * allowed (through a scratch copy). */
pp_status pp_partition(pp_context *ctx, pp_dtype t, const void *in, size_t n, pp_cmp cmp,
                       const void *value, void *out, uint64_t *count_true);

/* ------------------------------------------------------------------------------------ */
/* Sort, merge, top-k                                                                   */
/* ------------------------------------------------------------------------------------ */

typedef enum pp_sort_algo {
  PP_SORT_AUTO,
  PP_SORT_RADIX,
  PP_SORT_MERGE,
  PP_SORT_SAMPLE,
  PP_SORT_QUICK
} pp_sort_algo;
typedef struct pp_sort_opts {
  pp_order order;
  pp_sort_algo algo;
} pp_sort_opts;
/* In place; values may be NULL (keys only), else value_size is 4 or 8 and values move
 * with keys. opts NULL = ascending, AUTO. Stable. Floats: -0.0 == +0.0, NaN above +inf
 * (last ascending, first descending). keys and values must not overlap. */
pp_status pp_sort(pp_context *ctx, pp_dtype key_t, void *keys, void *values, size_t value_size,
                  size_t n, const pp_sort_opts *opts);
/* Stable sort into new buffers: indices[i] is the position in keys of the i-th key in
 * order (the order and ties of pp_sort: equal keys keep their input order), and
 * sorted_keys (may be NULL) receives the keys in that order; keys is only read. index_t is
 * PP_U32 or PP_I32 (n <= 2^32 or 2^31) or PP_U64 or PP_I64. No output overlaps keys or the
 * other output. UNSUPPORTED on a distributed context. */
pp_status pp_argsort(pp_context *ctx, pp_dtype key_t, const void *keys, size_t n,
                     void *sorted_keys, pp_dtype index_t, void *indices,
                     const pp_sort_opts *opts);
/* Stable sort into new buffers: sorted_keys (and sorted_values) receive keys (and values)
 * in pp_sort's order; keys and values are only read. values NULL = keys alone (then
 * sorted_values is ignored), else value_size is 4 or 8. No output overlaps an input or the
 * other output. UNSUPPORTED on a distributed context. */
pp_status pp_sort_copy(pp_context *ctx, pp_dtype key_t, const void *keys, const void *values,
                       size_t value_size, size_t n, void *sorted_keys, void *sorted_values,
                       const pp_sort_opts *opts);
/* Merge two sorted arrays; stable: a before b on ties. out overlaps neither a nor b; a and
 * b may overlap. UNSUPPORTED on a distributed context. */
pp_status pp_merge(pp_context *ctx, pp_dtype key_t, const void *a, size_t na, const void *b,
                   size_t nb, void *out, pp_order order);
/* The k largest (or smallest) values in order; indices may be NULL. NaN counts as largest;
 * -0.0 == +0.0; among equal values the lowest indices are taken, in index order (the first
 * k of a stable sort). values_out and indices_out overlap neither in nor each other. */
pp_status pp_topk(pp_context *ctx, pp_dtype t, const void *in, size_t n, size_t k, bool largest,
                  void *values_out, uint64_t *indices_out);
/* Row-major [rows][cols] in, [rows][k] out, index within the row. NaN counts as largest. */
pp_status pp_topk_rows(pp_context *ctx, pp_dtype t, const void *in, size_t rows, size_t cols,
                       size_t k, bool largest, void *values_out, uint64_t *indices_out);

/* ------------------------------------------------------------------------------------ */
/* Histogram                                                                            */
/* ------------------------------------------------------------------------------------ */

/* x counts when lo <= x < hi (compared as double), in bin
 * min(bins-1, (size_t)floor(((double)x - lo) * bins / (hi - lo))); NaN is not counted.
 * counts (bins entries) is overwritten, not accumulated. Where (hi - lo) * bins overflows
 * double, x is placed between the edges lo + i (hi - lo) / bins evaluated on
 * power-of-two-scaled operands: the exact bin up to an edge's rounding (docs/API.md). */
pp_status pp_histogram_even(pp_context *ctx, pp_dtype t, const void *in, size_t n, size_t bins,
                            double lo, double hi, uint64_t *counts);
/* bins+1 strictly increasing edges; x (as double) counts in bin i when
 * edges[i] <= x < edges[i+1]. */
pp_status pp_histogram_range(pp_context *ctx, pp_dtype t, const void *in, size_t n,
                             const double *edges, size_t bins, uint64_t *counts);
/* Interleaved 8-bit channels (1..4); counts is [channels][256]. */
pp_status pp_histogram_image(pp_context *ctx, const uint8_t *pixels, size_t width, size_t height,
                             size_t pitch_bytes, int channels, uint64_t *counts);

/* ------------------------------------------------------------------------------------ */
/* Dense kernels                                                                        */
/* ------------------------------------------------------------------------------------ */

typedef enum pp_layout { PP_ROW_MAJOR, PP_COL_MAJOR } pp_layout;
typedef enum pp_trans { PP_NO_TRANS, PP_TRANS } pp_trans;
/* CBLAS semantics: C = alpha*op(A)*op(B) + beta*C; plain FP32 arithmetic. beta == 0 means
 * C is not read. */
pp_status pp_sgemm(pp_context *ctx, pp_layout layout, pp_trans ta, pp_trans tb, size_t m,
                   size_t n, size_t k, float alpha, const float *A, size_t lda, const float *B,
                   size_t ldb, float beta, float *C, size_t ldc);

typedef enum pp_border { PP_BORDER_ZERO, PP_BORDER_CLAMP, PP_BORDER_MIRROR } pp_border;
/* Correlation (filter not flipped), filter centred at (fw/2, fh/2); pitches in elements;
 * one channel. Outside the image: ZERO reads 0; CLAMP repeats the edge pixel; MIRROR
 * reflects about the edge pixel without repeating it (... c b | a b c d | c b ...),
 * periodically when the filter reaches further than the image; a dimension of 1 pixel
 * repeats it. */
pp_status pp_conv2d(pp_context *ctx, const float *src, size_t width, size_t height,
                    size_t src_pitch, const float *filter, size_t fw, size_t fh, pp_border border,
                    float *dst, size_t dst_pitch);
pp_status pp_conv2d_separable(pp_context *ctx, const float *src, size_t width, size_t height,
                              size_t src_pitch, const float *row_filter, size_t row_len,
                              const float *col_filter, size_t col_len, pp_border border,
                              float *dst, size_t dst_pitch);

typedef struct pp_bodies {
  float *x, *y, *z, *vx, *vy, *vz, *mass;
  size_t n;
} pp_bodies;
/* G = 1, Plummer softening: softening is a length eps (finite, >= 0); eps^2 is added to
 * r^2. With eps = 0 a pair at distance 0 contributes nothing. vx, vy, vz may be NULL (not
 * read); with n == 0 every array may be NULL. ax, ay, az overlap neither each other nor x,
 * y, z, mass. */
pp_status pp_nbody_accel(pp_context *ctx, const pp_bodies *b, float softening, float *ax,
                         float *ay, float *az);
/* Kick-drift-kick leapfrog, in place. */
pp_status pp_nbody_step(pp_context *ctx, pp_bodies *b, float dt, float softening, size_t steps);
pp_status pp_nbody_energy(pp_context *ctx, const pp_bodies *b, float softening, double *kinetic,
                          double *potential);

/* ------------------------------------------------------------------------------------ */
/* Beyond one GPU: distributed contexts                                                 */
/* ------------------------------------------------------------------------------------ */

/* A distributed context is one rank of a group that runs the same program (SPMD): one
 * rank per GPU (CUDA backend, ranks talk through NCCL) or per CPU process (CPU backend,
 * ranks talk through MPI). Every primitive takes a distributed context; the semantics
 * (global sequence = the ranks' local data concatenated in rank order) are in
 * docs/API.md and docs/distributed.md. A build without NCCL (CUDA) or MPI (CPU) still
 * has these functions; they return UNSUPPORTED naming what is missing. */
typedef struct pp_dist_id {
  unsigned char bytes[128];
} pp_dist_id;
/* On one rank; the caller hands the bytes to every rank (MPI_Bcast, a file, a socket). */
pp_status pp_dist_id_create(pp_backend backend, pp_dist_id *id);
/* Collective: every rank calls it. CUDA: the rank uses GPU (node-local rank) modulo the
 * GPUs it can see. id NULL: running under MPI, nranks and rank come from MPI_COMM_WORLD
 * and the ranks exchange the id through MPI themselves. */
pp_status pp_create_dist(pp_context **ctx, pp_backend backend, const pp_dist_id *id,
                         int nranks, int rank);
/* Adopt the caller's communicator: comm points to an ncclComm_t (CUDA; its GPU is the
 * communicator's device) or an MPI_Comm (CPU); the caller keeps ownership. */
pp_status pp_create_from_comm(pp_context **ctx, pp_backend backend, void *comm);
int pp_rank(const pp_context *ctx);   /* 0 for a plain context */
int pp_nranks(const pp_context *ctx); /* 1 for a plain context */

#ifdef __cplusplus
}
#endif

#endif /* PARPRIM_H */
