/*
 * dist_context.c — distributed contexts: making them (from an id, from MPI_COMM_WORLD, from
 * the caller's communicator), their rank and size, and the failure agreement of
 * dist_internal.h.
 *
 * A distributed context is a plain context of its backend with a pp_dist attached, so
 * every per-rank primitive runs unchanged on it. CUDA ranks talk through NCCL (the GPU is
 * node-local rank modulo the visible GPUs, as API.md says), CPU ranks through MPI.
 *
 * Creation is collective, and a rank that fails while the others go on would leave them
 * waiting: wherever MPI is there (CPU ranks, and CUDA ranks started with id NULL) the ranks
 * agree on the outcome of the local steps over MPI_COMM_WORLD before the communicator is
 * made. CUDA ranks given an id without MPI (threads of one process) have no channel before
 * NCCL's own: a rank that fails before ncclCommInitRank leaves the others in NCCL's
 * bootstrap (docs/distributed.md says so).
 */
#include "dist_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a CPU id holds: this tag, then zeros (CPU ranks find each other through MPI). */
static const char cpu_id_tag[] = "parprim-dist-cpu-mpi-v1";

int pp_rank(const pp_context *ctx) { return ctx && ctx->dist ? ctx->dist->rank : 0; }

int pp_nranks(const pp_context *ctx) { return ctx && ctx->dist ? ctx->dist->nranks : 1; }

static bool is_cpu_id(const pp_dist_id *id) {
  return memcmp(id->bytes, cpu_id_tag, sizeof cpu_id_tag) == 0;
}

#ifdef PP_HAVE_MPI
#define MPI_BUILT true
#else
#define MPI_BUILT false
#endif

/* AUTO: CUDA when this build can run CUDA ranks and a GPU is visible, else CPU. */
static pp_backend resolve_auto(void) {
  return pp_nccl_built() && pp_nccl_visible_gpus() > 0 ? PP_BACKEND_CUDA : PP_BACKEND_CPU;
}

static pp_status check_backend(const char *fn, pp_backend backend) {
  if (backend == PP_BACKEND_AUTO || backend == PP_BACKEND_CPU || backend == PP_BACKEND_CUDA)
    return PP_OK;
  return pp_fail(NULL, PP_ERR_INVALID_ARGUMENT, "%s: backend (%d) is not a pp_backend", fn,
                 (int)backend);
}

static pp_status need_nccl(const char *fn) {
  if (!pp_has_cuda_backend())
    return pp_fail(NULL, PP_ERR_UNSUPPORTED,
                   "%s: this build has no CUDA backend (distributed CUDA contexts need it and NCCL)",
                   fn);
  if (!pp_nccl_built())
    return pp_fail(NULL, PP_ERR_UNSUPPORTED,
                   "%s: this build has no NCCL (install NCCL, e.g. the CUDA toolkit's or the "
                   "nvidia-nccl-cu13 wheel, and rebuild)",
                   fn);
  return PP_OK;
}

static pp_status need_mpi(const char *fn, const char *why) {
  if (MPI_BUILT) return PP_OK;
  return pp_fail(NULL, PP_ERR_UNSUPPORTED,
                 "%s: this build has no MPI (install libopenmpi-dev and rebuild)%s", fn, why);
}

pp_status pp_dist_id_create(pp_backend backend, pp_dist_id *id) {
  static const char fn[] = "pp_dist_id_create";
  PP_TRY(check_backend(fn, backend));
  if (!id) return pp_fail(NULL, PP_ERR_INVALID_ARGUMENT, "%s: id is NULL", fn);
  if (backend == PP_BACKEND_AUTO) backend = resolve_auto();
  pp_dist_id made;
  memset(&made, 0, sizeof made);
  if (backend == PP_BACKEND_CPU) {
    PP_TRY(need_mpi(fn, ""));
    memcpy(made.bytes, cpu_id_tag, sizeof cpu_id_tag);
  } else {
    PP_TRY(need_nccl(fn));
    PP_TRY(pp_nccl_unique_id(made.bytes));
  }
  *id = made;
  return PP_OK;
}

/* Attach the distributed part to a plain context; on failure the comm is destroyed. */
static pp_status attach(pp_context *ctx, pp_comm *comm) {
  pp_dist *d = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : calloc(1, sizeof *d);
  pp_dist_record *rec =
      pp_alloc_fails(PP_ALLOC_HOST) ? NULL : calloc((size_t)comm->nranks, sizeof *rec);
  if (!d || !rec) {
    free(d);
    free(rec);
    comm->ops->destroy(comm);
    return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "pp_create_dist: no host memory for the rank table");
  }
  d->rank = comm->rank;
  d->nranks = comm->nranks;
  d->comm = comm;
  d->records = rec;
  ctx->dist = d;
  return PP_OK;
}

void pp_dist_destroy(pp_context *ctx) {
  pp_dist *d = ctx->dist;
  if (!d) return;
  ctx->dist = NULL;
  if (d->comm) d->comm->ops->destroy(d->comm);
  free(d->records);
  free(d);
}

