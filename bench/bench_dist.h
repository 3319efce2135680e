/* bench_dist.h — `parprim bench --gpus N` (bench/bench_dist.c): the distributed primitives
 * on N GPUs of this node, against parprim on one GPU and, for sort, the CUB + NCCL peer,
 * all in the same run. */
#ifndef PP_BENCH_DIST_H
#define PP_BENCH_DIST_H

#include <stdio.h>

/* true when argv (a bench command line) asks for --gpus */
int pp_bench_dist_wanted(int argc, char **argv);
/* The whole `parprim bench --gpus N ...` run; argv[0] is the subcommand name. Exit code as
 * pp_cli_bench_main's: 0 ran and checked, 1 a failure, 2 usage, 77 no distributed CUDA here. */
int pp_bench_dist_main(int argc, char **argv);
void pp_bench_dist_usage(FILE *f);

#endif /* PP_BENCH_DIST_H */
