/*
 * parprim.c — the `parprim` command: info, demo, bench, ladder.
 *
 * Every subcommand is a main-like function taking argv from its own name on, so each can
 * also be called from tests; a table maps names to them.
 */
#define _POSIX_C_SOURCE 200809L

#include "parprim.h"

#include "bench.h"
#include "common.h"
#include "cli.h"

#ifdef PP_HAVE_CUDA
#include "ladder.h"
#endif

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_USAGE 2
#define EXIT_SKIP 77 /* ctest's SKIP_RETURN_CODE convention */

static bool is_help(const char *a) {
  return strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0 || strcmp(a, "help") == 0;
}

/* ==================================================================================== */
/* info                                                                                 */
/* ==================================================================================== */

#define COPY_BYTES ((size_t)256 << 20)
#define COPY_REPS 7
#define STAGE_BYTES ((size_t)16 << 20)

static void info_usage(FILE *f) {
  fputs("usage: parprim info\n"
        "\n"
        "Prints the library version, the backends in this build and which are usable, and\n"
        "for each usable backend its device and a measured copy bandwidth: pp_copy between\n"
        "two 256 MiB pp_malloc buffers, counting bytes read + written, median of 7.\n",
        f);
}

static void print_bytes(const char *label, size_t bytes) {
  if (bytes == 0)
    printf("  %-16s unknown\n", label);
  else if (bytes >= ((size_t)1 << 30))
    printf("  %-16s %.1f GiB\n", label, (double)bytes / (double)((size_t)1 << 30));
  else
    printf("  %-16s %.1f MiB\n", label, (double)bytes / (double)((size_t)1 << 20));
}

static void print_cuda_version(const char *label, int v) {
  if (v == 0)
    printf("  %-16s unknown\n", label);
  else
    printf("  %-16s %d.%d\n", label, v / 1000, (v % 1000) / 10);
}

static void print_device(pp_context *ctx) {
  pp_device_info d;
  pp_status s = pp_get_device_info(ctx, &d);
  if (s != PP_OK) {
    printf("  device info:     failed: %s: %s\n", pp_status_string(s), pp_last_error(ctx));
    return;
  }
  bool gpu = pp_backend_of(ctx) == PP_BACKEND_CUDA;
  printf("  %-16s %s\n", "device:", d.name);
  if (gpu) {
    printf("  %-16s %d.%d\n", "compute:", d.compute_major, d.compute_minor);
    printf("  %-16s %d\n", "SMs:", d.multiprocessors);
  } else {
    printf("  %-16s %d\n", "threads:", d.multiprocessors);
#ifdef PP_CPU_SGEMM_NAME /* the library of this build calls OpenBLAS (cmake/cpu_blas.cmake) */
    printf("  %-16s %s\n", "sgemm:", PP_CPU_SGEMM_NAME);
#else
    printf("  %-16s %s\n", "sgemm:", "parprim's own kernel (built without OpenBLAS)");
#endif
  }
  print_bytes("memory:", d.global_mem_bytes);
  print_bytes("L2:", d.l2_bytes);
  if (d.peak_bandwidth_gbs > 0)
    printf("  %-16s %.0f GB/s (datasheet: 2 x memory clock x bus width)\n", "peak bandwidth:",
           d.peak_bandwidth_gbs);
  else
    printf("  %-16s unknown\n", "peak bandwidth:");
  if (gpu) {
    print_cuda_version("driver:", d.driver_version);
    print_cuda_version("runtime:", d.runtime_version);
  }
}

static bool info_check(pp_context *ctx, pp_status s, const char *what) {
  if (s == PP_OK)
    return true;
  printf("  %-16s failed: %s: %s: %s\n", "copy bandwidth:", what, pp_status_string(s),
         pp_last_error(ctx));
  return false;
}

/* Writes every page of the source: untouched host pages all map to the zero page and
 * would read from cache. */
static bool fill_source(pp_context *ctx, void *dst) {
  unsigned char *stage = malloc(STAGE_BYTES);
  if (!stage) {
    printf("  %-16s failed: out of host memory\n", "copy bandwidth:");
    return false;
  }
  memset(stage, 0xa5, STAGE_BYTES);
  bool ok = true;
  for (size_t off = 0; ok && off < COPY_BYTES; off += STAGE_BYTES)
    ok = info_check(ctx, pp_copy(ctx, (char *)dst + off, stage, STAGE_BYTES), "pp_copy (fill)");
  free(stage);
  return ok;
}

