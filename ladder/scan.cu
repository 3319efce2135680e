/*
 * ladder/scan.cu — the prefix-sum ladder: exclusive SUM of u32 from a serial CPU scan
 * through the classic GPU scans to the production kernel and CUB, then the two
 * applications the book builds on a scan, pack (compaction) and split (stable
 * partition), against pp_select / pp_partition and CUB.
 *
 * The steps follow the prefix-sum section of Learn CUDA Programming (Han and Sharma,
 * ch. 7; "the book" below): naive scan with double buffering, Blelloch's work-efficient
 * scan in one block of 2048 elements, the block-wise extension with a scan of the block
 * sums, GPU Gems 3 ch. 39's bank-conflict avoidance, and
 * pack/split as predicate -> scan -> scatter). The code is our own: any n (tails are
 * padded with the identity 0), 64-bit indices, every step validated exactly.
 *
 *   step 1    CPU reference: serial exclusive scan (1p: serial pack, 1s: serial split)
 *   step 2    Hillis-Steele within a block of 1024, double-buffered, any n
 *   step 3    Blelloch up-sweep/down-sweep in ONE block: 2048 elements (the book's limit)
 *   step 4    Blelloch per block of 2048 + scan of the block sums + add offsets
 *   step 5    step 4 with padded shared-memory indices (no bank conflicts)
 *   step 6    production: pp_scan(PP_SUM, PP_U32, exclusive) on a CUDA context
 *   step 7    cub::DeviceScan::ExclusiveSum
 *   step 8    pack: predicate kernel -> scan of flags (step 5) -> scatter kernel
 *   step 9    production: pp_select(PP_F32, x > 0)
 *   step 10   cub::DeviceSelect::If
 *   step 11   split: predicate kernel -> scan of flags (step 5) -> scatter kernel
 *   step 12   production: pp_partition(PP_F32, x > 0)
 *   step 13   cub::DevicePartition::If (writes the rejected part in reverse order)
 *
 * Steps 2, 4 and 5 scan the block sums with the same kernel, recursively, until one
 * block holds them all: for n = 2^24 that is the tile kernel on 2^24 elements, on their
 * 16384 (8192) block sums and on those sums' 16 (4), then two passes adding offsets.
 * The pack and split flags are u32, so their scan of flags needs n < 2^32; larger n
 * skips those steps.
 *
 * Written C-style (structs, free functions, status returns; templates only to stamp out
 * the padded and plain kernel). CUB is the peer we measure against; it appears here and
 * in bench/ only, never in the library.
 *
 * Run through the CLI:   parprim ladder scan [--n N] [--reps R] [--check] [--csv]
 * or standalone:         nvcc -std=c++17 -arch=sm_90 -O3 -DPP_LADDER_STANDALONE
 *                          -I include -I cli ladder/scan.cu cli/common.c -o ladder_scan
 *                          -L<build> -lparprim
 */
#include "common.cuh"
#include "ladder.h"
#include "parprim.h"

#include <cuda_runtime.h>
#include <cub/device/device_partition.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------ */
/* Error handling                                                                        */
/* ------------------------------------------------------------------------------------ */

// A failed CUDA call ends the whole run (exit status 1): after an illegal address or a
// launch failure the context is unusable. LADDER_CUDA_TRY (common.cuh) reports it with
// file:line; every function on the way up returns false. Other fatal errors (no host
// memory) leave their text here, printed once by the command.
static char g_fatal[640];

static void *host_alloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) snprintf(g_fatal, sizeof g_fatal, "error: out of host memory (%zu bytes)", bytes);
  return p;
}


#include "scan_steps.cuh" /* the steps, their data and references */

/* ------------------------------------------------------------------------------------ */
/* Session, options, rows                                                                */
/* ------------------------------------------------------------------------------------ */

typedef LadderSession scan_session;  // lives for the whole command

struct scan_options {
  size_t n;
  bool n_given;
  int reps;
  int warmup;
  bool check;
  bool csv;
};

enum row_status { ROW_REF, ROW_PASS, ROW_FAIL, ROW_SKIP, ROW_UNSUPPORTED };

static const char *status_text(row_status s) {
  switch (s) {
    case ROW_REF: return "ref";
    case ROW_PASS: return "PASS";
    case ROW_FAIL: return "FAIL";
    case ROW_SKIP: return "SKIP";
    case ROW_UNSUPPORTED: return "unsupported";
  }
  return "?";
}

