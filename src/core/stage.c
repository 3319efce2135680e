/* stage.c — the memory rule of API.md: any pointer may be host, pp_malloc, device or
 * managed memory. Arguments the backend cannot use in place go through its scratch. */
#include "check.h"

#include <string.h>

pp_status pp_arg_stage(pp_context *ctx, const char *fn, const char *name, pp_arg_kind kind,
                       const void *p, size_t bytes, size_t align, pp_arg *a) {
  memset(a, 0, sizeof *a);
  a->user = (void *)p;
  a->ptr = (void *)p;
  a->bytes = bytes;
  a->output = kind == PP_ARG_OUT || kind == PP_ARG_INOUT;
  if (bytes == 0) return PP_OK;
  bool aligned = align <= 1 || ((uintptr_t)p % align) == 0;
  if (kind != PP_ARG_IN_COPY && aligned && ctx->ops->accessible(ctx, p)) return PP_OK;

  /* The allocator's own text (which names no entry point) becomes the detail of ours
   * (pp_fail reads its arguments before it writes ctx->error). The text is cleared first so
   * that an allocator failing without a word cannot pass off an older call's message as its
   * reason, and put back when the allocation succeeds: pp_last_error keeps telling the last
   * failure. */
  char before[PP_ERROR_TEXT];
  memcpy(before, ctx->error, sizeof before);
  ctx->error[0] = '\0';
  void *scratch = NULL;
  pp_status s = ctx->ops->temp_alloc(ctx, &scratch, bytes);
  if (s != PP_OK)
    return pp_fail(ctx, s, "%s: cannot stage %s (%zu bytes): %s", fn, name, bytes,
                   ctx->error[0] ? ctx->error : "out of memory");
  memcpy(ctx->error, before, sizeof before);
  if (kind != PP_ARG_OUT) {
    s = ctx->ops->copy(ctx, scratch, p, bytes);
    if (s != PP_OK) {
      ctx->ops->temp_free(ctx, scratch);
      return s;
    }
  }
  a->ptr = scratch;
  a->staged = true;
  return PP_OK;
}

pp_status pp_arg_finish(pp_context *ctx, pp_arg *a) {
  if (!a->staged) return PP_OK;
  pp_status s = a->output ? ctx->ops->copy(ctx, a->user, a->ptr, a->bytes) : PP_OK;
  pp_arg_release(ctx, a);
  return s;
}

void pp_arg_release(pp_context *ctx, pp_arg *a) {
  if (a->staged) ctx->ops->temp_free(ctx, a->ptr);
  a->staged = false;
}

pp_status pp_args_add(pp_context *ctx, pp_args *set, const char *fn, const char *name,
                      pp_arg_kind kind, const void *p, size_t bytes, size_t align, void **ptr) {
  if (set->count >= PP_MAX_ARGS)
    return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: internal: too many staged arguments", fn);
  set->fn = fn;
  pp_arg *a = &set->a[set->count];
  PP_TRY(pp_arg_stage(ctx, fn, name, kind, p, bytes, align, a));
  set->count++;
  *ptr = a->ptr;
  return PP_OK;
}

pp_status pp_args_finish(pp_context *ctx, pp_args *set, pp_status backend_status) {
  pp_status s = backend_status;
  for (int i = 0; i < set->count; i++) {
    if (s == PP_OK)
      s = pp_arg_finish(ctx, &set->a[i]);
    else
      pp_arg_release(ctx, &set->a[i]);
  }
  set->count = 0;
  /* a backend's own failure (its scratch allocator, a CUDA call) may not say which entry
   * point it was in: prefix the name, as API.md asks of every message */
  size_t len = set->fn ? strlen(set->fn) : 0;
  if (s != PP_OK && len && !(strncmp(ctx->error, set->fn, len) == 0 && ctx->error[len] == ':'))
    pp_fail(ctx, s, "%s: %s", set->fn, ctx->error);
  return s;
}

/* Large host copies (staging through pinned buffers) split over a few threads: one core's
 * memcpy reaches about 10 GB/s, less than a PCIe 5 link moves. */
void pp_host_memcpy(void *dst, const void *src, size_t bytes) {
  enum { PIECE = 1 << 20, MAX_THREADS = 8 };
  long pieces = (long)((bytes + PIECE - 1) / PIECE);
  if (pieces < 2) {
    memcpy(dst, src, bytes);
    return;
  }
#pragma omp parallel for schedule(static) num_threads(pieces < MAX_THREADS ? pieces : MAX_THREADS)
  for (long p = 0; p < pieces; p++) {
    size_t off = (size_t)p * PIECE, len = bytes - off < PIECE ? bytes - off : PIECE;
    memcpy((char *)dst + off, (const char *)src + off, len);
  }
}