static bool time_copies(pp_context *ctx, void *dst, const void *src, double *median_ms) {
  double ms[COPY_REPS];
  /* the first copy is warm-up: page faults, lazy initialisation */
  if (!info_check(ctx, pp_copy(ctx, dst, src, COPY_BYTES), "pp_copy") ||
      !info_check(ctx, pp_synchronize(ctx), "pp_synchronize"))
    return false;
  for (int r = 0; r < COPY_REPS; r++) {
    double t0 = cli_now_ms();
    if (!info_check(ctx, pp_copy(ctx, dst, src, COPY_BYTES), "pp_copy") ||
        !info_check(ctx, pp_synchronize(ctx), "pp_synchronize"))
      return false;
    ms[r] = cli_now_ms() - t0;
  }
  *median_ms = cli_median(ms, COPY_REPS);
  return true;
}

static void measure_copy(pp_context *ctx) {
  void *a = NULL, *b = NULL;
  double ms = 0;
  pp_status s = pp_malloc(ctx, &a, COPY_BYTES);
  if (s == PP_OK)
    s = pp_malloc(ctx, &b, COPY_BYTES);
  if (s == PP_ERR_OUT_OF_MEMORY)
    printf("  %-16s skipped: no room for 2 x 256 MiB (%s)\n", "copy bandwidth:",
           pp_last_error(ctx));
  else if (info_check(ctx, s, "pp_malloc") && fill_source(ctx, a) && time_copies(ctx, b, a, &ms))
    printf("  %-16s %.1f GB/s (pp_copy 256 MiB, read + write, median of %d: %.3f ms)\n",
           "copy bandwidth:", 2.0 * (double)COPY_BYTES / (ms * 1e6), COPY_REPS, ms);
  if (b)
    info_check(ctx, pp_free(ctx, b), "pp_free");
  if (a)
    info_check(ctx, pp_free(ctx, a), "pp_free");
}

/* Returns 1 when the backend is usable. */
static int info_backend(pp_backend b) {
  pp_context *ctx = NULL;
  pp_status s = pp_create(&ctx, b);
  if (s != PP_OK) {
    printf("\n[%s] not usable: %s: %s\n", pp_backend_string(b), pp_status_string(s),
           pp_last_error(NULL));
    return 0;
  }
  printf("\n[%s] usable\n", pp_backend_string(b));
  print_device(ctx);
  measure_copy(ctx);
  pp_destroy(ctx);
  return 1;
}

static void info_auto(void) {
  pp_context *ctx = NULL;
  const char *env = getenv("PARPRIM_BACKEND");
  if (pp_create(&ctx, PP_BACKEND_AUTO) != PP_OK) {
    printf("\nauto: no backend usable: %s\n", pp_last_error(NULL));
    return;
  }
  printf("\nauto picks: %s%s%s%s\n", pp_backend_string(pp_backend_of(ctx)),
         env ? " (PARPRIM_BACKEND=" : "", env ? env : "", env ? ")" : "");
  pp_destroy(ctx);
}

static int info_main(int argc, char **argv) {
  if (argc > 1 && is_help(argv[1])) {
    info_usage(stdout);
    return 0;
  }
  if (argc > 1) {
    fprintf(stderr, "parprim info: unexpected argument '%s'\n\n", argv[1]);
    info_usage(stderr);
    return EXIT_USAGE;
  }
  bool cuda = pp_has_cuda_backend();
  printf("parprim %s (header %d.%d.%d)\n", pp_version(), PARPRIM_VERSION_MAJOR,
         PARPRIM_VERSION_MINOR, PARPRIM_VERSION_PATCH);
  printf("backends in this build: cpu%s\n", cuda ? ", cuda" : " (built without CUDA)");
  int usable = info_backend(PP_BACKEND_CPU);
  if (cuda)
    usable += info_backend(PP_BACKEND_CUDA);
  info_auto();
  return usable ? 0 : 1;
}

/* ==================================================================================== */
/* ladder                                                                               */
/* ==================================================================================== */

/* Each step's main lives in ladder/<step>.cu, built only with CUDA. */
#ifdef PP_HAVE_CUDA
#define LADDER_STEP(name) pp_ladder_##name##_main
#else
static int ladder_without_cuda(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "ladder needs the CUDA backend; this build has none\n");
  return EXIT_SKIP;
}
#define LADDER_STEP(name) ladder_without_cuda
#endif

typedef struct ladder_step {
  const char *name;
  const char *summary;
  int (*main)(int argc, char **argv);
} ladder_step;

