/*
 * comm_mpi.c — the communicator of CPU contexts, on MPI (MPI 3.1 standard, chapters 5
 * "Collective Communication" and 3 "Point-to-Point"). Every buffer is host memory; each
 * call is one MPI collective on the context's own communicator (a duplicate of the one the
 * ranks were created from, so our traffic never matches the caller's), with MPI_ERRORS_RETURN
 * set on it so that a failure comes back as a status instead of aborting the job.
 *
 * MPI counts are int. Calls whose byte counts or displacements pass INT_MAX go in pieces:
 * all-gather through a contiguous type resized to the block stride (MPI 3.1 §4.1.7), so
 * that piece j of every rank's block lands in place; all-to-all-v through point-to-point
 * transfers in MiB units, all-gather-v through broadcasts of at most PIECE bytes.
 *
 * No collective allocates: what they need besides the data (counts, requests, the MiB type)
 * comes with the communicator, so a rank short of memory still takes part in a collective
 * that the failure agreements have let start.
 *
 * Without MPI in the build every entry here reports what is missing.
 */
#include "dist_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_MPI_TEXT "this build has no MPI (install libopenmpi-dev and rebuild)"

#ifndef PP_HAVE_MPI

pp_status pp_comm_mpi_create(pp_context *ctx, const void *mpi_comm, pp_comm **out) {
  (void)mpi_comm;
  *out = NULL;
  return pp_fail(ctx, PP_ERR_UNSUPPORTED, "pp_create_dist: " NO_MPI_TEXT);
}
pp_status pp_mpi_world(const char *fn, int *size, int *rank, int *node_rank) {
  *size = 1;
  *rank = *node_rank = 0;
  return pp_fail(NULL, PP_ERR_UNSUPPORTED, "%s: " NO_MPI_TEXT, fn);
}
bool pp_mpi_active(void) { return false; }
void pp_mpi_world_place(int *size, int *rank) {
  *size = 1;
  *rank = 0;
}
pp_status pp_comm_mpi_world(pp_context *ctx, pp_comm **out) {
  *out = NULL;
  return pp_fail(ctx, PP_ERR_UNSUPPORTED, "pp_create_dist: " NO_MPI_TEXT);
}
pp_status pp_mpi_world_bcast(const char *fn, void *buf, size_t bytes) {
  (void)buf;
  (void)bytes;
  return pp_fail(NULL, PP_ERR_UNSUPPORTED, "%s: " NO_MPI_TEXT, fn);
}
pp_status pp_mpi_world_agree(const char *fn, pp_status st, pp_status *agreed) {
  (void)st;
  *agreed = PP_ERR_UNSUPPORTED;
  return pp_fail(NULL, PP_ERR_UNSUPPORTED, "%s: " NO_MPI_TEXT, fn);
}

#else

#include <mpi.h>
#include <pthread.h>

/* Largest piece of one transfer (bytes), comfortably inside an int count. */
#define PIECE ((size_t)1 << 30)

/* Unit of the point-to-point exchange of blocks past an int count: a block of B bytes
 * travels as B / MIB units of this many bytes and one message of the rest. */
#define MIB ((size_t)1 << 20)

/* What the collectives need besides the data, allocated with the communicator: a
 * collective allocates nothing, so a rank that is short of memory still takes part and no
 * other rank waits for it forever (the failure agreements come before the collectives). */
typedef struct comm_mpi {
  pp_comm base;
  MPI_Comm comm;
  int *counts;         /* 4 p: counts and displacements of alltoallv / allgatherv */
  MPI_Request *req;    /* 4 p: two messages each way per peer of the exchange */
  MPI_Datatype mib;    /* MIB contiguous bytes */
} comm_mpi;

static MPI_Comm mpi_of(pp_comm *c) { return ((comm_mpi *)c)->comm; }

/* Record an MPI failure on ctx (NULL: the per-thread creation text). */
static pp_status mpi_fail(pp_context *ctx, int err, const char *what) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(err, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "code %d", err);
  return pp_fail(ctx, PP_ERR_DEVICE, "%s: MPI error: %s", what, text);
}

#define MPI_TRY(ctx, call, what)                                                            \
  do {                                                                                      \
    int mpi_e_ = (call);                                                                    \
    if (mpi_e_ != MPI_SUCCESS) return mpi_fail(ctx, mpi_e_, what);                          \
  } while (0)

static MPI_Datatype mpi_type(pp_dtype t) {
  switch (t) {
  case PP_U8: return MPI_UINT8_T;
  case PP_I32: return MPI_INT32_T;
  case PP_U32: return MPI_UINT32_T;
  case PP_I64: return MPI_INT64_T;
  case PP_U64: return MPI_UINT64_T;
  case PP_F32: return MPI_FLOAT;
  case PP_F64: return MPI_DOUBLE;
  }
  return MPI_DATATYPE_NULL;
}

