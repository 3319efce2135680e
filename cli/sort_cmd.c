/*
 * sort_cmd.c — `parprim sort FILE --type T [--desc] [--out FILE] [--backend B]`: sorts a
 * raw binary file of one element type with pp_sort and writes the result.
 *
 * The file is read whole into host memory. On the CPU backend it is sorted there in
 * place; on a GPU it is copied to pp_malloc memory first, so that the time printed is the
 * sort itself, not the transfers (which are reported apart).
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"
#include "gpus.h"
#include "out_file.h"
#include "progress.h"

#include "common.h"
#include "parprim.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pp_cli_sort_usage(FILE *f) {
  fputs("usage: parprim sort FILE --type T [--desc] [--out FILE] [--backend cpu|cuda|auto]\n"
        "                   [--quiet]\n"
        "\n"
        "Sorts a raw binary file of elements of type T (native byte order, no header) with\n"
        "pp_sort and writes the sorted elements to --out (default: FILE.sorted). Prints the\n"
        "element count, the time of the sort itself and the backend it ran on. The sort is\n"
        "stable; floats order -0.0 == +0.0 and NaN after +inf (before, with --desc), and\n"
        "every element keeps its bits.\n"
        "\n"
        "  --type T      u8, i32, u32, i64, u64, f32, f64 (required)\n"
        "  --desc        descending order (default ascending)\n"
        "  --out FILE    where to write the result (default: FILE.sorted); may be FILE: it\n"
        "                is replaced only once the result is written whole\n"
        "  --quiet       no progress line on stderr\n"
        "  --backend B   cpu, cuda or auto (default auto: CUDA when a GPU is usable)\n"
        "  --gpus N      sort across N GPUs of this node (distributed contexts)\n"
        "  -h, --help    this text\n"
        "\n"
        "Exit status: 0 sorted and written; 1 the file could not be read or written, its\n"
        "size is not a multiple of the element size, or the sort failed; 2 usage error.\n",
        f);
}

typedef struct sort_args {
  const char *in, *out;
  pp_dtype type;
  bool desc;
  pp_backend backend;
} sort_args;

/* Returns -1 when parsed, else the exit code (0 after help). */
static int sort_parse(int argc, char **argv, sort_args *a) {
  const cli_option options[] = {
      CLI_DTYPE("--type", &a->type, NULL, CLI_REQUIRED),
      CLI_FLAG("--desc", &a->desc),
      CLI_NAME("--out", &a->out, "a file name"),
      CLI_BACKEND("--backend", &a->backend),
      CLI_QUIET,
  };
  cli_scan sc = CLI_SCAN("sort", pp_cli_sort_usage, options, argc, argv, &a->in, "no input FILE");
  return cli_scan_all(&sc);
}

/* Sorts host[0..n) on ctx; on a GPU through pp_malloc memory. */
static int sort_on(pp_context *ctx, const sort_args *a, void *host, size_t n, size_t bytes) {
  const bool staged = pp_backend_of(ctx) != PP_BACKEND_CPU && n > 0;
  void *work = host;
  double t0 = cli_now_ms(), copy_ms = 0.0;
  pp_status s;
  if (staged) {
    if (cli_stage("sort", ctx, host, bytes, &work)) return 1;
    copy_ms = cli_now_ms() - t0;
  }
  pp_sort_opts opts = {a->desc ? PP_DESCENDING : PP_ASCENDING, PP_SORT_AUTO};
  double t1 = cli_now_ms();
  s = pp_sort(ctx, a->type, work, NULL, 0, n, &opts);
  if (s == PP_OK) s = pp_synchronize(ctx);
  double sort_ms = cli_now_ms() - t1;
  if (s != PP_OK) {
    if (staged) (void)pp_free(ctx, work);
    return cli_call_failed("sort", ctx, "pp_sort", s);
  }
  if (staged) {
    double t2 = cli_now_ms();
    s = pp_copy(ctx, host, work, bytes);
    pp_status fs = pp_free(ctx, work);
    if (s != PP_OK) return cli_call_failed("sort", ctx, "copy from the device", s);
    if (fs != PP_OK) return cli_call_failed("sort", ctx, "pp_free", fs);
    copy_ms += cli_now_ms() - t2;
  }

  pp_device_info info;
  const char *dev = pp_get_device_info(ctx, &info) == PP_OK ? info.name : "unknown device";
  printf("sorted %zu %s elements %s in %.3f ms (%.1f M elements/s) on %s (%s)\n", n,
         pp_dtype_string(a->type), a->desc ? "descending" : "ascending", sort_ms,
         sort_ms > 0 ? (double)n / (sort_ms * 1e3) : 0.0, pp_backend_string(pp_backend_of(ctx)),
         dev);
  if (staged) printf("copies to and from the device: %.3f ms\n", copy_ms);
  return 0;
}

int pp_cli_sort_main(int argc, char **argv) {
  if (pp_gpus_wanted(argc, argv)) /* --gpus N: sorted across N GPUs (dist_cmd.c) */
    return pp_cli_sort_gpus_main(argc, argv);
  sort_args a = {NULL, NULL, PP_U8, false, PP_BACKEND_AUTO};
  int rc = sort_parse(argc, argv, &a);
  if (rc >= 0) return rc;

  char *default_out = NULL;
  if (!a.out) {
    size_t len = strlen(a.in) + sizeof ".sorted";
    default_out = malloc(len);
    if (!default_out) {
      fprintf(stderr, "parprim sort: out of host memory\n");
      return 1;
    }
    snprintf(default_out, len, "%s.sorted", a.in);
    a.out = default_out;
  }

  void *data = NULL;
  size_t bytes = 0;
  const size_t es = pp_dtype_size(a.type);
  char err[512];
  if (cli_out_check(a.out, err, sizeof err) != 0) { /* before the work, not after */
    fprintf(stderr, "parprim sort: %s\n", err);
    free(default_out);
    return 1;
  }
  rc = cli_progress_read_raw("sort", a.in, es, &data, &bytes);
  pp_context *ctx = NULL;
  if (rc == 0) rc = cli_create("sort", &ctx, a.backend);
  if (rc == 0) rc = sort_on(ctx, &a, data, bytes / es, bytes);
  if (rc == 0) rc = cli_write_raw("sort", a.out, data, bytes);
  if (rc == 0) printf("wrote %s\n", a.out);
  pp_destroy(ctx);
  free(data);
  free(default_out);
  return rc;
}
