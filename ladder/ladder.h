/*
 * ladder.h — entry points of parprim's optimisation ladders.
 *
 * A ladder is a runnable, tested sequence of the classic optimisation steps for one
 * primitive (in the style of llm.c's dev/cuda/<op>.cu): a CPU reference, then one GPU
 * version per idea, each validated against the reference and timed, next to the
 * production kernel (pp_reduce, pp_scan, ...) and CUB.
 *
 * The functions take the arguments of their subcommand: `parprim ladder reduce --n 1000`
 * calls pp_ladder_reduce_main with argv = {"reduce", "--n", "1000"}. argv[0] may also be
 * left out (argv = {"--n", "1000"}): a first argument that does not start with '-' is
 * taken as the command's name and skipped, as main() skips the program name.
 *
 * Return value (use it as the process's exit status):
 *   0  every step passed its validation
 *   1  a step failed validation, or a CUDA call failed (the message names file:line)
 *   2  bad usage (the usage text is printed to stderr)
 *  77  no usable CUDA device ("SKIP: no CUDA device" is printed)
 */
#ifndef PARPRIM_LADDER_H
#define PARPRIM_LADDER_H

#ifdef __cplusplus
extern "C" {
#endif

/* f32 SUM ladder (plus the grid-stride atomicMax step for f32 MAX); see ladder/reduce.cu.
 * Options: --n N, --block B, --reps R, --check, --csv, --help. */
int pp_ladder_reduce_main(int argc, char **argv);

/* u32 exclusive SUM ladder (Hillis-Steele, Blelloch, padded Blelloch) plus pack and split
 * built on it; see ladder/scan.cu. Options: --n N, --reps R, --check, --csv, --help. */
int pp_ladder_scan_main(int argc, char **argv);

/* Sort ladder (ladder/sort.cu): warp radix sort of 32 keys, block radix sort, the
 * production sort and CUB. */
int pp_ladder_sort_main(int argc, char **argv);
/* ladder/histogram.cu */
int pp_ladder_histogram_main(int argc, char **argv);
/* ladder/topk.cu */
int pp_ladder_topk_main(int argc, char **argv);
/* ladder/sgemm.cu */
int pp_ladder_sgemm_main(int argc, char **argv);
/* ladder/conv.cu */
int pp_ladder_conv_main(int argc, char **argv);
/* ladder/nbody.cu */
int pp_ladder_nbody_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif /* PARPRIM_LADDER_H */