static pp_status mpi_allreduce(pp_comm *c, pp_context *ctx, const void *send, void *recv,
                               size_t count, pp_dtype t, pp_op op) {
  const size_t es = pp_dtype_size(t), step = PIECE / es;
  MPI_Op mop = op == PP_SUM ? MPI_SUM : op == PP_MIN ? MPI_MIN : MPI_MAX;
  for (size_t off = 0; off < count; off += step) {
    size_t len = count - off < step ? count - off : step;
    const void *s = send == recv ? MPI_IN_PLACE : (const char *)send + off * es;
    MPI_TRY(ctx, MPI_Allreduce(s, (char *)recv + off * es, (int)len, mpi_type(t), mop, mpi_of(c)),
            "MPI_Allreduce");
  }
  return PP_OK;
}

static pp_status mpi_allgather(pp_comm *c, pp_context *ctx, const void *send, void *recv,
                               size_t bytes) {
  const bool in_place = send == (const char *)recv + (size_t)c->rank * bytes;
  if (bytes <= (size_t)INT_MAX) {
    MPI_TRY(ctx, MPI_Allgather(in_place ? MPI_IN_PLACE : send, (int)bytes, MPI_BYTE, recv,
                               (int)bytes, MPI_BYTE, mpi_of(c)),
            "MPI_Allgather");
    return PP_OK;
  }
  /* piece j of every block: a contiguous type whose extent is the whole block */
  for (size_t off = 0; off < bytes; off += PIECE) {
    size_t len = bytes - off < PIECE ? bytes - off : PIECE;
    MPI_Datatype piece, strided;
    MPI_TRY(ctx, MPI_Type_contiguous((int)len, MPI_BYTE, &piece), "MPI_Type_contiguous");
    int e = MPI_Type_create_resized(piece, 0, (MPI_Aint)bytes, &strided);
    if (e == MPI_SUCCESS) e = MPI_Type_commit(&strided);
    if (e == MPI_SUCCESS)
      e = MPI_Allgather(in_place ? MPI_IN_PLACE : (const char *)send + off, 1, piece,
                        (char *)recv + off, 1, strided, mpi_of(c));
    MPI_Type_free(&piece);
    if (strided != MPI_DATATYPE_NULL) MPI_Type_free(&strided);
    if (e != MPI_SUCCESS) return mpi_fail(ctx, e, "MPI_Allgather");
  }
  return PP_OK;
}

static bool fits_int(const size_t *a, int n) {
  for (int i = 0; i < n; i++)
    if (a[i] > (size_t)INT_MAX) return false;
  return true;
}

/* Point-to-point, for blocks past an int count: each block as one message of whole MiB
 * units and one of the remaining bytes, both ends posting them in the same order (MPI's
 * non-overtaking rule, MPI 3.1 §3.5), so at most 4 (p - 1) requests. */
static void post_block(comm_mpi *m, char *buf, size_t bytes, int q, bool send, size_t *k,
                       int *e) {
  const size_t units = bytes / MIB, rest = bytes % MIB;
  if (units && *e == MPI_SUCCESS)
    *e = send ? MPI_Isend(buf, (int)units, m->mib, q, 0, m->comm, &m->req[(*k)++])
              : MPI_Irecv(buf, (int)units, m->mib, q, 0, m->comm, &m->req[(*k)++]);
  if (rest && *e == MPI_SUCCESS)
    *e = send ? MPI_Isend(buf + units * MIB, (int)rest, MPI_BYTE, q, 0, m->comm, &m->req[(*k)++])
              : MPI_Irecv(buf + units * MIB, (int)rest, MPI_BYTE, q, 0, m->comm, &m->req[(*k)++]);
}

static pp_status p2p_exchange(pp_comm *c, pp_context *ctx, const void *send,
                              const size_t *send_bytes, const size_t *send_off, void *recv,
                              const size_t *recv_bytes, const size_t *recv_off) {
  comm_mpi *m = (comm_mpi *)c;
  const int p = c->nranks;
  size_t k = 0;
  int e = MPI_SUCCESS;
  for (int q = 0; q < p; q++) {
    if (q == c->rank) continue;
    post_block(m, (char *)recv + recv_off[q], recv_bytes[q], q, false, &k, &e);
    post_block(m, (char *)send + send_off[q], send_bytes[q], q, true, &k, &e);
  }
  if (e == MPI_SUCCESS && send_bytes[c->rank])
    memmove((char *)recv + recv_off[c->rank], (const char *)send + send_off[c->rank],
            send_bytes[c->rank]);
  int w = MPI_Waitall((int)k, m->req, MPI_STATUSES_IGNORE);
  if (e == MPI_SUCCESS) e = w;
  return e == MPI_SUCCESS ? PP_OK : mpi_fail(ctx, e, "MPI_Isend/MPI_Irecv");
}