struct scan_row {
  const char *id;
  const char *name;
  scan_op op;
  scan_kind kind;
  row_status status;
  bool full;      // covers all n elements, so its time compares with steps 6/7, 9/10, 12/13
  double bytes;   // by the byte model, for GB/s
  double ms;      // median of the timed runs (CPU rows: one run); NAN when not timed
  char note[1024];
};

struct scan_rows {
  scan_row r[kMaxRows];
  size_t count;
  size_t kept;  // elements of the f32 input that pass the predicate
};

// Bytes by the model of DESIGN.md, for GB/s: a scan reads and writes n u32 (8n); a pack
// reads n floats and writes the kept ones (4n + 4*kept); a split reads and writes n (8n).
// The multi-kernel steps move more than that; the model counts what the operation must.
static double model_bytes(scan_op op, size_t elems, size_t kept) {
  switch (op) {
    case OP_SCAN: return 8.0 * (double)elems;
    case OP_PACK: return 4.0 * (double)elems + 4.0 * (double)kept;
    case OP_SPLIT: return 8.0 * (double)elems;
  }
  return 0.0;
}

/* ------------------------------------------------------------------------------------ */
/* Validation                                                                            */
/* ------------------------------------------------------------------------------------ */

constexpr uint32_t kPoison = 0xffffffffu;  // what every output holds before a run

// Puts the step's outputs and the intermediate arrays in a poisoned state, so that a step
// that skips writing something cannot pass on what an earlier run left behind.
static bool prepare(const scan_step *s, const scan_env *e) {
  if (s->op == OP_SCAN) {
    LADDER_CUDA_TRY(cudaMemsetAsync(e->scan_out, 0xff, e->n * sizeof(uint32_t), e->stream));
  } else {
    LADDER_CUDA_TRY(cudaMemsetAsync(e->packed, 0xff, e->n * sizeof(float), e->stream));
    LADDER_CUDA_TRY(cudaMemsetAsync(e->count, 0xff, sizeof(uint64_t), e->stream));
    LADDER_CUDA_TRY(cudaMemsetAsync(e->flags, 0xff, e->n * sizeof(uint32_t), e->stream));
    LADDER_CUDA_TRY(cudaMemsetAsync(e->flag_offsets, 0xff, e->n * sizeof(uint32_t), e->stream));
  }
  LADDER_CUDA_TRY(cudaMemsetAsync(e->level_sums, 0xff, e->level_sums_len * sizeof(uint32_t), e->stream));
  return true;
}

// Elements a step computes: all n, except step 3 (one block).
static size_t step_elems(const scan_step *s, size_t n) {
  return s->one_block && n > kBlTile ? kBlTile : n;
}

