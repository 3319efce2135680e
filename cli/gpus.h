/* gpus.h — `--gpus N`: run one function on N GPUs of this node, a thread per GPU, each
 * thread with a distributed CUDA context of its own (rank r on GPU r), made from one
 * pp_dist_id — the one-process form of the SPMD model (docs/distributed.md); mpirun and
 * srun launch the same programs as processes instead. */
#ifndef PP_CLI_GPUS_H
#define PP_CLI_GPUS_H

#include "parprim.h"

typedef struct pp_gpus_team pp_gpus_team;

/* One rank's work: returns 0 on success, non-zero after printing what failed. Every rank
 * must make the same sequence of collective calls. */
typedef int (*pp_gpus_fn)(pp_gpus_team *team, pp_context *ctx, int rank, int nranks,
                          void *arg);

/* Runs fn on ngpus ranks (1 <= ngpus <= PP_GPUS_MAX) and waits for all of them. Returns 0
 * when every rank returned 0, 77 when this build or machine has no distributed CUDA
 * context (no GPU, or no NCCL), else 1; the reason is printed on stderr. */
#define PP_GPUS_MAX 64
int pp_gpus_run(int ngpus, pp_gpus_fn fn, void *arg);

/* Waits until every rank of the team has arrived (a host barrier between the threads). */
void pp_gpus_barrier(pp_gpus_team *team);

/* Parses N of "--gpus N" / "--gpus=N" at argv[i]; returns 1 (and *i past the value), 0 when
 * argv[i] is not --gpus, -1 on a bad value (printed). */
int pp_gpus_parse(int argc, char **argv, int *i, int *ngpus);

/* dist_cmd.c: true when argv asks for --gpus; `parprim sort FILE --gpus N` and
 * `parprim demo --gpus N` (argv[0] is the subcommand name; exit codes as the commands'). */
int pp_gpus_wanted(int argc, char **argv);
int pp_cli_sort_gpus_main(int argc, char **argv);
int pp_cli_demo_gpus_main(int argc, char **argv);

#endif /* PP_CLI_GPUS_H */