/* A context's failure text becomes the creation text (pp_last_error(NULL)). */
static pp_status give_up(pp_context *c, pp_status s) {
  if (c) {
    pp_fail(NULL, s, "%s", pp_last_error(c));
    pp_destroy(c);
  }
  return s;
}

/* CPU ranks: the MPI processes of MPI_COMM_WORLD. */
static pp_status create_cpu(pp_context **out, const pp_dist_id *id, int nranks, int rank) {
  static const char fn[] = "pp_create_dist";
  PP_TRY(need_mpi(fn, ""));
  int size = 1, wrank = 0, node = 0;
  PP_TRY(pp_mpi_world(fn, &size, &wrank, &node));
  pp_status st = PP_OK;
  if (id && (nranks != size || rank != wrank))
    st = pp_fail(NULL, PP_ERR_INVALID_ARGUMENT,
                 "%s: nranks (%d) and rank (%d) do not match MPI_COMM_WORLD (%d ranks, this is "
                 "rank %d); CPU ranks are the MPI processes",
                 fn, nranks, rank, size, wrank);
  pp_context *c = NULL;
  if (st == PP_OK) st = pp_create(&c, PP_BACKEND_CPU);
  pp_status agreed;
  pp_mpi_world_agree(fn, st, &agreed);
  if (agreed != PP_OK) {
    if (c) pp_destroy(c);
    return agreed;
  }
  pp_comm *comm = NULL;
  st = pp_comm_mpi_world(c, &comm);
  if (st == PP_OK) st = attach(c, comm);
  if (st != PP_OK) return give_up(c, st);
  *out = c;
  return PP_OK;
}

/* CUDA ranks: one GPU each, NCCL between them. */
static pp_status create_cuda(pp_context **out, const pp_dist_id *id, int nranks, int rank) {
  static const char fn[] = "pp_create_dist";
  PP_TRY(need_nccl(fn));
  const bool via_mpi = id == NULL;
  pp_dist_id made;
  int node = rank;
  pp_status st = PP_OK;
  if (via_mpi) {
    PP_TRY(need_mpi(fn, ": with id NULL the ranks meet through MPI; pass an id from "
                        "pp_dist_id_create instead"));
    PP_TRY(pp_mpi_world(fn, &nranks, &rank, &node));
    memset(&made, 0, sizeof made);
    if (rank == 0) st = pp_nccl_unique_id(made.bytes);
    pp_status agreed;
    pp_mpi_world_agree(fn, st, &agreed);
    if (agreed != PP_OK) return agreed;
    PP_TRY(pp_mpi_world_bcast(fn, made.bytes, sizeof made.bytes));
    id = &made;
  } else {
    if (nranks < 1 || rank < 0 || rank >= nranks)
      return pp_fail(NULL, PP_ERR_INVALID_ARGUMENT,
                     "%s: rank (%d) is not in [0, nranks) with nranks (%d) >= 1", fn, rank, nranks);
    /* one rank per MPI process (the ranks are MPI_COMM_WORLD's): the node-local rank is
     * MPI's. Other groups (threads of one process, say) keep rank; the check is local, so
     * threads never enter an MPI collective together. */
    int size = 1, wrank = 0, wnode = 0;
    pp_mpi_world_place(&size, &wrank);
    if (pp_mpi_active() && size == nranks && wrank == rank && size > 1 &&
        pp_mpi_world(fn, &size, &wrank, &wnode) == PP_OK)
      node = wnode;
  }
  const int gpus = pp_nccl_visible_gpus();
  pp_context *c = NULL;
  if (gpus <= 0)
    st = pp_fail(NULL, PP_ERR_NO_DEVICE, "%s: rank %d sees no CUDA device", fn, rank);
  else
    st = pp_nccl_make_context(&c, node % gpus);
  if (via_mpi) { /* nobody enters ncclCommInitRank unless every rank has its context */
    pp_status agreed;
    pp_mpi_world_agree(fn, st, &agreed);
    if (agreed != PP_OK) {
      if (c) pp_destroy(c);
      return agreed;
    }
  } else if (st != PP_OK) {
    return st;
  }
  pp_comm *comm = NULL;
  st = pp_comm_nccl_create(c, id->bytes, nranks, rank, NULL, &comm);
  if (st == PP_OK) st = attach(c, comm);
  if (st != PP_OK) return give_up(c, st);
  *out = c;
  return PP_OK;
}

