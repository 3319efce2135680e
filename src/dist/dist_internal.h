/*
 * dist_internal.h — what the distributed algorithms of src/dist share: the distributed part
 * of a context, the failure agreement every collective entry point starts with, and the
 * two engines' constructors.
 *
 * The model (docs/distributed.md): SPMD, one rank per GPU (CUDA contexts, NCCL) or per
 * process (CPU contexts, MPI). A distributed call is written once against comm.h; the
 * per-rank work goes through the backend table like any call on a plain context.
 *
 * Failure agreement. A collective that one rank leaves early hangs the others, so no rank
 * may return on a local failure before the ranks have agreed on it. Every distributed
 * entry point therefore runs
 *
 *     st = pp_dist_agree(ctx, fn, st, vals, nvals);   // st: this rank's status so far
 *
 * at each point where a rank may have failed (after the argument checks, after staging
 * and scratch allocation, after the local pass), before the next collective. The call
 * gathers one small record per rank {status, a few 64-bit values, the error text} with one
 * host all-gather; if any rank failed, every rank returns the status of the lowest failing
 * rank, with that rank's text copied into its own context, so every rank reports the same
 * failure. The 64-bit values carry what the algorithm needs from every rank anyway (n_r,
 * a partial result), so the agreement costs no extra round trip; values marked uniform
 * (op, dtype, k, bins, ...) must be equal on every rank, and a difference fails the call
 * on every rank with PP_ERR_INVALID_ARGUMENT naming the value and the ranks.
 */
#ifndef PP_DIST_INTERNAL_H
#define PP_DIST_INTERNAL_H

#include "../core/check.h"
#include "comm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The 64-bit values one rank contributes to an agreement; more is a programming error. */
#define PP_DIST_MAX_VALS 8

/* One value of an agreement record. uniform_name != NULL: the value must be the same on
 * every rank (the name is what the error message calls it). */
typedef struct pp_dist_val {
  const char *uniform_name;
  uint64_t v;
} pp_dist_val;

/* One rank's record as exchanged (fixed size: all ranks gather the same bytes). */
typedef struct pp_dist_record {
  int32_t status;
  uint32_t nvals;
  uint64_t vals[PP_DIST_MAX_VALS];
  char error[PP_ERROR_TEXT];
} pp_dist_record;

struct pp_dist {
  int rank, nranks;
  pp_comm *comm;
  pp_dist_record *records; /* nranks records: the last agreement's, on every rank */
};

static inline pp_dist *pp_dist_of(const pp_context *ctx) { return ctx->dist; }

/* Agree on this rank's status st (see the header comment). vals may be NULL when nvals is
 * 0. Returns PP_OK when every rank passed PP_OK and the uniform values agree; then
 * pp_dist_value() reads what every rank contributed. When st is a failure, ctx->error must
 * already say why (pp_fail did). */
pp_status pp_dist_agree(pp_context *ctx, const char *fn, pp_status st, const pp_dist_val *vals,
                        size_t nvals);

/* Value i of rank q's record in the last agreement on ctx. */
static inline uint64_t pp_dist_value(const pp_context *ctx, int q, size_t i) {
  return ctx->dist->records[q].vals[i];
}

/* The sum of value i over ranks < q (an exclusive scan of per-rank counts); *total, when
 * not NULL, gets the sum over all ranks. PP_ERR_OVERFLOW (recorded on ctx, the same on
 * every rank since every rank sees the same values) when the sum overflows size_t. */
pp_status pp_dist_offsets(pp_context *ctx, const char *fn, size_t i, size_t *offset,
                          size_t *total);

/* ---- engines: constructors (comm_mpi.c, comm_nccl.c) -------------------------------------- */

/* A communicator over a copy (MPI_Comm_dup) of *mpi_comm, an MPI_Comm passed as a pointer
 * so that this header needs no mpi.h. Collective over that communicator. */
pp_status pp_comm_mpi_create(pp_context *ctx, const void *mpi_comm, pp_comm **out);
/* A communicator over an NCCL communicator: created from the 128-byte id (owned), or
 * adopted from *nccl_comm (not owned; nccl_comm != NULL). The context must be a CUDA
 * context on the communicator's device. */
pp_status pp_comm_nccl_create(pp_context *ctx, const void *id, int nranks, int rank,
                              const void *nccl_comm, pp_comm **out);

/* A communicator over a duplicate of MPI_COMM_WORLD. */
pp_status pp_comm_mpi_world(pp_context *ctx, pp_comm **out);

/* comm_nccl.c: whether NCCL is built in, a new id, the GPUs this process sees, a plain
 * CUDA context on a given device (the calling thread's current device is left as it was),
 * and the device of an ncclComm_t passed by pointer. */
bool pp_nccl_built(void);
pp_status pp_nccl_unique_id(unsigned char bytes[128]);
int pp_nccl_visible_gpus(void);
pp_status pp_nccl_make_context(pp_context **ctx, int device);
pp_status pp_nccl_comm_device(const void *nccl_comm, int *device);

/* MPI_Init_thread when MPI is not initialized yet (then MPI_Finalize runs at exit), and the
 * size and rank of MPI_COMM_WORLD; *node_rank is the rank's place among the ranks sharing
 * its node (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED). Collective over MPI_COMM_WORLD. */
pp_status pp_mpi_world(const char *fn, int *size, int *rank, int *node_rank);
/* true when MPI is initialized (and not finalized) in this process */
bool pp_mpi_active(void);
/* size and rank of MPI_COMM_WORLD without any collective (1 and 0 when MPI is not active) */
void pp_mpi_world_place(int *size, int *rank);
/* Broadcast bytes from rank 0 of MPI_COMM_WORLD; agree on a status with MPI_Allreduce
 * (the largest status code, so one failure fails all; ranks passing PP_OK get PP_OK only
 * when every rank did). */
pp_status pp_mpi_world_bcast(const char *fn, void *buf, size_t bytes);
pp_status pp_mpi_world_agree(const char *fn, pp_status st, pp_status *agreed);

#ifdef __cplusplus
}
#endif

#endif /* PP_DIST_INTERNAL_H */
