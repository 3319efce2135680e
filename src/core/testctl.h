/*
 * testctl.h — the library's one test-control entry (internal, not installed).
 *
 * Tests reach internals through pp_test_control(op, ...), after SQLite's
 * sqlite3_test_control (https://sqlite.org/c3ref/test_control.html): one variadic entry
 * whose first argument names the operation, so adding a test hook adds no public symbol.
 * The state it sets is process-wide and thread-safe (C11 atomics in testctl.c).
 *
 * Operations (the arguments after op, in order):
 *   PP_TESTCTL_FAULT_ALLOC      (int64_t k, int persistent): make the k-th allocation from
 *                               now fail, as the real allocator would (k = 0: off). With
 *                               persistent != 0 every allocation from the k-th on fails.
 *   PP_TESTCTL_FAULT_KINDS      (unsigned mask): which kinds of allocation count and fail
 *                               (bits 1 << PP_ALLOC_HOST, ...; default: all kinds).
 *   PP_TESTCTL_ALLOC_COUNT      (uint64_t *count): allocations attempted so far (counted
 *                               kinds only, failed ones included).
 *   PP_TESTCTL_FAULTS_FIRED     (uint64_t *count): allocations failed by injection so far.
 *   PP_TESTCTL_TOPK_KNOB        (int knob, int value): set a top-k tuning knob
 *                               (pp_topk_knob); value -1 restores the built-in default.
 *   PP_TESTCTL_TOPK_KNOB_GET    (int knob, int *value): the knob's value, -1 when unset.
 * An unknown op or a bad argument gives PP_ERR_INVALID_ARGUMENT.
 *
 * Every allocation site in the library asks pp_alloc_fails(kind) first and, when it says
 * true, takes the path it takes when the real allocation fails.
 *
 * C and CUDA C include this header (no C11 atomics here, only in testctl.c).
 */
#ifndef PP_TESTCTL_H
#define PP_TESTCTL_H

#include "parprim.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

enum pp_testctl_op {
  PP_TESTCTL_FAULT_ALLOC = 1,
  PP_TESTCTL_FAULT_KINDS = 2,
  PP_TESTCTL_ALLOC_COUNT = 3,
  PP_TESTCTL_FAULTS_FIRED = 4,
  PP_TESTCTL_TOPK_KNOB = 5,
  PP_TESTCTL_TOPK_KNOB_GET = 6
};

typedef enum pp_alloc_kind {
  PP_ALLOC_HOST = 0,   /* malloc, calloc, aligned_alloc, realloc */
  PP_ALLOC_PINNED = 1, /* cudaHostAlloc, cudaMallocHost */
  PP_ALLOC_DEVICE = 2, /* cudaMalloc, cudaMallocAsync, cudaMallocFromPoolAsync, managed */
  PP_ALLOC_KINDS = 3
} pp_alloc_kind;

/* The CUDA top-k's tuning knobs (src/cuda/topk.cu says what each one does). Unset, each
 * keeps the default written there; they exist so one build can time its routes. */
typedef enum pp_topk_knob {
  PP_TOPK_KNOB_HIST = 0,     /* histogram method, 0..2 */
  PP_TOPK_KNOB_SAMPLED = 1,  /* 0: sampled-threshold paths off */
  PP_TOPK_KNOB_SEG_BPS = 2,  /* segment grid's blocks per SM, 0..64 (0: route off) */
  PP_TOPK_KNOB_GMAX = 3,     /* one-array sample kernel's samples per thread, 1..16 */
  PP_TOPK_KNOB_ROW_GMAX = 4, /* row segment route's samples per thread, 1..16 */
  PP_TOPK_KNOB_RUNS = 5,     /* 0: one sample per sector instead of runs */
  PP_TOPK_KNOB_SKIP = 6,     /* 0: row passes start at the first digit */
  PP_TOPK_KNOBS = 7
} pp_topk_knob;

#if defined(__GNUC__)
#define PP_TESTCTL_EXPORT __attribute__((visibility("default")))
#else
#define PP_TESTCTL_EXPORT
#endif

PP_TESTCTL_EXPORT pp_status pp_test_control(int op, ...);

/* Called once per allocation, just before it: true when this one must fail. */
bool pp_alloc_fails(pp_alloc_kind kind);

/* The knob's value when set through pp_test_control and within [lo, hi], else dflt. */
int pp_topk_knob_value(pp_topk_knob knob, int dflt, int lo, int hi);

#ifdef __cplusplus
}
#endif

#endif /* PP_TESTCTL_H */