pp_status pp_create_dist(pp_context **ctx, pp_backend backend, const pp_dist_id *id,
                         int nranks, int rank) {
  static const char fn[] = "pp_create_dist";
  pp_fail(NULL, PP_OK, "%s", "");
  if (!ctx) return pp_fail(NULL, PP_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
  *ctx = NULL;
  PP_TRY(check_backend(fn, backend));
  if (id) { /* the id says which kind of ranks made it */
    pp_backend kind = is_cpu_id(id) ? PP_BACKEND_CPU : PP_BACKEND_CUDA;
    if (backend != PP_BACKEND_AUTO && backend != kind)
      return pp_fail(NULL, PP_ERR_INVALID_ARGUMENT,
                     "%s: id was made by pp_dist_id_create for the %s backend, not %s", fn,
                     pp_backend_string(kind), pp_backend_string(backend));
    backend = kind;
  } else if (backend == PP_BACKEND_AUTO) {
    backend = resolve_auto();
  }
  pp_context *c = NULL;
  pp_status s = backend == PP_BACKEND_CPU ? create_cpu(&c, id, nranks, rank)
                                          : create_cuda(&c, id, nranks, rank);
  if (s != PP_OK) return s;
  pp_fail(NULL, PP_OK, "%s", "");
  *ctx = c;
  return PP_OK;
}

pp_status pp_create_from_comm(pp_context **ctx, pp_backend backend, void *comm) {
  static const char fn[] = "pp_create_from_comm";
  pp_fail(NULL, PP_OK, "%s", "");
  if (!ctx) return pp_fail(NULL, PP_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
  *ctx = NULL;
  PP_TRY(check_backend(fn, backend));
  if (backend == PP_BACKEND_AUTO)
    return pp_fail(NULL, PP_ERR_INVALID_ARGUMENT,
                   "%s: backend must be PP_BACKEND_CUDA (comm is an ncclComm_t) or "
                   "PP_BACKEND_CPU (comm is an MPI_Comm), not AUTO",
                   fn);
  if (!comm) return pp_fail(NULL, PP_ERR_INVALID_ARGUMENT, "%s: comm is NULL", fn);
  pp_context *c = NULL;
  pp_comm *pc = NULL;
  if (backend == PP_BACKEND_CPU) {
    PP_TRY(need_mpi(fn, ""));
    PP_TRY(pp_create(&c, PP_BACKEND_CPU));
    pp_status s = pp_comm_mpi_create(c, comm, &pc);
    if (s == PP_OK) s = attach(c, pc);
    if (s != PP_OK) return give_up(c, s);
  } else {
    PP_TRY(need_nccl(fn));
    int device = 0;
    PP_TRY(pp_nccl_comm_device(comm, &device));
    PP_TRY(pp_nccl_make_context(&c, device));
    pp_status s = pp_comm_nccl_create(c, NULL, 0, 0, comm, &pc);
    if (s == PP_OK) s = attach(c, pc);
    if (s != PP_OK) return give_up(c, s);
  }
  *ctx = c;
  return PP_OK;
}

/* ---- failure agreement ---------------------------------------------------------------- */

pp_status pp_dist_agree(pp_context *ctx, const char *fn, pp_status st, const pp_dist_val *vals,
                        size_t nvals) {
  pp_dist *d = ctx->dist;
  if (nvals > PP_DIST_MAX_VALS) /* a programming error, the same on every rank */
    return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: internal: %zu agreement values", fn, nvals);
  pp_dist_record mine;
  memset(&mine, 0, sizeof mine);
  mine.status = (int32_t)st;
  mine.nvals = (uint32_t)nvals;
  for (size_t i = 0; i < nvals; i++) mine.vals[i] = vals[i].v;
  if (st != PP_OK) snprintf(mine.error, sizeof mine.error, "%s", ctx->error);
  PP_TRY(d->comm->ops->host_allgather(d->comm, ctx, &mine, d->records, sizeof mine));
  for (int q = 0; q < d->nranks; q++) {
    pp_dist_record *r = &d->records[q];
    if (r->status == PP_OK) continue;
    r->error[PP_ERROR_TEXT - 1] = '\0';
    return pp_fail(ctx, (pp_status)r->status, "%s", r->error);
  }
  for (size_t i = 0; i < nvals; i++) {
    if (!vals[i].uniform_name) continue;
    for (int q = 1; q < d->nranks; q++)
      if (d->records[q].vals[i] != d->records[0].vals[i])
        return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT,
                       "%s: %s differs across ranks (%llu on rank 0, %llu on rank %d)", fn,
                       vals[i].uniform_name, (unsigned long long)d->records[0].vals[i],
                       (unsigned long long)d->records[q].vals[i], q);
  }
  return PP_OK;
}

pp_status pp_dist_offsets(pp_context *ctx, const char *fn, size_t i, size_t *offset,
                          size_t *total) {
  pp_dist *d = ctx->dist;
  size_t sum = 0;
  *offset = 0;
  for (int q = 0; q < d->nranks; q++) {
    if (q == d->rank) *offset = sum;
    uint64_t v = d->records[q].vals[i];
    if (v > SIZE_MAX - sum)
      return pp_fail(ctx, PP_ERR_OVERFLOW, "%s: the ranks' sizes add up past SIZE_MAX", fn);
    sum += (size_t)v;
  }
  if (total) *total = sum;
  return PP_OK;
}
