/*
 * comm_nccl.c — the communicator of CUDA contexts, on NCCL (NVIDIA Collective
 * Communication Library, https://docs.nvidia.com/deeplearning/nccl/user-guide/). Buffers
 * are device memory of the context's GPU and every operation is queued on the context's
 * stream, so a distributed call is ordered with the kernels around it without a host wait.
 * All-to-all-v and all-gather-v are NCCL groups (ncclGroupStart / ncclGroupEnd, user guide
 * "Group Calls"): one ncclSend / ncclRecv pair per peer, or one ncclBroadcast per rank,
 * which NCCL issues as a single operation.
 *
 * The host calls (statuses, counts, splitters: a few KiB) go through a device buffer the
 * communicator owns: copy in, one collective, copy out, then the stream is synchronised so
 * the host result is there when the call returns.
 *
 * Plain C over NCCL's and the CUDA runtime's C APIs; the library never sets or reads
 * NCCL's environment variables and never asks for NVLink multicast itself.
 */
#include "dist_internal.h"

#include <stdlib.h>
#include <string.h>

#if defined(PP_HAVE_CUDA) && defined(PP_HAVE_NCCL)

#include <cuda_runtime.h>
#include <nccl.h>

/* Bytes of the staging buffer made with the communicator (grown on demand). */
#define STAGE_MIN_BYTES ((size_t)64 << 10)

typedef struct comm_nccl {
  pp_comm base;
  ncclComm_t comm;
  bool owned;   /* created here (destroyed here) or adopted from the caller */
  int device;
  void *stage;  /* device buffer of the host calls */
  size_t stage_bytes;
} comm_nccl;

static comm_nccl *nc(pp_comm *c) { return (comm_nccl *)c; }

static cudaStream_t stream_of(pp_context *ctx) { return (cudaStream_t)ctx->ops->dist_stream(ctx); }

static pp_status nccl_fail(pp_context *ctx, comm_nccl *c, ncclResult_t r, const char *what) {
  const char *last = c && c->comm ? ncclGetLastError(c->comm) : NULL;
  return pp_fail(ctx, PP_ERR_DEVICE, "%s: NCCL error: %s%s%s", what, ncclGetErrorString(r), last && *last ? ": " : "",
                 last ? last : "");
}

