/* context.c — contexts, status text, versions, and the memory entry points. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* pp_create has no context to hold its failure text yet, so it keeps it per thread and
 * pp_last_error(NULL) returns it. */
static _Thread_local char create_error[PP_ERROR_TEXT];

/* The text is formatted into a local buffer and then copied, so an argument that points
 * into the context's own error text (a message that wraps an earlier one) is read intact:
 * vsnprintf into the buffer it reads from is undefined (C11 7.21.6.12). */
pp_status pp_fail(pp_context *ctx, pp_status s, const char *fmt, ...) {
  char *dst = ctx ? ctx->error : create_error;
  char text[PP_ERROR_TEXT];
  va_list ap;
  va_start(ap, fmt);
  int len = vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  if (len < 0) len = 0;
  if ((size_t)len >= sizeof text) len = (int)sizeof text - 1;
  memcpy(dst, text, (size_t)len);
  dst[len] = '\0';
  return s;
}

const char *pp_version(void) { return "0.1.0"; }

bool pp_has_cuda_backend(void) {
#ifdef PP_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

const char *pp_status_string(pp_status s) {
  switch (s) {
  case PP_OK: return "ok";
  case PP_ERR_INVALID_ARGUMENT: return "invalid argument";
  case PP_ERR_UNSUPPORTED: return "unsupported";
  case PP_ERR_OUT_OF_MEMORY: return "out of memory";
  case PP_ERR_NO_DEVICE: return "no usable device";
  case PP_ERR_DEVICE: return "device error";
  case PP_ERR_OVERFLOW: return "size overflow";
  }
  return "unknown status";
}

const char *pp_backend_string(pp_backend b) {
  switch (b) {
  case PP_BACKEND_AUTO: return "auto";
  case PP_BACKEND_CPU: return "cpu";
  case PP_BACKEND_CUDA: return "cuda";
  }
  return "unknown";
}

size_t pp_dtype_size(pp_dtype t) {
  switch (t) {
  case PP_U8: return 1;
  case PP_I32:
  case PP_U32:
  case PP_F32: return 4;
  case PP_I64:
  case PP_U64:
  case PP_F64: return 8;
  }
  return 0;
}

const char *pp_dtype_string(pp_dtype t) {
  switch (t) {
  case PP_U8: return "u8";
  case PP_I32: return "i32";
  case PP_U32: return "u32";
  case PP_I64: return "i64";
  case PP_U64: return "u64";
  case PP_F32: return "f32";
  case PP_F64: return "f64";
  }
  return "unknown";
}

const char *pp_last_error(const pp_context *ctx) { return ctx ? ctx->error : create_error; }

pp_backend pp_backend_of(const pp_context *ctx) { return ctx ? ctx->backend : PP_BACKEND_AUTO; }

static const pp_backend_ops *ops_for(pp_backend b) {
  if (b == PP_BACKEND_CPU) return &pp_cpu_ops;
#ifdef PP_HAVE_CUDA
  if (b == PP_BACKEND_CUDA) return &pp_cuda_ops;
#endif
  return NULL;
}

/* PARPRIM_BACKEND lets a user steer AUTO without recompiling (e.g. to compare backends). */
static pp_backend auto_choice(bool *forced) {
  const char *env = getenv("PARPRIM_BACKEND");
  *forced = true;
  if (env && strcmp(env, "cpu") == 0) return PP_BACKEND_CPU;
  if (env && strcmp(env, "cuda") == 0) return PP_BACKEND_CUDA;
  *forced = false;
  return PP_BACKEND_CUDA;
}

static pp_status create_on(pp_context **out, pp_backend b) {
  const pp_backend_ops *ops = ops_for(b);
  if (!ops)
    return pp_fail(NULL, PP_ERR_NO_DEVICE,
                   "pp_create: backend %s is not in this build of parprim", pp_backend_string(b));
  pp_context *ctx = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : calloc(1, sizeof *ctx);
  if (!ctx) return pp_fail(NULL, PP_ERR_OUT_OF_MEMORY, "pp_create: no memory for a context");
  ctx->backend = b;
  ctx->ops = ops;
  pp_status s = ops->init(ctx);
  if (s != PP_OK) {
    pp_fail(NULL, s, "%s", ctx->error); /* the backend said why on the context */
    free(ctx);
    return s;
  }
  *out = ctx;
  return PP_OK;
}

pp_status pp_create(pp_context **ctx, pp_backend backend) {
  create_error[0] = '\0';
  if (!ctx) return pp_fail(NULL, PP_ERR_INVALID_ARGUMENT, "pp_create: ctx is NULL");
  *ctx = NULL;
  if (backend != PP_BACKEND_AUTO && backend != PP_BACKEND_CPU && backend != PP_BACKEND_CUDA)
    return pp_fail(NULL, PP_ERR_INVALID_ARGUMENT, "pp_create: backend (%d) is not a pp_backend",
                   (int)backend);
  if (backend != PP_BACKEND_AUTO) return create_on(ctx, backend);
  bool forced;
  pp_backend b = auto_choice(&forced);
  pp_status s = create_on(ctx, b);
  if (s == PP_ERR_NO_DEVICE && !forced) s = create_on(ctx, PP_BACKEND_CPU);
  if (s == PP_OK) create_error[0] = '\0';
  return s;
}

void pp_destroy(pp_context *ctx) {
  if (!ctx) return;
  if (ctx->dist) pp_dist_destroy(ctx);
  ctx->ops->fini(ctx);
  free(ctx);
}

pp_status pp_synchronize(pp_context *ctx) {
  PP_TRY(pp_check_ctx(ctx));
  return ctx->ops->synchronize(ctx);
}

pp_status pp_set_stream(pp_context *ctx, void *cuda_stream) {
  PP_TRY(pp_check_ctx(ctx));
  return ctx->ops->set_stream(ctx, cuda_stream);
}

pp_status pp_get_device_info(pp_context *ctx, pp_device_info *info) {
  PP_TRY(pp_check_ctx(ctx));
  PP_TRY(pp_check_ptr(ctx, "pp_get_device_info", "info", info));
  pp_device_info tmp;
  memset(&tmp, 0, sizeof tmp);
  PP_TRY(ctx->ops->device_info(ctx, &tmp));
  *info = tmp;
  return PP_OK;
}

pp_status pp_malloc(pp_context *ctx, void **ptr, size_t bytes) {
  PP_TRY(pp_check_ctx(ctx));
  PP_TRY(pp_check_ptr(ctx, "pp_malloc", "ptr", ptr));
  if (bytes == 0) {
    *ptr = NULL;
    return PP_OK;
  }
  void *p = NULL;
  PP_TRY(ctx->ops->mem_alloc(ctx, &p, bytes));
  *ptr = p;
  return PP_OK;
}

pp_status pp_free(pp_context *ctx, void *ptr) {
  PP_TRY(pp_check_ctx(ctx));
  if (!ptr) return PP_OK;
  return ctx->ops->mem_free(ctx, ptr);
}

pp_status pp_copy(pp_context *ctx, void *dst, const void *src, size_t bytes) {
  PP_TRY(pp_check_ctx(ctx));
  if (bytes == 0) return PP_OK;
  PP_TRY(pp_check_ptr(ctx, "pp_copy", "dst", dst));
  PP_TRY(pp_check_ptr(ctx, "pp_copy", "src", src));
  if (dst == src) return PP_OK;
  return ctx->ops->copy(ctx, dst, src, bytes);
}
