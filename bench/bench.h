/*
 * bench.h — the entry of the parprim benchmark harness, `parprim bench [primitive ...]
 * [--n N]... [--reps R] [--csv|--json] [--backend B] [--dtype T] [--op OP]`:
 * pp_cli_bench_main and pp_cli_bench_usage, declared with the other subcommands in
 * cli/cli.h. Its exit code: 0 all ran and matched, 1 a call failed or a result disagreed
 * with the peer, 2 usage, 77 the backend asked for has no device here (ctest's skip code).
 * The helpers it shares with the rest of the command (size parsing, the clock, the random
 * data generator) are in cli/common.h.
 *
 * Plain C11; nothing here needs CUDA. The CUDA side of the harness (events, the CUB
 * peers) sits behind bench/gpu.h.
 */
#ifndef PP_BENCH_H
#define PP_BENCH_H

#include "cli.h"
#include "parprim.h"

#endif /* PP_BENCH_H */
