/*
 * cli.h — what the files of the `parprim` command share. Each subcommand is a
 * main-like function: argv[0] is the subcommand's name, the return value is the exit
 * code (0 ok, 1 failure, 2 usage error).
 */
#ifndef PP_CLI_H
#define PP_CLI_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Declares pp_cli_NAME_main(argc, argv), the subcommand `parprim NAME`, and
 * pp_cli_NAME_usage(f), which writes its usage text to f. */
#define PP_CLI_SUBCOMMAND(name)                                                            \
  int pp_cli_##name##_main(int argc, char **argv);                                         \
  void pp_cli_##name##_usage(FILE *f);

/* every implemented primitive on generated data, checked against the CPU backend (demo.c) */
PP_CLI_SUBCOMMAND(demo)
/* parprim against its peer in the same process (bench/bench.c, bench/bench.h) */
PP_CLI_SUBCOMMAND(bench)
/* sorts a raw binary file of one dtype with pp_sort (sort_cmd.c) */
PP_CLI_SUBCOMMAND(sort)
/* histogram of a raw array or an image (histogram_cmd.c) */
PP_CLI_SUBCOMMAND(histogram)
/* the k largest or smallest elements of a raw array (topk_cmd.c) */
PP_CLI_SUBCOMMAND(topk)
/* filters an image with pp_conv2d (conv_cmd.c) */
PP_CLI_SUBCOMMAND(conv)
/* an N-body simulation with PNG frames (nbody_cmd.c) */
PP_CLI_SUBCOMMAND(nbody)

#ifdef __cplusplus
}
#endif

#endif /* PP_CLI_H */