static pp_status mpi_alltoallv(pp_comm *c, pp_context *ctx, const void *send,
                               const size_t *send_bytes, const size_t *send_off, void *recv,
                               const size_t *recv_bytes, const size_t *recv_off) {
  const int p = c->nranks;
  if (!(fits_int(send_bytes, p) && fits_int(send_off, p) && fits_int(recv_bytes, p) &&
        fits_int(recv_off, p)))
    return p2p_exchange(c, ctx, send, send_bytes, send_off, recv, recv_bytes, recv_off);
  int *v = ((comm_mpi *)c)->counts;
  for (int q = 0; q < p; q++) {
    v[q] = (int)send_bytes[q];
    v[p + q] = (int)send_off[q];
    v[2 * p + q] = (int)recv_bytes[q];
    v[3 * p + q] = (int)recv_off[q];
  }
  int e = MPI_Alltoallv(send, v, v + p, MPI_BYTE, recv, v + 2 * p, v + 3 * p, MPI_BYTE, mpi_of(c));
  return e == MPI_SUCCESS ? PP_OK : mpi_fail(ctx, e, "MPI_Alltoallv");
}

static pp_status mpi_bcast(pp_comm *c, pp_context *ctx, void *buf, size_t bytes, int root) {
  for (size_t off = 0; off < bytes; off += PIECE) {
    size_t len = bytes - off < PIECE ? bytes - off : PIECE;
    MPI_TRY(ctx, MPI_Bcast((char *)buf + off, (int)len, MPI_BYTE, root, mpi_of(c)), "MPI_Bcast");
  }
  return PP_OK;
}

static pp_status mpi_allgatherv(pp_comm *c, pp_context *ctx, const void *send, size_t send_bytes,
                                void *recv, const size_t *recv_bytes, const size_t *recv_off) {
  const int p = c->nranks, me = c->rank;
  const bool in_place = send == (const char *)recv + recv_off[me];
  if (fits_int(recv_bytes, p) && fits_int(recv_off, p)) {
    int *v = ((comm_mpi *)c)->counts;
    for (int q = 0; q < p; q++) {
      v[q] = (int)recv_bytes[q];
      v[p + q] = (int)recv_off[q];
    }
    int e = MPI_Allgatherv(in_place ? MPI_IN_PLACE : send, (int)send_bytes, MPI_BYTE, recv, v,
                           v + p, MPI_BYTE, mpi_of(c));
    return e == MPI_SUCCESS ? PP_OK : mpi_fail(ctx, e, "MPI_Allgatherv");
  }
  if (!in_place && send_bytes) memmove((char *)recv + recv_off[me], send, send_bytes);
  for (int q = 0; q < p; q++)
    PP_TRY(mpi_bcast(c, ctx, (char *)recv + recv_off[q], recv_bytes[q], q));
  return PP_OK;
}

/* The host memory of m (NULL: nothing), its MPI objects aside. */
static void comm_mpi_free(comm_mpi *m) {
  if (!m) return;
  free(m->counts);
  free(m->req);
  free(m);
}

static void mpi_destroy(pp_comm *c) {
  comm_mpi *m = (comm_mpi *)c;
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) {
    MPI_Comm_free(&m->comm);
    MPI_Type_free(&m->mib);
  }
  comm_mpi_free(m);
}

static const pp_comm_ops mpi_ops = {
    .name = "mpi",
    .allreduce = mpi_allreduce,
    .allgather = mpi_allgather,
    .alltoallv = mpi_alltoallv,
    .bcast = mpi_bcast,
    .allgatherv = mpi_allgatherv,
    .host_allgather = mpi_allgather, /* host memory is the CPU backend's memory */
    .host_bcast = mpi_bcast,
    .destroy = mpi_destroy,
};