// Reads the step's output back and compares it exactly (u32 values, f32 bit patterns,
// so NaN and -0.0 must come out as they went in). Sets *pass to false and, the first time,
// the note to the first mismatch.
static bool validate(const scan_step *s, const scan_env *e, scan_host *h, bool *pass, char *note,
                     size_t note_cap) {
  const size_t n = e->n;
  LADDER_CUDA_TRY(cudaStreamSynchronize(e->stream));
  char msg[256] = "";
  if (s->op == OP_SCAN) {
    LADDER_CUDA_TRY(cudaMemcpy(h->scan_got, e->scan_out, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    const size_t m = step_elems(s, n);
    for (size_t i = 0; i < n && !msg[0]; ++i) {
      const uint32_t want = i < m ? h->scan_ref[i] : kPoison;  // past m: untouched
      if (h->scan_got[i] != want)
        snprintf(msg, sizeof msg, "out[%zu] = %" PRIu32 ", want %" PRIu32 "%s", i, h->scan_got[i],
                 want, i < m ? "" : " (not to be written)");
    }
  } else {
    uint64_t count = 0;
    LADDER_CUDA_TRY(cudaMemcpy(&count, e->count, sizeof count, cudaMemcpyDeviceToHost));
    LADDER_CUDA_TRY(cudaMemcpy(h->got, e->packed, n * sizeof(float), cudaMemcpyDeviceToHost));
    const size_t kept = h->kept;
    if (count != (uint64_t)kept) {
      snprintf(msg, sizeof msg, "count = %" PRIu64 ", want %zu", count, kept);
    } else {
      // Pack: the kept elements, and (for our kernels) nothing written after them.
      // Split: the kept elements, then the rejected ones, in order or (CUB) reversed.
      const bool split = s->op == OP_SPLIT;
      const size_t end = split || s->kind == KIND_KERNEL ? n : kept;
      for (size_t i = 0; i < end && !msg[0]; ++i) {
        uint32_t want = kPoison;
        if (i < kept)
          want = bits_of_f32(h->split_ref[i]);
        else if (split)
          want = bits_of_f32(h->split_ref[s->rest_reversed ? n - 1 - (i - kept) : i]);
        const uint32_t got = bits_of_f32(h->got[i]);
        if (got != want)
          snprintf(msg, sizeof msg, "out[%zu] = 0x%08" PRIx32 ", want 0x%08" PRIx32 "%s", i, got,
                   want, want == kPoison && i >= kept ? " (not to be written)" : "");
      }
    }
  }
  if (msg[0]) {
    if (*pass) snprintf(note, note_cap, "%s", msg);
    *pass = false;
  }
  return true;
}

static int cmp_float(const void *a, const void *b) {
  const float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

// One run of a step: poison the outputs, then (timed) flush L2 and time the run with
// events. *ms is written only for a timed run that the step completed.
static bool one_run(scan_session *ss, const scan_step *s, const scan_env *e, bool timed, int k,
                    scan_outcome *out, float *ms) {
  if (!prepare(s, e)) return false;
  if (timed) {
    // Evict the inputs from L2 (50-60 MB on an H100/H200) so that every step reads
    // them from DRAM, as the first scan of freshly produced data would.
    if (ss->l2_flush)
      LADDER_CUDA_TRY(cudaMemsetAsync(ss->l2_flush, k & 0xff, ss->l2_flush_bytes, e->stream));
    LADDER_CUDA_TRY(cudaEventRecord(ss->start, e->stream));
  }
  if (!s->run(e, out)) return false;
  if (timed && !out->unsupported && !out->failed) {
    LADDER_CUDA_TRY(cudaEventRecord(ss->stop, e->stream));
    LADDER_CUDA_TRY(cudaEventSynchronize(ss->stop));
    LADDER_CUDA_TRY(cudaEventElapsedTime(ms, ss->start, ss->stop));
  }
  return true;
}

// One step on one configuration: a validation run, then either a second checked run
// (--check: catches state a first run depends on) or warm-up and timed runs (the last
// timed run is checked too). Returns false on a CUDA failure.
static bool run_step(scan_session *ss, const scan_options *o, const scan_step *s,
                     const scan_env *e, scan_host *h, bool timing, scan_row *r) {
  scan_outcome out;
  memset(&out, 0, sizeof out);
  const int runs = timing ? 1 + o->warmup + o->reps : 2;
  float *times = nullptr;
  if (timing && !(times = (float *)host_alloc((size_t)o->reps * sizeof(float)))) return false;
  bool ok = true, pass = true;
  for (int k = 0; ok && k < runs; ++k) {
    const int timed = timing ? k - 1 - o->warmup : -1;  // index among the timed runs
    float ms = 0.0f;
    ok = one_run(ss, s, e, timed >= 0, k, &out, &ms);
    if (!ok || out.unsupported || out.failed) break;
    if (timed >= 0) times[timed] = ms;
    // Check the first run, both runs of --check, and the last timed run.
    if (k == 0 || !timing || k == runs - 1) ok = validate(s, e, h, &pass, r->note, sizeof r->note);
  }
  if (ok && (out.unsupported || out.failed)) {
    // The call may have queued work before it failed; a device error surfaces here.
    ok = LADDER_CUDA_OK(cudaStreamSynchronize(e->stream));
    r->status = out.unsupported ? ROW_UNSUPPORTED : ROW_FAIL;
    snprintf(r->note, sizeof r->note, "%s", out.note);
  } else if (ok) {
    r->status = pass ? ROW_PASS : ROW_FAIL;
    if (timing) {
      const size_t m = (size_t)o->reps;
      qsort(times, m, sizeof(float), cmp_float);
      r->ms = m % 2 ? times[m / 2] : 0.5 * ((double)times[m / 2 - 1] + times[m / 2]);
    }
  }
  free(times);
  return ok;
}

/* ------------------------------------------------------------------------------------ */
/* Running one configuration                                                             */
/* ------------------------------------------------------------------------------------ */

constexpr unsigned OPS_SCAN = 1u, OPS_PACK_SPLIT = 2u;

static bool op_selected(scan_op op, unsigned ops) {
  return op == OP_SCAN ? (ops & OPS_SCAN) != 0 : (ops & OPS_PACK_SPLIT) != 0;
}

static void free_host(scan_host *h) {
  ladder_host_free({h->scan_in, h->scan_ref, h->scan_got, h->x, h->split_ref, h->got});
  memset(h, 0, sizeof *h);
}

static bool make_host(scan_host *h, size_t n, scan_data d, unsigned ops, bool pack_ok) {
  memset(h, 0, sizeof *h);
  if (ops & OPS_SCAN) {
    h->scan_in = (uint32_t *)host_alloc(n * sizeof(uint32_t));
    h->scan_ref = (uint32_t *)host_alloc(n * sizeof(uint32_t));
    h->scan_got = (uint32_t *)host_alloc(n * sizeof(uint32_t));
    if (!h->scan_in || !h->scan_ref || !h->scan_got) return false;
    fill_u32(h->scan_in, n);
    const double t0 = cli_now_ms();
    cpu_exclusive_scan(h->scan_in, h->scan_ref, n);
    h->cpu_ms[OP_SCAN] = cli_now_ms() - t0;
  }
  if ((ops & OPS_PACK_SPLIT) && pack_ok) {
    h->x = (float *)host_alloc(n * sizeof(float));
    h->split_ref = (float *)host_alloc(n * sizeof(float));
    h->got = (float *)host_alloc(n * sizeof(float));
    if (!h->x || !h->split_ref || !h->got) return false;
    fill_f32(h->x, n, d);
    // Timed separately: pack alone, then the whole split (pack + rejected part).
    const double t0 = cli_now_ms();
    h->kept = cpu_pack(h->x, n, h->split_ref);
    const double t1 = cli_now_ms();
    cpu_split(h->x, n, h->split_ref);
    h->cpu_ms[OP_PACK] = t1 - t0;
    h->cpu_ms[OP_SPLIT] = cli_now_ms() - t1;
  }
  return true;
}

struct scan_device {
  uint32_t *scan_in, *scan_out, *level_sums, *flags, *flag_offsets;
  float *x, *packed;
  uint64_t *count;
  void *cub_temp;
};

static void free_device(scan_device *d) {
  ladder_cuda_free({d->scan_in, d->scan_out, d->level_sums, d->flags, d->flag_offsets, d->x,
                    d->packed, d->count, d->cub_temp});
  memset(d, 0, sizeof *d);
}

// At least 16 bytes, so that n = 0 still gets distinct valid pointers.
template <typename T>
static bool device_alloc(T **p, size_t bytes) {
  LADDER_CUDA_TRY(cudaMalloc((void **)p, bytes < 16 ? 16 : bytes));
  return true;
}

// Pageable host -> device copy, finished before anything else on the stream runs. (A
// plain cudaMemcpy from pageable memory may return before its DMA lands, and work on a
// non-blocking stream is not ordered after it.)
static bool upload(void *dst, const void *src, size_t bytes, cudaStream_t stream) {
  LADDER_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
  LADDER_CUDA_TRY(cudaStreamSynchronize(stream));
  return true;
}

static bool make_device(scan_device *d, scan_env *e, const scan_host *h, size_t n, unsigned ops,
                        bool pack_ok, cudaStream_t stream) {
  memset(d, 0, sizeof *d);
  e->n = n;
  e->stream = stream;
  e->level_sums_len = level_sums_needed(n, kHsTile);  // the smallest tile needs the most
  if (!device_alloc(&d->level_sums, e->level_sums_len * sizeof(uint32_t))) return false;
  e->level_sums = d->level_sums;
  size_t scan_bytes = 0, select_bytes = 0, partition_bytes = 0;
  if (ops & OPS_SCAN) {
    if (!device_alloc(&d->scan_in, n * sizeof(uint32_t)) ||
        !device_alloc(&d->scan_out, n * sizeof(uint32_t)) ||
        !upload(d->scan_in, h->scan_in, n * sizeof(uint32_t), stream))
      return false;
    e->scan_in = d->scan_in;
    e->scan_out = d->scan_out;
    LADDER_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, e->scan_in, e->scan_out,
                                           (int64_t)n, stream));
  }
  if ((ops & OPS_PACK_SPLIT) && pack_ok) {
    if (!device_alloc(&d->x, n * sizeof(float)) || !device_alloc(&d->packed, n * sizeof(float)) ||
        !device_alloc(&d->flags, n * sizeof(uint32_t)) ||
        !device_alloc(&d->flag_offsets, n * sizeof(uint32_t)) ||
        !device_alloc(&d->count, sizeof(uint64_t)) ||
        !upload(d->x, h->x, n * sizeof(float), stream))
      return false;
    e->x = d->x;
    e->packed = d->packed;
    e->flags = d->flags;
    e->flag_offsets = d->flag_offsets;
    e->count = d->count;
    LADDER_CUDA_TRY(cub::DeviceSelect::If(nullptr, select_bytes, e->x, e->packed, e->count, (int64_t)n,
                                   keep_f32_functor(), stream));
    LADDER_CUDA_TRY(cub::DevicePartition::If(nullptr, partition_bytes, e->x, e->packed, e->count,
                                      (int64_t)n, keep_f32_functor(), stream));
  }
  // CUB's temporary storage: sized and allocated here, outside every timed region.
  size_t cub_bytes = scan_bytes > select_bytes ? scan_bytes : select_bytes;
  if (partition_bytes > cub_bytes) cub_bytes = partition_bytes;
  if (!device_alloc(&d->cub_temp, cub_bytes)) return false;
  e->cub_temp = d->cub_temp;
  e->cub_temp_bytes = cub_bytes;
  return true;
}

static scan_row *add_row(scan_rows *rows, const char *id, const char *name, scan_op op,
                         scan_kind kind) {
  scan_row *r = &rows->r[rows->count++];
  *r = scan_row{id, name, op, kind, ROW_SKIP, /*full=*/true, /*bytes=*/0.0, /*ms=*/NAN, ""};
  return r;
}

// Runs every selected step on n elements of data set d. Fills `rows` (the three CPU rows
// first, then one per step). Returns false on a CUDA failure or when host memory runs out.
static bool run_config(scan_session *ss, const scan_options *o, size_t n, scan_data d,
                       unsigned ops, bool timing, scan_rows *rows) {
  // Flag offsets are u32 and count up to n: pack and split need n < 2^32.
  const bool pack_ok = n < ((size_t)1 << 32);
  rows->count = 0;
  scan_host h;
  scan_device dev;
  scan_env e;
  memset(&e, 0, sizeof e);
  memset(&dev, 0, sizeof dev);
  bool ok = make_host(&h, n, d, ops, pack_ok) &&
            make_device(&dev, &e, &h, n, ops, pack_ok, ss->stream);
  e.ctx = ss->ctx;
  rows->kept = h.kept;

  static const char *const kCpuNames[3] = {"cpu serial exclusive scan", "cpu serial pack",
                                           "cpu serial split (stable)"};
  static const char *const kCpuIds[3] = {"1", "1p", "1s"};
  for (int op = OP_SCAN; ok && op <= OP_SPLIT; ++op) {
    if (!op_selected((scan_op)op, ops)) continue;
    scan_row *r = add_row(rows, kCpuIds[op], kCpuNames[op], (scan_op)op, KIND_CPU);
    r->bytes = model_bytes((scan_op)op, n, h.kept);
    if (op != OP_SCAN && !pack_ok) {
      snprintf(r->note, sizeof r->note, "u32 flag offsets: pack and split need n < 2^32");
      continue;
    }
    r->status = ROW_REF;
    r->ms = h.cpu_ms[op];
    snprintf(r->note, sizeof r->note, "host, one run");
  }

  for (size_t i = 0; ok && i < kNumSteps; ++i) {
    const scan_step *s = &kSteps[i];
    if (!op_selected(s->op, ops)) continue;
    scan_row *r = add_row(rows, s->id, s->name, s->op, s->kind);
    r->full = !s->one_block || n <= kBlTile;
    r->bytes = model_bytes(s->op, step_elems(s, n), h.kept);
    if (s->op != OP_SCAN && !pack_ok) {
      snprintf(r->note, sizeof r->note, "u32 flag offsets: pack and split need n < 2^32");
      continue;
    }
    if (s->kind == KIND_PRODUCTION && !ss->ctx) {
      r->status = ss->ctx_fail[0] ? ROW_FAIL : ROW_SKIP;
      snprintf(r->note, sizeof r->note, "%s", ss->ctx_fail[0] ? ss->ctx_fail : ss->ctx_skip);
      continue;
    }
    ok = run_step(ss, o, s, &e, &h, timing, r);
    if (ok && s->one_block && n > kBlTile && !r->note[0])
      snprintf(r->note, sizeof r->note, "first %u elements only: one block", kBlTile);
  }
  free_device(&dev);
  free_host(&h);
  return ok;
}

/* ------------------------------------------------------------------------------------ */
/* Output                                                                                */
/* ------------------------------------------------------------------------------------ */

static const scan_row *find_row(const scan_rows *rows, scan_op op, scan_kind kind) {
  for (size_t i = 0; i < rows->count; ++i)
    if (rows->r[i].op == op && rows->r[i].kind == kind) return &rows->r[i];
  return nullptr;
}

// time / time of the comparison row of the same operation, when both cover all n.
static double ratio(const scan_row *r, const scan_row *peer) {
  if (!peer || !r->full || !peer->full) return NAN;
  return r->ms / peer->ms;
}

static void print_timing(const scan_rows *rows, const scan_options *o, const scan_session *ss) {
  const size_t n = o->n;
  // With --csv the context goes to stderr, so stdout is pure CSV.
  FILE *info = o->csv ? stderr : stdout;
  fprintf(info, "parprim ladder scan: n = %zu, median of %d runs after %d warm-up\n", n, o->reps,
          o->warmup);
  fprintf(info, "device: %s (%d SMs, L2 %.0f MiB, flushed before every timed run)\n",
          ss->prop.name, ss->prop.multiProcessorCount, ss->prop.l2CacheSize / 1048576.0);
  fprintf(info,
          "scan:  exclusive SUM of random u32 (wraps mod 2^32), checked exactly; GB/s counts 8n "
          "bytes;\n       step 3 scans the first %u elements only (one block)\n",
          kBlTile);
  if (n < ((size_t)1 << 32))
    fprintf(info,
            "pack:  f32 kept when x > 0 (NaN, +-0.0 rejected), kept = %zu of %zu, checked "
            "bitwise; GB/s counts 4n + 4*kept bytes\n",
            rows->kept, n);
  fprintf(info,
          "split: same predicate, stable: kept in order, then the rest in order (CUB: rest "
          "reversed, checked so); GB/s counts 8n\n");
  fprintf(info, "x prod / x cub = time / time of the production / CUB row of the same "
                "operation\n%s",
          o->csv ? "" : "\n");
  if (o->csv)
    printf("step,name,check,ms,gbps,x_prod,x_cub,note\n");
  else
    printf("%-4s %-40s %-11s %10s %9s %7s %7s\n", "step", "name", "check", "ms", "GB/s", "x prod",
           "x cub");
  for (size_t i = 0; i < rows->count; ++i) {
    const scan_row *r = &rows->r[i];
    const double gbs = isnan(r->ms) ? NAN : r->bytes / (r->ms * 1e6);
    const double xp = ratio(r, find_row(rows, r->op, KIND_PRODUCTION));
    const double xc = ratio(r, find_row(rows, r->op, KIND_CUB));
    if (o->csv) {
      printf("%s,%s,%s,%s,%s,%s,%s,%s\n", r->id, ladder_csv(r->name).s, status_text(r->status),
             ladder_num("%.5f", r->ms).s, ladder_num("%.1f", gbs).s, ladder_num("%.3f", xp).s, ladder_num("%.3f", xc).s,
             ladder_csv(r->note).s);
    } else {
      printf("%-4s %-40s %-11s %10s %9s %7s %7s%s%s\n", r->id, r->name, status_text(r->status),
             ladder_num("%.4f", r->ms).s, ladder_num("%.1f", gbs).s, ladder_num("%.2f", xp).s, ladder_num("%.2f", xc).s,
             r->note[0] ? "  " : "", r->note);
    }
  }
}

/* ------------------------------------------------------------------------------------ */
/* Command line                                                                          */
/* ------------------------------------------------------------------------------------ */

constexpr size_t kMaxN = (size_t)1 << 36;

static void usage(FILE *f) {
  fprintf(f,
          "usage: parprim ladder scan [--n N] [--reps R] [--check] [--csv] [--help]\n"
          "\n"
          "Runs the prefix-sum ladder: exclusive SUM of u32 from a serial CPU scan through\n"
          "Hillis-Steele, Blelloch in one block, Blelloch for any n and its bank-conflict-free\n"
          "form to the production pp_scan and CUB; then pack (x > 0 on f32) and stable split\n"
          "built as predicate -> scan -> scatter, against pp_select, pp_partition and CUB.\n"
          "Every step is validated exactly against the CPU and timed with CUDA events.\n"
          "\n"
          "  --n N      number of elements, 0 <= N <= 2^36 (default 16777216): " CLI_SIZE_FORMS "\n"
          "             Pack and split need N < 2^32 (u32 flag offsets).\n"
          "  --reps R   timed runs per step, the median is reported (default 25, R >= 20)\n"
          "  --check    no timing: validate every step (two runs each) over awkward sizes\n"
          "             (0 .. 2^22+1, or only --n N) and three f32 data sets; exit 0 unless\n"
          "             a step fails (a production call answering unsupported is no failure)\n"
          "  --csv      comma-separated output\n"
          "  --help     this text\n"
          "\n"
          "exit status: 0 all passed, 1 a step failed, 2 bad usage, 77 no CUDA device\n");
}

static LadderParse parse_args(int argc, char **argv, scan_options *o) {
  for (int i = ladder_first_arg(argc, argv); i < argc; ++i) {
    const char *a = argv[i] ? argv[i] : "";
    const char *eq = nullptr;  // --opt=value or --opt value
    const size_t len = ladder_opt_len(a, &eq);
    const char *val = eq ? eq + 1 : nullptr;
    const bool takes_value = ladder_is_opt(a, len, "--n") || ladder_is_opt(a, len, "--reps");
    if (takes_value && !val && i + 1 < argc && argv[i + 1]) val = argv[++i];
    if (ladder_is_opt(a, len, "--help") || ladder_is_opt(a, len, "-h")) {
      return LADDER_PARSE_HELP;
    } else if (ladder_is_opt(a, len, "--check") || ladder_is_opt(a, len, "--csv")) {
      if (!ladder_flag_has_no_value(a, len, eq)) return LADDER_PARSE_BAD;
      if (ladder_is_opt(a, len, "--check"))
        o->check = true;
      else
        o->csv = true;
    } else if (ladder_is_opt(a, len, "--n")) {
      size_t n = 0;
      if (!val || cli_parse_size(val, &n) != 0 || n > kMaxN) {
        fprintf(stderr, "--n needs a number in [0, 2^36] (got '%s')\n", val ? val : "");
        return LADDER_PARSE_BAD;
      }
      o->n = n;
      o->n_given = true;
    } else if (ladder_is_opt(a, len, "--reps")) {
      size_t r = 0;
      if (!ladder_parse_size("--reps", val, 20, 100000, &r)) return LADDER_PARSE_BAD;
      o->reps = (int)r;
    } else {
      fprintf(stderr, "unknown argument '%s'\n", a);
      return LADDER_PARSE_BAD;
    }
  }
  return LADDER_PARSE_OK;
}

static bool run_timing(scan_session *ss, const scan_options *o, int *status) {
  if (!ladder_alloc_l2_flush(ss)) return false;
  // Rows are large (notes); keep them off the stack.
  scan_rows *rows = (scan_rows *)host_alloc(sizeof(scan_rows));
  if (!rows) return false;
  bool ok = run_config(ss, o, o->n, DATA_MIXED, OPS_SCAN | OPS_PACK_SPLIT, true, rows);
  if (ok) {
    print_timing(rows, o, ss);
    *status = 0;
    for (size_t i = 0; i < rows->count; ++i)
      if (rows->r[i].status == ROW_FAIL) *status = 1;
  }
  free(rows);
  return ok;
}

static bool run_check(scan_session *ss, const scan_options *o, int *status) {
  // Sizes around both tile lengths (1024, 2048), a warp, one block of the map kernels,
  // the brief's odd 1000003, and 2048^2 + 1, which takes three levels of block sums.
  static const size_t kSizes[] = {0,    1,    2,    31,    32,    33,      255,
                                  1023, 1024, 1025, 2047,  2048,  2049,    4097,
                                  65537, 1000003, ((size_t)1 << 20) + 7, ((size_t)1 << 22) + 1};
  static const scan_data kData[] = {DATA_MIXED, DATA_ALL_KEPT, DATA_NONE_KEPT};
  const size_t *sizes = o->n_given ? &o->n : kSizes;
  const size_t n_sizes = o->n_given ? 1 : sizeof kSizes / sizeof kSizes[0];
  scan_rows *rows = (scan_rows *)host_alloc(sizeof(scan_rows));
  if (!rows) return false;

  if (o->csv)
    printf("n,data,step,name,check,note\n");
  else
    printf("parprim ladder scan --check on %s: %zu sizes; scan steps on random u32, pack and "
           "split on 3 f32 data sets; two runs per step\n",
           ss->prop.name, n_sizes);
  int failures = 0, configs = 0;
  bool unsupported[kMaxRows] = {};  // by step index
  bool ok = true;
  for (size_t si = 0; ok && si < n_sizes; ++si) {
    for (size_t di = 0; ok && di < sizeof kData / sizeof kData[0]; ++di) {
      const size_t n = sizes[si];
      const scan_data d = kData[di];
      // The scan steps do not depend on the f32 data set: once per size is enough.
      const unsigned ops = d == DATA_MIXED ? OPS_SCAN | OPS_PACK_SPLIT : OPS_PACK_SPLIT;
      ok = run_config(ss, o, n, d, ops, false, rows);
      if (!ok) break;
      ++configs;
      char failed[kMaxRows * (sizeof rows->r[0].note + 16)];
      size_t used = 0;
      failed[0] = '\0';
      for (size_t i = 0; i < rows->count; ++i) {
        const scan_row *r = &rows->r[i];
        if (r->status == ROW_FAIL) {
          ++failures;
          // Fits: each entry is shorter than a note plus 16.
          const int w = snprintf(failed + used, sizeof failed - used, " %s%s%s%s", r->id,
                                 r->note[0] ? " (" : "", r->note, r->note[0] ? ")" : "");
          if (w > 0) used = min_size(used + (size_t)w, sizeof failed - 1);
        }
        if (r->status == ROW_UNSUPPORTED)
          for (size_t k = 0; k < kNumSteps; ++k)
            if (strcmp(kSteps[k].id, r->id) == 0) unsupported[k] = true;
        if (o->csv && r->kind != KIND_CPU)
          printf("%zu,%s,%s,%s,%s,%s\n", n, data_name(d), r->id, ladder_csv(r->name).s,
                 status_text(r->status), ladder_csv(r->note).s);
      }
      if (!o->csv && failed[0])
        printf("FAIL n=%zu data=%s: steps%s\n", n, data_name(d), failed);
    }
  }
  free(rows);
  if (!ok) return false;
  if (!o->csv) {
    printf("%d configurations, %d step failures\n", configs, failures);
    for (size_t k = 0; k < kNumSteps; ++k)
      if (unsupported[k])
        printf("step %s (%s): unsupported by the library yet, not counted as a failure\n",
               kSteps[k].id, kSteps[k].name);
    if (!ss->ctx && !ss->ctx_fail[0]) printf("steps 6, 9, 12 skipped: %s\n", ss->ctx_skip);
    printf("%s\n", failures ? "FAIL" : "PASS");
  }
  *status = failures ? 1 : 0;
  return true;
}

extern "C" int pp_ladder_scan_main(int argc, char **argv) {
  scan_options o;
  memset(&o, 0, sizeof o);
  o.n = (size_t)1 << 24;
  o.reps = 25;
  o.warmup = 3;
  const int early = ladder_early_exit(parse_args(argc, argv, &o), usage);
  if (early >= 0) return early;

  // The session is large (device properties, messages); keep it off the stack.
  scan_session *ss = (scan_session *)calloc(1, sizeof(scan_session));
  if (!ss) {
    fprintf(stderr, "error: out of host memory\n");
    return 1;
  }
  g_fatal[0] = '\0';
  int status = 1;
  bool ok = ladder_open_device(ss);
  if (ok) ladder_open_context(ss);
  ok = ok &&
                  (o.check ? run_check(ss, &o, &status) : run_timing(ss, &o, &status));
  if (!ok) {
    if (g_fatal[0]) fprintf(stderr, "%s\n", g_fatal);
    status = 1;
  }
  ladder_session_close(ss);
  free(ss);
  return status;
}

#ifdef PP_LADDER_STANDALONE
int main(int argc, char **argv) { return pp_ladder_scan_main(argc, argv); }
#endif
