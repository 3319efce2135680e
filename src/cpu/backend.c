/* backend.c — the CPU backend's table: memory is host memory, there is no stream, and the
 * primitives run with OpenMP. */
#include "cpu.h"
#include "dist_ops.h"
#include "dsort_rank.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

int pp_cpu_threads(void) {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

static pp_status cpu_init(pp_context *ctx) {
  ctx->impl = NULL;
  return PP_OK;
}

static void cpu_fini(pp_context *ctx) { (void)ctx; }

/* The model name from /proc/cpuinfo where there is one (Linux), else a generic name. */
static void cpu_model(char *dst, size_t cap) {
  snprintf(dst, cap, "CPU");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (strncmp(line, "model name", 10) == 0 && colon) {
      colon++;
      while (*colon == ' ') colon++;
      colon[strcspn(colon, "\n")] = '\0';
      snprintf(dst, cap, "%s", colon);
      break;
    }
  }
  fclose(f);
}

static pp_status cpu_device_info(pp_context *ctx, pp_device_info *info) {
  (void)ctx;
  cpu_model(info->name, sizeof info->name);
  info->multiprocessors = pp_cpu_threads();
  return PP_OK;
}

static pp_status cpu_set_stream(pp_context *ctx, void *stream) {
  if (stream)
    return pp_fail(ctx, PP_ERR_UNSUPPORTED, "pp_set_stream: the cpu backend has no streams");
  return PP_OK;
}

static pp_status cpu_synchronize(pp_context *ctx) {
  (void)ctx;
  return PP_OK;
}

/* 256-byte alignment matches what cudaMalloc gives, so code written for one backend's
 * pp_malloc behaves the same on the other. */
static pp_status cpu_alloc(pp_context *ctx, void **ptr, size_t bytes, const char *fn) {
  size_t rounded = (bytes + 255) & ~(size_t)255;
  void *p = rounded >= bytes && !pp_alloc_fails(PP_ALLOC_HOST) ? aligned_alloc(256, rounded) : NULL;
  if (!p) return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes", fn, bytes);
  *ptr = p;
  return PP_OK;
}

/* pp_malloc and the library's scratch are both plain host memory; only the name in the
 * error message differs. */
static pp_status cpu_mem_alloc(pp_context *ctx, void **ptr, size_t bytes) {
  return cpu_alloc(ctx, ptr, bytes, "pp_malloc");
}
static pp_status cpu_temp_alloc(pp_context *ctx, void **ptr, size_t bytes) {
  return cpu_alloc(ctx, ptr, bytes, "scratch");
}
static void cpu_temp_free(pp_context *ctx, void *ptr) {
  (void)ctx;
  free(ptr);
}
static pp_status cpu_mem_free(pp_context *ctx, void *ptr) {
  cpu_temp_free(ctx, ptr);
  return PP_OK;
}

static pp_status cpu_copy(pp_context *ctx, void *dst, const void *src, size_t bytes) {
  (void)ctx;
  memmove(dst, src, bytes);
  return PP_OK;
}

static bool cpu_accessible(pp_context *ctx, const void *p) {
  (void)ctx;
  (void)p;
  return true;
}

const pp_backend_ops pp_cpu_ops = {
    .name = "cpu", .init = cpu_init, .fini = cpu_fini, .device_info = cpu_device_info,
    .set_stream = cpu_set_stream, .synchronize = cpu_synchronize,
    /* memory */
    .mem_alloc = cpu_mem_alloc, .mem_free = cpu_mem_free, .copy = cpu_copy,
    .accessible = cpu_accessible, .temp_alloc = cpu_temp_alloc, .temp_free = cpu_temp_free,
    /* reduce, scan, compaction, sort */
    .reduce = pp_cpu_reduce, .argreduce = pp_cpu_argreduce, .scan = pp_cpu_scan,
    .select = pp_cpu_select, .select_flagged = pp_cpu_select_flagged,
    .partition = pp_cpu_partition, .sort = pp_cpu_sort, .merge = pp_cpu_merge,
    .sort_copy = pp_cpu_sort_copy, .merge_pairs = pp_cpu_merge_pairs,
    /* histogram, topk, sgemm */
    .histogram_even = pp_cpu_histogram_even, .histogram_range = pp_cpu_histogram_range,
    .histogram_image = pp_cpu_histogram_image, .topk = pp_cpu_topk,
    .topk_rows = pp_cpu_topk_rows, .sgemm = pp_cpu_sgemm,
    /* conv, nbody */
    .conv2d = pp_cpu_conv2d, .conv2d_separable = pp_cpu_conv2d_separable,
    .nbody_accel = pp_cpu_nbody_accel, .nbody_step = pp_cpu_nbody_step,
    .nbody_energy = pp_cpu_nbody_energy,
    /* dist-core */
    PP_CPU_DIST_CORE_OPS,
    /* dist-sort */
    .dsort_rank = pp_cpu_dsort_rank,
};
