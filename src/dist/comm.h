/*
 * comm.h — the small communicator interface the distributed algorithms are written
 * against, once, for both backends. One implementation sits on NCCL (CUDA contexts:
 * buffers are device memory, work is queued on the context's stream) and one on MPI (CPU
 * contexts: buffers are host memory). Neither is a transport of our own: each call maps
 * onto one library collective (or, for all-to-all-v on NCCL, one group of ncclSend /
 * ncclRecv pairs).
 *
 * Buffers: the "dev" calls take memory the context's backend computes on (device memory
 * for CUDA, host memory for the CPU); the "host" calls take small host buffers (counts,
 * statuses, splitters) and, on NCCL, stage them through the communicator's own small device
 * buffer. Every call is collective: all ranks make it, in the same order, with the same
 * sizes where the sizes are per-rank-uniform.
 */
#ifndef PP_DIST_COMM_H
#define PP_DIST_COMM_H

#include "../core/internal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_comm pp_comm;

typedef struct pp_comm_ops {
  const char *name; /* "nccl" or "mpi" */
  /* recv[i] = op over ranks of send[i], for count elements of t (SUM / MIN / MAX as the
   * library does them natively; callers that need NaN rules combine with allgather). */
  pp_status (*allreduce)(pp_comm *c, pp_context *ctx, const void *send, void *recv,
                         size_t count, pp_dtype t, pp_op op);
  /* recv holds nranks blocks of `bytes` each, rank r's at r * bytes. */
  pp_status (*allgather)(pp_comm *c, pp_context *ctx, const void *send, void *recv,
                         size_t bytes);
  /* Rank r sends send_bytes[q] bytes from send + send_off[q] to rank q, and receives
   * recv_bytes[q] bytes from rank q at recv + recv_off[q]. The count arrays are host memory,
   * nranks entries each, and must agree pairwise (what r sends q is what q receives from r).
   * Every block must start at the same address modulo 16 on both sides (send + send_off[q]
   * on r and recv + recv_off[r] on q): the NCCL engine cuts each block at its 16-byte
   * boundaries and moves the aligned middle on its own, so that NCCL copies aligned 16-byte
   * words (on blocks 4 bytes off it ran at about 60% of that speed), and both sides must cut
   * alike for the parts to pair up. */
  pp_status (*alltoallv)(pp_comm *c, pp_context *ctx, const void *send,
                         const size_t *send_bytes, const size_t *send_off, void *recv,
                         const size_t *recv_bytes, const size_t *recv_off);
  pp_status (*bcast)(pp_comm *c, pp_context *ctx, void *buf, size_t bytes, int root);
  /* All-gather of blocks of different sizes: rank q's send_bytes (= recv_bytes[q]) land at
   * recv + recv_off[q] on every rank; the host arrays recv_bytes and recv_off have nranks
   * entries and are the same on every rank. (Added with the distributed N-body and top-k,
   * whose ranks contribute n_r bodies or min(k, n_r) candidates.) */
  pp_status (*allgatherv)(pp_comm *c, pp_context *ctx, const void *send, size_t send_bytes,
                          void *recv, const size_t *recv_bytes, const size_t *recv_off);
  /* The same, on small host buffers (at most a few MiB); these return when recv is written. */
  pp_status (*host_allgather)(pp_comm *c, pp_context *ctx, const void *send, void *recv,
                              size_t bytes);
  pp_status (*host_bcast)(pp_comm *c, pp_context *ctx, void *buf, size_t bytes, int root);
  void (*destroy)(pp_comm *c); /* frees the communicator unless it was adopted */
} pp_comm_ops;

struct pp_comm {
  const pp_comm_ops *ops;
  int rank, nranks;
};

#ifdef __cplusplus
}
#endif

#endif /* PP_DIST_COMM_H */
