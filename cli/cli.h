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

/* `parprim demo`: every implemented primitive on generated data, checked against the
 * CPU backend (cli/demo.c). */
int pp_cli_demo_main(int argc, char **argv);
void pp_cli_demo_usage(FILE *f);

/* `parprim sort`: sorts a raw binary file of one dtype with pp_sort (cli/sort_cmd.c). */
int pp_cli_sort_main(int argc, char **argv);
void pp_cli_sort_usage(FILE *f);

/* `parprim histogram` (cli/histogram_cmd.c). */
int pp_cli_histogram_main(int argc, char **argv);
void pp_cli_histogram_usage(FILE *f);

/* `parprim topk` (cli/topk_cmd.c). */
int pp_cli_topk_main(int argc, char **argv);
void pp_cli_topk_usage(FILE *f);

/* `parprim conv` (cli/conv_cmd.c). */
int pp_cli_conv_main(int argc, char **argv);
void pp_cli_conv_usage(FILE *f);

/* `parprim nbody` (cli/nbody_cmd.c). */
int pp_cli_nbody_main(int argc, char **argv);
void pp_cli_nbody_usage(FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* PP_CLI_H */