pp_status pp_comm_mpi_create(pp_context *ctx, const void *mpi_comm, pp_comm **out) {
  *out = NULL;
  if (!pp_mpi_active())
    return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "pp_create_from_comm: MPI is not initialized");
  comm_mpi *c = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : calloc(1, sizeof *c);
  /* MPI_Comm_dup is collective: a rank without memory still takes part, then frees */
  MPI_Comm dup = MPI_COMM_NULL;
  int e = MPI_Comm_dup(*(const MPI_Comm *)mpi_comm, &dup);
  if (e != MPI_SUCCESS) {
    comm_mpi_free(c);
    return mpi_fail(ctx, e, "pp_create_dist: MPI_Comm_dup");
  }
  int size = 0;
  MPI_Comm_size(dup, &size);
  if (c) {
    c->counts = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : malloc(4 * (size_t)size * sizeof *c->counts);
    c->req = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : malloc(4 * (size_t)size * sizeof *c->req);
  }
  if (!c || !c->counts || !c->req) {
    MPI_Comm_free(&dup);
    comm_mpi_free(c);
    return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "pp_create_dist: no host memory for the communicator");
  }
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  e = MPI_Type_contiguous((int)MIB, MPI_BYTE, &c->mib);
  if (e == MPI_SUCCESS) e = MPI_Type_commit(&c->mib);
  if (e != MPI_SUCCESS) {
    MPI_Comm_free(&dup);
    comm_mpi_free(c);
    return mpi_fail(ctx, e, "pp_create_dist: MPI_Type_contiguous");
  }
  c->comm = dup;
  c->base.ops = &mpi_ops;
  MPI_Comm_rank(dup, &c->base.rank);
  c->base.nranks = size;
  *out = &c->base;
  return PP_OK;
}

pp_status pp_comm_mpi_world(pp_context *ctx, pp_comm **out) {
  MPI_Comm world = MPI_COMM_WORLD;
  return pp_comm_mpi_create(ctx, &world, out);
}

/* ---- MPI_COMM_WORLD: starting MPI, and the exchanges of context creation ------------------ */

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

static void finalize_at_exit(void) {
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) MPI_Finalize();
}

bool pp_mpi_active(void) {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}

void pp_mpi_world_place(int *size, int *rank) {
  *size = 1;
  *rank = 0;
  if (!pp_mpi_active()) return;
  MPI_Comm_size(MPI_COMM_WORLD, size);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
}

pp_status pp_mpi_world(const char *fn, int *size, int *rank, int *node_rank) {
  *size = 1;
  *rank = *node_rank = 0;
  pthread_mutex_lock(&init_lock);
  int init = 0, fin = 0, e = MPI_SUCCESS;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init && !fin) {
    /* we started MPI, so we end it: after main returns, once every context is gone */
    int provided = 0;
    e = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
    if (e == MPI_SUCCESS) atexit(finalize_at_exit);
  }
  pthread_mutex_unlock(&init_lock);
  if (fin) return pp_fail(NULL, PP_ERR_UNSUPPORTED, "%s: MPI was already finalized", fn);
  if (e != MPI_SUCCESS) return mpi_fail(NULL, e, fn);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm node = MPI_COMM_NULL;
  e = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, *rank, MPI_INFO_NULL, &node);
  if (e != MPI_SUCCESS) return mpi_fail(NULL, e, fn);
  MPI_Comm_rank(node, node_rank);
  MPI_Comm_free(&node);
  return PP_OK;
}

pp_status pp_mpi_world_bcast(const char *fn, void *buf, size_t bytes) {
  MPI_TRY(NULL, MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD), fn);
  return PP_OK;
}

/* The status and text of the lowest failing rank become every rank's: the lowest failing
 * rank is found with one MPI_Allreduce (MIN over the failing ranks' numbers) and sends its
 * status and text with one MPI_Bcast. No allocation, so a rank short of memory takes part. */
pp_status pp_mpi_world_agree(const char *fn, pp_status st, pp_status *agreed) {
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int mine = st != PP_OK ? rank : size, first = size;
  int e = MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (e != MPI_SUCCESS) {
    *agreed = PP_ERR_DEVICE;
    return mpi_fail(NULL, e, fn);
  }
  *agreed = PP_OK;
  if (first == size) return PP_OK;
  pp_dist_record rec;
  memset(&rec, 0, sizeof rec);
  if (rank == first) {
    rec.status = (int32_t)st;
    snprintf(rec.error, sizeof rec.error, "%s", pp_last_error(NULL));
  }
  e = MPI_Bcast(&rec, (int)sizeof rec, MPI_BYTE, first, MPI_COMM_WORLD);
  if (e != MPI_SUCCESS) {
    *agreed = PP_ERR_DEVICE;
    return mpi_fail(NULL, e, fn);
  }
  rec.error[PP_ERROR_TEXT - 1] = '\0';
  *agreed = (pp_status)rec.status;
  return pp_fail(NULL, *agreed, "%s", rec.error);
}

#endif /* PP_HAVE_MPI */