static const ladder_step ladder_steps[] = {
    {"reduce", "the reduction steps, from neighboured pairs to the production kernel",
     LADDER_STEP(reduce)},
    {"scan", "prefix sum from Hillis-Steele to Blelloch, then pack and split",
     LADDER_STEP(scan)},
    {"sort", "warp radix sort of 32 keys, block radix sort, then the onesweep sort",
     LADDER_STEP(sort)},
    {"histogram", "global atomics, shared-memory privatisation, then the production kernel",
     LADDER_STEP(histogram)},
    {"topk", "a per-thread insert and block tree against radix selection",
     LADDER_STEP(topk)},
    {"sgemm", "naive, 16/32 tiles, register blocking, vector loads, double buffering, warp tiles",
     LADDER_STEP(sgemm)},
    {"conv", "naive, constant-memory filter, shared tiles, production kernels",
     LADDER_STEP(conv)},
    {"nbody", "the textbook tiled kernel against the production kernel",
     LADDER_STEP(nbody)},
};

static void ladder_usage(FILE *f) {
  fputs("usage: parprim ladder STEP [options]    (parprim ladder STEP --help for its options)\n"
        "\n"
        "The classic optimisation steps of each algorithm, each run, checked and timed\n"
        "against the production kernel and the peer library. Needs the CUDA backend.\n"
        "\nsteps:\n",
        f);
  for (size_t i = 0; i < sizeof ladder_steps / sizeof ladder_steps[0]; i++)
    fprintf(f, "  %-10s %s\n", ladder_steps[i].name, ladder_steps[i].summary);
}

static int ladder_main(int argc, char **argv) {
  if (argc > 1 && is_help(argv[1])) {
    ladder_usage(stdout);
    return 0;
  }
  for (size_t i = 0; argc > 1 && i < sizeof ladder_steps / sizeof ladder_steps[0]; i++)
    if (strcmp(argv[1], ladder_steps[i].name) == 0)
      return ladder_steps[i].main(argc - 1, argv + 1);
  if (argc > 1)
    fprintf(stderr, "parprim ladder: unknown step '%s'\n\n", argv[1]);
  ladder_usage(stderr);
  return EXIT_USAGE;
}

/* ==================================================================================== */
/* main                                                                                 */
/* ==================================================================================== */

typedef struct cli_command {
  const char *name;
  const char *summary;
  int (*main)(int argc, char **argv);
  void (*usage)(FILE *f);
} cli_command;

static const cli_command commands[] = {
    {"info", "version, backends, devices and measured copy bandwidth", info_main, info_usage},
    {"demo", "run every primitive, check it against the CPU backend", pp_cli_demo_main,
     pp_cli_demo_usage},
    {"bench", "time primitives against CUB / memcpy in the same process", pp_cli_bench_main,
     pp_cli_bench_usage},
    {"ladder", "the optimisation ladders (parprim ladder --help), CUDA only", ladder_main,
     ladder_usage},
    {"sort", "sort a raw binary file of numbers (pp_sort)", pp_cli_sort_main, pp_cli_sort_usage},
    {"histogram", "histogram of numbers or an image, chart, plot (pp_histogram_*)",
     pp_cli_histogram_main, pp_cli_histogram_usage},
    {"topk", "the k largest (smallest) values of a raw file, with indices (pp_topk)",
     pp_cli_topk_main, pp_cli_topk_usage},
    {"conv", "filter a PNG, JPEG, PGM or PPM image (pp_conv2d)", pp_cli_conv_main,
     pp_cli_conv_usage},
    {"nbody", "run an N-body simulation, write frames (pp_nbody_step)", pp_cli_nbody_main,
     pp_cli_nbody_usage},
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f) {
  fputs("usage: parprim COMMAND [options]    (parprim COMMAND --help for its options)\n"
        "\n"
        "parprim: data-parallel primitives for NVIDIA GPUs and any CPU, from C.\n"
        "\ncommands:\n",
        f);
  for (size_t i = 0; i < N_COMMANDS; i++)
    fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
  fputs("  help      this text, or `parprim help COMMAND`\n"
        "\n"
        "PARPRIM_BACKEND=cpu|cuda overrides which backend `auto` picks.\n",
        f);
}

static const cli_command *find_command(const char *name) {
  for (size_t i = 0; i < N_COMMANDS; i++)
    if (strcmp(commands[i].name, name) == 0)
      return &commands[i];
  return NULL;
}

static int help_main(int argc, char **argv) {
  if (argc < 2) {
    usage(stdout);
    return 0;
  }
  const cli_command *c = find_command(argv[1]);
  if (!c) {
    fprintf(stderr, "parprim help: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return EXIT_USAGE;
  }
  c->usage(stdout);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (is_help(cmd))
    return help_main(argc - 1, argv + 1);
  if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
    printf("parprim %s\n", pp_version());
    return 0;
  }
  const cli_command *c = find_command(cmd);
  if (c)
    return c->main(argc - 1, argv + 1);
  fprintf(stderr, "parprim: unknown command '%s'\n\n", cmd);
  usage(stderr);
  return EXIT_USAGE;
}
