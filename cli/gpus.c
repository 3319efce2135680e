/* gpus.c — the thread-per-GPU launcher of `--gpus N` (gpus.h). pp_create_dist is
 * collective (NCCL's ncclCommInitRank waits for every rank), so the N contexts are made
 * by N threads at once; each thread then runs the caller's function on its rank. */
#define _POSIX_C_SOURCE 200809L
#include "gpus.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pp_gpus_team {
  pthread_barrier_t barrier;
  pp_dist_id id;
  int nranks;
  pp_gpus_fn fn;
  void *arg;
};

typedef struct rank_job {
  pp_gpus_team *team;
  int rank;
  int rc;
} rank_job;

void pp_gpus_barrier(pp_gpus_team *team) { pthread_barrier_wait(&team->barrier); }

static void *rank_main(void *p) {
  rank_job *job = (rank_job *)p;
  pp_gpus_team *team = job->team;
  pp_context *ctx = NULL;
  pp_status s = pp_create_dist(&ctx, PP_BACKEND_CUDA, &team->id, team->nranks, job->rank);
  if (s != PP_OK) {
    fprintf(stderr, "parprim: rank %d of %d: pp_create_dist: %s (%s)\n", job->rank, team->nranks,
            pp_status_string(s), pp_last_error(NULL));
    job->rc = s == PP_ERR_UNSUPPORTED || s == PP_ERR_NO_DEVICE ? 77 : 1;
    return NULL;
  }
  job->rc = team->fn(team, ctx, job->rank, team->nranks, team->arg);
  pp_destroy(ctx);
  return NULL;
}

int pp_gpus_run(int ngpus, pp_gpus_fn fn, void *arg) {
  if (ngpus < 1 || ngpus > PP_GPUS_MAX) {
    fprintf(stderr, "parprim: --gpus %d: give 1 to %d\n", ngpus, PP_GPUS_MAX);
    return 2;
  }
  pp_gpus_team team;
  memset(&team, 0, sizeof team);
  team.nranks = ngpus;
  team.fn = fn;
  team.arg = arg;
  pp_status s = pp_dist_id_create(PP_BACKEND_CUDA, &team.id);
  if (s != PP_OK) {
    fprintf(stderr, "parprim: --gpus: pp_dist_id_create: %s (%s)\n", pp_status_string(s),
            pp_last_error(NULL));
    return s == PP_ERR_UNSUPPORTED || s == PP_ERR_NO_DEVICE ? 77 : 1;
  }
  if (pthread_barrier_init(&team.barrier, NULL, (unsigned)ngpus) != 0) {
    fprintf(stderr, "parprim: --gpus: cannot make a barrier for %d threads\n", ngpus);
    return 1;
  }
  rank_job jobs[PP_GPUS_MAX];
  pthread_t threads[PP_GPUS_MAX];
  int started = 0, rc = 0;
  for (int r = 0; r < ngpus; r++) {
    jobs[r].team = &team;
    jobs[r].rank = r;
    jobs[r].rc = 1;
    if (pthread_create(&threads[r], NULL, rank_main, &jobs[r]) != 0) {
      /* the ranks already started wait in pp_create_dist for this one: nothing can
         release them, so the process ends here */
      fprintf(stderr, "parprim: --gpus: cannot start the thread of rank %d\n", r);
      exit(1);
    }
    started++;
  }
  for (int r = 0; r < started; r++) {
    pthread_join(threads[r], NULL);
    if (jobs[r].rc && (rc == 0 || rc == 77)) rc = jobs[r].rc;
  }
  pthread_barrier_destroy(&team.barrier);
  return rc;
}

int pp_gpus_parse(int argc, char **argv, int *i, int *ngpus) {
  const char *a = argv[*i], *v = NULL;
  if (strcmp(a, "--gpus") == 0) {
    if (*i + 1 >= argc) {
      fprintf(stderr, "parprim: --gpus needs a number of GPUs\n");
      return -1;
    }
    v = argv[++*i];
  } else if (strncmp(a, "--gpus=", 7) == 0) {
    v = a + 7;
  } else {
    return 0;
  }
  char *end = NULL;
  long g = strtol(v, &end, 10);
  if (!*v || *end || g < 1 || g > PP_GPUS_MAX) {
    fprintf(stderr, "parprim: --gpus '%s': give a number from 1 to %d\n", v, PP_GPUS_MAX);
    return -1;
  }
  *ngpus = (int)g;
  return 1;
}
