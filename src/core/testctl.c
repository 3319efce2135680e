/* testctl.c — the test-control entry (testctl.h) and the allocation check every
 * allocation site calls.
 *
 * Fault injection in the manner of SQLite's malloc tests
 * (https://sqlite.org/testing.html#anomaly_testing): a test arms "fail the k-th
 * allocation from now", runs a call, and checks that it reports PP_ERR_OUT_OF_MEMORY with
 * its outputs untouched, for k = 1, 2, ... until the call no longer reaches the k-th
 * allocation. The counter is one process-wide atomic, so an allocation made on an OpenMP
 * worker counts like one made on the calling thread; the order among concurrent
 * allocations is then whatever the atomic increments decide. */
#include "testctl.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>

static atomic_uint_fast64_t alloc_count;  /* attempts so far, counted kinds only */
static atomic_uint_fast64_t fail_at;      /* absolute ordinal to fail; 0: off */
static atomic_int fail_persistent;        /* fail every ordinal >= fail_at */
static atomic_uint fail_kinds = (1u << PP_ALLOC_KINDS) - 1;
static atomic_uint_fast64_t faults_fired;
static atomic_int topk_knobs[PP_TOPK_KNOBS];
static atomic_int topk_knobs_set; /* bit i: knob i was set (static storage starts at 0) */

bool pp_alloc_fails(pp_alloc_kind kind) {
  if (!((atomic_load_explicit(&fail_kinds, memory_order_relaxed) >> kind) & 1u)) return false;
  uint_fast64_t ordinal = atomic_fetch_add_explicit(&alloc_count, 1, memory_order_relaxed) + 1;
  uint_fast64_t target = atomic_load_explicit(&fail_at, memory_order_relaxed);
  if (target == 0) return false;
  bool fail = ordinal == target ||
              (ordinal > target && atomic_load_explicit(&fail_persistent, memory_order_relaxed));
  if (fail) atomic_fetch_add_explicit(&faults_fired, 1, memory_order_relaxed);
  return fail;
}

int pp_topk_knob_value(pp_topk_knob knob, int dflt, int lo, int hi) {
  if ((int)knob < 0 || knob >= PP_TOPK_KNOBS) return dflt;
  if (!((atomic_load_explicit(&topk_knobs_set, memory_order_acquire) >> knob) & 1)) return dflt;
  int v = atomic_load_explicit(&topk_knobs[knob], memory_order_relaxed);
  return v >= lo && v <= hi ? v : dflt;
}

pp_status pp_test_control(int op, ...) {
  va_list ap;
  va_start(ap, op);
  pp_status s = PP_OK;
  switch (op) {
  case PP_TESTCTL_FAULT_ALLOC: {
    int64_t k = va_arg(ap, int64_t);
    int persistent = va_arg(ap, int);
    if (k < 0) {
      s = PP_ERR_INVALID_ARGUMENT;
      break;
    }
    atomic_store(&fail_persistent, persistent != 0);
    atomic_store(&fail_at, k == 0 ? 0 : atomic_load(&alloc_count) + (uint_fast64_t)k);
    break;
  }
  case PP_TESTCTL_FAULT_KINDS: {
    unsigned mask = va_arg(ap, unsigned);
    if (mask >> PP_ALLOC_KINDS) s = PP_ERR_INVALID_ARGUMENT;
    else atomic_store(&fail_kinds, mask);
    break;
  }
  case PP_TESTCTL_ALLOC_COUNT:
  case PP_TESTCTL_FAULTS_FIRED: {
    uint64_t *out = va_arg(ap, uint64_t *);
    if (!out) s = PP_ERR_INVALID_ARGUMENT;
    else *out = (uint64_t)atomic_load(op == PP_TESTCTL_ALLOC_COUNT ? &alloc_count : &faults_fired);
    break;
  }
  case PP_TESTCTL_TOPK_KNOB: {
    int knob = va_arg(ap, int), value = va_arg(ap, int);
    if (knob < 0 || knob >= PP_TOPK_KNOBS || value < -1) {
      s = PP_ERR_INVALID_ARGUMENT;
      break;
    }
    if (value == -1) {
      atomic_fetch_and(&topk_knobs_set, ~(1 << knob));
    } else {
      atomic_store(&topk_knobs[knob], value);
      atomic_fetch_or(&topk_knobs_set, 1 << knob);
    }
    break;
  }
  case PP_TESTCTL_TOPK_KNOB_GET: {
    int knob = va_arg(ap, int);
    int *out = va_arg(ap, int *);
    if (knob < 0 || knob >= PP_TOPK_KNOBS || !out) {
      s = PP_ERR_INVALID_ARGUMENT;
      break;
    }
    *out = (atomic_load(&topk_knobs_set) >> knob) & 1 ? atomic_load(&topk_knobs[knob]) : -1;
    break;
  }
  default:
    s = PP_ERR_INVALID_ARGUMENT;
  }
  va_end(ap);
  return s;
}
