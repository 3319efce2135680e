/*
 * topk_cmd.c — `parprim topk FILE --type T --k K [--smallest] [--out FILE]
 * [--backend B]`: the k largest (or smallest) elements of a raw binary file of one
 * element type, with pp_topk.
 *
 * The file is read whole into host memory and, on a GPU, copied to pp_malloc memory
 * first, so that the time printed is the selection itself. Without --out the results are
 * printed one per line under a header (rank, value, index in the file); with --out the k
 * values are written raw (native byte order) to FILE and the k indices as uint64 to
 * FILE.idx.
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"
#include "out_file.h"
#include "progress.h"

#include "common.h"
#include "parprim.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pp_cli_topk_usage(FILE *f) {
  fputs("usage: parprim topk FILE --type T --k K [--smallest] [--out FILE]\n"
        "                    [--backend cpu|cuda|auto] [--quiet]\n"
        "\n"
        "Finds the K largest (or smallest) elements of a raw binary file of elements of\n"
        "type T (native byte order, no header) with pp_topk, in order, with their indices\n"
        "in the file (from 0). NaN counts as the largest value; equal values are taken by\n"
        "lowest index. Prints the time of the selection and, without --out, one line per\n"
        "result under a header: rank, value, index.\n"
        "\n"
        "  --type T      u8, i32, u32, i64, u64, f32, f64 (required)\n"
        "  --k K         how many (required; at most the element count)\n"
        "  --smallest    the K smallest instead of the K largest\n"
        "  --out FILE    write the K values raw to FILE and their indices (uint64) to\n"
        "                FILE.idx instead of printing them\n"
        "  --indices     accepted for older scripts: indices are always given\n"
        "  --backend B   cpu, cuda or auto (default auto: CUDA when a GPU is usable)\n"
        "  --quiet       no progress line on stderr\n"
        "  -h, --help    this text\n"
        "\n"
        "Exit status: 0 done; 1 the file could not be read or written, its size is not a\n"
        "multiple of the element size, K exceeds the element count, or the call failed;\n"
        "2 usage error.\n",
        f);
}

typedef struct topk_args {
  const char *in, *out;
  pp_dtype type;
  size_t k;
  bool smallest, indices;
  pp_backend backend;
} topk_args;

/* Returns -1 when parsed, else the exit code (0 after help). */
static int parse(int argc, char **argv, topk_args *a) {
  const cli_option options[] = {
      CLI_DTYPE("--type", &a->type, NULL, CLI_REQUIRED),
      CLI_SIZE("--k", &a->k, CLI_REQUIRED, 0, 0, "bad --k '%s'"),
      CLI_FLAG("--smallest", &a->smallest),
      CLI_NAME("--out", &a->out, "a file name"),
      CLI_FLAG("--indices", &a->indices),
      CLI_BACKEND("--backend", &a->backend),
      CLI_QUIET,
  };
  cli_scan sc = CLI_SCAN("topk", pp_cli_topk_usage, options, argc, argv, &a->in, "no input FILE");
  return cli_scan_all(&sc);
}

/* Selects on ctx (through pp_malloc memory on a GPU) into host vals / idx. */
static int select_on(pp_context *ctx, const topk_args *a, const void *host, size_t n,
                     void *vals, uint64_t *idx) {
  const size_t es = pp_dtype_size(a->type);
  const bool staged = pp_backend_of(ctx) != PP_BACKEND_CPU && n > 0;
  const void *work = host;
  void *dev = NULL;
  pp_status s;
  if (staged) {
    if (cli_stage("topk", ctx, host, n * es, &dev)) return 1;
    work = dev;
  }
  double t0 = cli_now_ms();
  s = pp_topk(ctx, a->type, work, n, a->k, !a->smallest, vals, idx);
  if (s == PP_OK) s = pp_synchronize(ctx);
  double ms = cli_now_ms() - t0;
  if (dev) (void)pp_free(ctx, dev);
  if (s != PP_OK) return cli_call_failed("topk", ctx, "pp_topk", s);
  pp_device_info info;
  const char *name = pp_get_device_info(ctx, &info) == PP_OK ? info.name : "unknown device";
  printf("%zu %s of %zu %s elements in %.3f ms on %s (%s)\n", a->k,
         a->smallest ? "smallest" : "largest", n, pp_dtype_string(a->type), ms,
         pp_backend_string(pp_backend_of(ctx)), name);
  return 0;
}

int pp_cli_topk_main(int argc, char **argv) {
  topk_args a = {.type = PP_U8, .backend = PP_BACKEND_AUTO};
  int rc = parse(argc, argv, &a);
  if (rc >= 0) return rc;
  const size_t es = pp_dtype_size(a.type);
  void *data = NULL, *vals = NULL;
  uint64_t *idx = NULL;
  size_t bytes = 0;
  pp_context *ctx = NULL;
  char err[512], *ipath = NULL;
  if (a.out) {
    size_t len = strlen(a.out) + 5;
    ipath = malloc(len);
    if (!ipath) {
      fprintf(stderr, "parprim topk: out of host memory\n");
      return 1;
    }
    snprintf(ipath, len, "%s.idx", a.out);
    if (cli_out_check(a.out, err, sizeof err) != 0 || cli_out_check(ipath, err, sizeof err) != 0) {
      fprintf(stderr, "parprim topk: %s\n", err);
      free(ipath);
      return 1;
    }
  }
  rc = cli_progress_read_raw("topk", a.in, es, &data, &bytes);
  const size_t n = bytes / es;
  if (rc == 0 && a.k > n) {
    fprintf(stderr, "parprim topk: --k %zu exceeds the %zu elements of '%s'\n", a.k, n, a.in);
    rc = 1;
  }
  if (rc == 0) {
    vals = malloc(a.k ? a.k * es : 1);
    idx = malloc(a.k ? a.k * 8 : 8);
    if (!vals || !idx) {
      fprintf(stderr, "parprim topk: out of host memory\n");
      rc = 1;
    }
  }
  if (rc == 0) rc = cli_create("topk", &ctx, a.backend);
  if (rc == 0) rc = select_on(ctx, &a, data, n, vals, idx);
  if (rc == 0 && a.out) {
    rc = cli_write_raw("topk", a.out, vals, a.k * es);
    if (rc == 0) rc = cli_write_raw("topk", ipath, idx, a.k * 8);
    if (rc == 0) printf("wrote %s and %s\n", a.out, ipath);
  } else if (rc == 0) {
    printf("rank\tvalue\tindex\n");
    for (size_t j = 0; j < a.k; j++) {
      char text[64];
      cli_format_value(a.type, (const char *)vals + j * es, text, sizeof text);
      printf("%zu\t%s\t%" PRIu64 "\n", j + 1, text, idx[j]);
    }
  }
  pp_destroy(ctx);
  free(data);
  free(vals);
  free(idx);
  free(ipath);
  return rc;
}