static pp_status cuda_fail(pp_context *ctx, cudaError_t e, const char *what) {
  cudaGetLastError();
  return pp_fail(ctx, e == cudaErrorMemoryAllocation ? PP_ERR_OUT_OF_MEMORY : PP_ERR_DEVICE,
                 "%s: CUDA error %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

#define NCCL_TRY(ctx, c, call, what)                                                        \
  do {                                                                                      \
    ncclResult_t nccl_r_ = (call);                                                          \
    if (nccl_r_ != ncclSuccess) return nccl_fail(ctx, c, nccl_r_, what);                    \
  } while (0)
#define CUDA_TRY(ctx, call, what)                                                           \
  do {                                                                                      \
    cudaError_t cuda_e_ = (call);                                                           \
    if (cuda_e_ != cudaSuccess) return cuda_fail(ctx, cuda_e_, what);                       \
  } while (0)

static ncclDataType_t nccl_type(pp_dtype t) {
  switch (t) {
  case PP_U8: return ncclUint8;
  case PP_I32: return ncclInt32;
  case PP_U32: return ncclUint32;
  case PP_I64: return ncclInt64;
  case PP_U64: return ncclUint64;
  case PP_F32: return ncclFloat32;
  case PP_F64: return ncclFloat64;
  }
  return ncclChar;
}

static pp_status nccl_allreduce(pp_comm *c, pp_context *ctx, const void *send, void *recv,
                                size_t count, pp_dtype t, pp_op op) {
  comm_nccl *n = nc(c);
  CUDA_TRY(ctx, cudaSetDevice(n->device), "ncclAllReduce");
  ncclRedOp_t r = op == PP_SUM ? ncclSum : op == PP_MIN ? ncclMin : ncclMax;
  NCCL_TRY(ctx, n, ncclAllReduce(send, recv, count, nccl_type(t), r, n->comm, stream_of(ctx)),
           "ncclAllReduce");
  return PP_OK;
}

static pp_status nccl_allgather(pp_comm *c, pp_context *ctx, const void *send, void *recv,
                                size_t bytes) {
  comm_nccl *n = nc(c);
  CUDA_TRY(ctx, cudaSetDevice(n->device), "ncclAllGather");
  NCCL_TRY(ctx, n, ncclAllGather(send, recv, bytes, ncclChar, n->comm, stream_of(ctx)),
           "ncclAllGather");
  return PP_OK;
}

/* A block of `bytes` at p in up to three parts: the bytes before p's first 16-byte
 * boundary, the aligned middle (a multiple of 16 bytes), the rest. Sender and receiver cut
 * alike when their addresses agree modulo 16 (comm.h), so the parts pair up. */
static void cut_aligned(uintptr_t p, size_t bytes, size_t part[3]) {
  size_t head = (size_t)((16 - (p & 15)) & 15);
  head = head < bytes ? head : bytes;
  part[0] = head;
  part[1] = (bytes - head) & ~(size_t)15;
  part[2] = bytes - head - part[1];
}

/* All-to-all-v in two groups: first every block's aligned middle, one send and one receive
 * per peer, so NCCL's copies read and write aligned 16-byte words; then the heads and tails
 * (under 16 bytes each). scripts/nccl_a2a_probe.cu measured 4 H200s exchanging 4 GiB each:
 * 9.4 ms aligned, 14 to 16 ms with every block 4 bytes off, 9.3 ms cut this way; with the
 * three parts of a block in one group the exchange inside the distributed sort took twice
 * as long. NCCL matches a pair's sends and receives in the order posted. */
static pp_status nccl_alltoallv(pp_comm *c, pp_context *ctx, const void *send,
                                const size_t *send_bytes, const size_t *send_off, void *recv,
                                const size_t *recv_bytes, const size_t *recv_off) {
  comm_nccl *n = nc(c);
  cudaStream_t s = stream_of(ctx);
  CUDA_TRY(ctx, cudaSetDevice(n->device), "ncclSend/ncclRecv");
  ncclResult_t r = ncclSuccess;
  for (int round = 0; round < 2 && r == ncclSuccess; round++) {
    NCCL_TRY(ctx, n, ncclGroupStart(), "ncclGroupStart");
    for (int q = 0; q < c->nranks && r == ncclSuccess; q++) {
      size_t part[3], at = 0;
      const char *from = (const char *)send + send_off[q];
      cut_aligned((uintptr_t)from, send_bytes[q], part);
      for (int i = 0; i < 3 && r == ncclSuccess; at += part[i], i++)
        if (part[i] && (i == 1) == (round == 0))
          r = ncclSend(from + at, part[i], ncclChar, q, n->comm, s);
      char *to = (char *)recv + recv_off[q];
      cut_aligned((uintptr_t)to, recv_bytes[q], part);
      at = 0;
      for (int i = 0; i < 3 && r == ncclSuccess; at += part[i], i++)
        if (part[i] && (i == 1) == (round == 0))
          r = ncclRecv(to + at, part[i], ncclChar, q, n->comm, s);
    }
    ncclResult_t e = ncclGroupEnd(); /* a group once started is always ended */
    if (r == ncclSuccess) r = e;
  }
  return r == ncclSuccess ? PP_OK : nccl_fail(ctx, n, r, "ncclSend/ncclRecv");
}

static pp_status nccl_bcast(pp_comm *c, pp_context *ctx, void *buf, size_t bytes, int root) {
  comm_nccl *n = nc(c);
  CUDA_TRY(ctx, cudaSetDevice(n->device), "ncclBroadcast");
  NCCL_TRY(ctx, n, ncclBroadcast(buf, buf, bytes, ncclChar, root, n->comm, stream_of(ctx)),
           "ncclBroadcast");
  return PP_OK;
}

static pp_status nccl_allgatherv(pp_comm *c, pp_context *ctx, const void *send, size_t send_bytes,
                                 void *recv, const size_t *recv_bytes, const size_t *recv_off) {
  comm_nccl *n = nc(c);
  cudaStream_t s = stream_of(ctx);
  (void)send_bytes; /* = recv_bytes[rank] */
  CUDA_TRY(ctx, cudaSetDevice(n->device), "ncclBroadcast");
  NCCL_TRY(ctx, n, ncclGroupStart(), "ncclGroupStart");
  ncclResult_t r = ncclSuccess;
  for (int q = 0; q < c->nranks && r == ncclSuccess; q++) {
    if (!recv_bytes[q]) continue;
    char *dst = (char *)recv + recv_off[q];
    r = ncclBroadcast(q == c->rank ? send : dst, dst, recv_bytes[q], ncclChar, q, n->comm, s);
  }
  ncclResult_t e = ncclGroupEnd();
  if (r == ncclSuccess) r = e;
  return r == ncclSuccess ? PP_OK : nccl_fail(ctx, n, r, "ncclBroadcast");
}

/* The staging buffer holds at least bytes. */
static pp_status stage_reserve(pp_context *ctx, comm_nccl *n, size_t bytes) {
  if (bytes <= n->stage_bytes) return PP_OK;
  size_t want = bytes < 2 * n->stage_bytes ? 2 * n->stage_bytes : bytes;
  void *p = NULL;
  cudaError_t e = pp_alloc_fails(PP_ALLOC_DEVICE) ? cudaErrorMemoryAllocation : cudaMalloc(&p, want);
  if (e != cudaSuccess) return cuda_fail(ctx, e, "NCCL staging buffer");
  CUDA_TRY(ctx, cudaStreamSynchronize(stream_of(ctx)), "NCCL staging buffer");
  cudaFree(n->stage);
  n->stage = p;
  n->stage_bytes = want;
  return PP_OK;
}

static pp_status nccl_host_allgather(pp_comm *c, pp_context *ctx, const void *send, void *recv,
                                     size_t bytes) {
  comm_nccl *n = nc(c);
  cudaStream_t s = stream_of(ctx);
  const size_t all = bytes * (size_t)c->nranks;
  CUDA_TRY(ctx, cudaSetDevice(n->device), "host all-gather");
  PP_TRY(stage_reserve(ctx, n, all));
  char *mine = (char *)n->stage + (size_t)c->rank * bytes; /* NCCL's in-place form */
  CUDA_TRY(ctx, cudaMemcpyAsync(mine, send, bytes, cudaMemcpyHostToDevice, s), "host all-gather");
  NCCL_TRY(ctx, n, ncclAllGather(mine, n->stage, bytes, ncclChar, n->comm, s), "ncclAllGather");
  CUDA_TRY(ctx, cudaMemcpyAsync(recv, n->stage, all, cudaMemcpyDeviceToHost, s), "host all-gather");
  CUDA_TRY(ctx, cudaStreamSynchronize(s), "host all-gather");
  return PP_OK;
}

static pp_status nccl_host_bcast(pp_comm *c, pp_context *ctx, void *buf, size_t bytes, int root) {
  comm_nccl *n = nc(c);
  cudaStream_t s = stream_of(ctx);
  CUDA_TRY(ctx, cudaSetDevice(n->device), "host broadcast");
  PP_TRY(stage_reserve(ctx, n, bytes));
  if (c->rank == root)
    CUDA_TRY(ctx, cudaMemcpyAsync(n->stage, buf, bytes, cudaMemcpyHostToDevice, s), "host broadcast");
  NCCL_TRY(ctx, n, ncclBroadcast(n->stage, n->stage, bytes, ncclChar, root, n->comm, s),
           "ncclBroadcast");
  CUDA_TRY(ctx, cudaMemcpyAsync(buf, n->stage, bytes, cudaMemcpyDeviceToHost, s), "host broadcast");
  CUDA_TRY(ctx, cudaStreamSynchronize(s), "host broadcast");
  return PP_OK;
}

static void nccl_destroy(pp_comm *c) {
  comm_nccl *n = nc(c);
  cudaSetDevice(n->device);
  cudaDeviceSynchronize();
  /* ncclCommDestroy alone (no ncclCommFinalize, which waits for the other ranks): one
   * thread may destroy several ranks' contexts one after another */
  if (n->owned) ncclCommDestroy(n->comm);
  cudaFree(n->stage);
  free(n);
}

static const pp_comm_ops nccl_ops = {
    .name = "nccl",
    .allreduce = nccl_allreduce,
    .allgather = nccl_allgather,
    .alltoallv = nccl_alltoallv,
    .bcast = nccl_bcast,
    .allgatherv = nccl_allgatherv,
    .host_allgather = nccl_host_allgather,
    .host_bcast = nccl_host_bcast,
    .destroy = nccl_destroy,
};

bool pp_nccl_built(void) { return true; }

pp_status pp_nccl_unique_id(unsigned char bytes[128]) {
  ncclUniqueId id;
  ncclResult_t r = ncclGetUniqueId(&id);
  if (r != ncclSuccess)
    return pp_fail(NULL, PP_ERR_DEVICE, "pp_dist_id_create: ncclGetUniqueId: %s",
                   ncclGetErrorString(r));
  _Static_assert(sizeof id == 128, "an NCCL unique id fills pp_dist_id");
  memcpy(bytes, &id, sizeof id);
  return PP_OK;
}

int pp_nccl_visible_gpus(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

pp_status pp_nccl_make_context(pp_context **ctx, int device) {
  int prev = 0;
  cudaGetDevice(&prev);
  cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return pp_fail(NULL, PP_ERR_NO_DEVICE, "pp_create_dist: cannot use GPU %d: %s", device,
                   cudaGetErrorString(e));
  }
  pp_status s = pp_create(ctx, PP_BACKEND_CUDA); /* the backend takes the current device */
  cudaSetDevice(prev);
  return s;
}

pp_status pp_nccl_comm_device(const void *nccl_comm, int *device) {
  ncclResult_t r = ncclCommCuDevice(*(const ncclComm_t *)nccl_comm, device);
  if (r != ncclSuccess)
    return pp_fail(NULL, PP_ERR_INVALID_ARGUMENT, "pp_create_from_comm: ncclCommCuDevice: %s",
                   ncclGetErrorString(r));
  return PP_OK;
}

pp_status pp_comm_nccl_create(pp_context *ctx, const void *id, int nranks, int rank,
                              const void *nccl_comm, pp_comm **out) {
  const char *fn = nccl_comm ? "pp_create_from_comm" : "pp_create_dist";
  *out = NULL;
  if (!ctx->ops->dist_stream || !ctx->ops->dist_device)
    return pp_fail(ctx, PP_ERR_UNSUPPORTED, "%s: the %s backend has no stream for NCCL", fn,
                   ctx->ops->name);
  comm_nccl *n = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : calloc(1, sizeof *n);
  if (!n) return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "%s: no host memory for the communicator", fn);
  n->device = ctx->ops->dist_device(ctx);
  pp_status s = PP_OK;
  ncclResult_t r = ncclSuccess;
  int prev = 0;
  cudaGetDevice(&prev); /* given back at the end: the caller's thread keeps its device */
  cudaError_t e = cudaSetDevice(n->device);
  if (e != cudaSuccess) s = cuda_fail(ctx, e, fn);
  if (s == PP_OK && nccl_comm) {
    n->comm = *(const ncclComm_t *)nccl_comm;
    n->owned = false;
    r = ncclCommCount(n->comm, &n->base.nranks);
    if (r == ncclSuccess) r = ncclCommUserRank(n->comm, &n->base.rank);
    if (r != ncclSuccess) s = nccl_fail(ctx, NULL, r, fn);
  } else if (s == PP_OK) {
    ncclUniqueId uid;
    memcpy(&uid, id, sizeof uid);
    r = ncclCommInitRank(&n->comm, nranks, uid, rank);
    if (r != ncclSuccess) {
      n->comm = NULL;
      s = nccl_fail(ctx, NULL, r, "pp_create_dist: ncclCommInitRank");
    }
    n->owned = true;
    n->base.nranks = nranks;
    n->base.rank = rank;
  }
  if (s == PP_OK) {
    e = pp_alloc_fails(PP_ALLOC_DEVICE) ? cudaErrorMemoryAllocation
                                        : cudaMalloc(&n->stage, STAGE_MIN_BYTES);
    if (e != cudaSuccess) s = cuda_fail(ctx, e, "NCCL staging buffer");
    else n->stage_bytes = STAGE_MIN_BYTES;
  }
  cudaSetDevice(prev);
  if (s != PP_OK) {
    if (n->owned && n->comm) ncclCommDestroy(n->comm);
    free(n);
    return s;
  }
  n->base.ops = &nccl_ops;
  *out = &n->base;
  return PP_OK;
}

#else /* no NCCL in this build */

bool pp_nccl_built(void) { return false; }

pp_status pp_nccl_unique_id(unsigned char bytes[128]) {
  (void)bytes;
  return pp_fail(NULL, PP_ERR_UNSUPPORTED, "pp_dist_id_create: this build has no NCCL");
}

int pp_nccl_visible_gpus(void) { return 0; }

pp_status pp_nccl_make_context(pp_context **ctx, int device) {
  (void)device;
  *ctx = NULL;
  return pp_fail(NULL, PP_ERR_UNSUPPORTED, "pp_create_dist: this build has no NCCL");
}

pp_status pp_nccl_comm_device(const void *nccl_comm, int *device) {
  (void)nccl_comm;
  *device = 0;
  return pp_fail(NULL, PP_ERR_UNSUPPORTED, "pp_create_from_comm: this build has no NCCL");
}

pp_status pp_comm_nccl_create(pp_context *ctx, const void *id, int nranks, int rank,
                              const void *nccl_comm, pp_comm **out) {
  (void)id;
  (void)nranks;
  (void)rank;
  (void)nccl_comm;
  *out = NULL;
  return pp_fail(ctx, PP_ERR_UNSUPPORTED, "pp_create_dist: this build has no NCCL");
}

#endif
