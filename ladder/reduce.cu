/*
 * ladder/reduce.cu — the parallel-reduction ladder: f32 SUM from a CPU reference through
 * the classic GPU optimisation steps to the production kernel and CUB, plus the f32 MAX
 * variant of the grid-stride/atomic step.
 *
 * The steps follow the reduction chapter of Professional CUDA C Programming (Cheng,
 * Grossman and McKercher, ch. 3: neighboured pairs, less divergence, interleaved pairs,
 * unrolling, unrolled last warp, complete unrolling; "Cheng 3" below) and the max/min
 * exercise of the 2022 CUDA summer camp (grid-stride loop, shared-memory tree, one atomic
 * per block; "camp" below). The code is our own: any n (tails are handled in every
 * kernel), any power-of-two block size in [64, 1024], 64-bit indices, and warp-level
 * code that is correct under Volta's independent thread scheduling.
 *
 *   step 1   CPU reference: recursive pairwise sum in double
 *   step 2   neighboured pairs, divergent           (Cheng 3)
 *   step 3   neighboured pairs, less divergence     (Cheng 3)
 *   step 4   interleaved pairs                      (Cheng 3)
 *   step 5-7 unroll x2 / x4 / x8 data blocks        (Cheng 3)
 *   step 8   unrolled last warp                     (Cheng 3, made Volta-safe)
 *   step 9   complete unrolling, template on block  (Cheng 3)
 *   step 10  grid-stride + shared tree + atomicAdd  (camp); 10m: atomicMax for MAX
 *   step 11  production: pp_reduce on a CUDA context
 *   step 12  cub::DeviceReduce::Sum (12m: ::Max)
 *
 * Steps 2-9 reduce in place in global memory, as the book does, so each run works on a
 * fresh copy of the input (restored outside the timed region). They leave one partial
 * per block; the book copies those back and adds them on the host. Here a second small
 * kernel (one block) adds them on the GPU and its time is included in the step's time.
 *
 * Run through the CLI:   parprim ladder reduce [--n N] [--block B] [--check] [--csv]
 * or standalone:         nvcc -std=c++17 -arch=sm_90 -O3 -DPP_LADDER_STANDALONE
 *                          -I include -I cli ladder/reduce.cu cli/common.c -o ladder_reduce
 *                          -L<build> -lparprim
 */
#include "common.cuh"
#include "ladder.h"
#include "parprim.h"

#include <cuda_runtime.h>
#include <cub/device/device_reduce.cuh>

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace {

/* ------------------------------------------------------------------------------------ */
/* Error checking                                                                        */
/* ------------------------------------------------------------------------------------ */

// A step that cannot produce a result (pp_reduce returned an error): that step fails,
// the others still run. The text holds a status and pp_last_error (< 512 bytes).
struct StepFailure {
  char what[1024];
};

[[noreturn]] void step_fail(const char *format, ...) {
  StepFailure f;
  va_list ap;
  va_start(ap, format);
  vsnprintf(f.what, sizeof f.what, format, ap);
  va_end(ap);
  throw f;
}

// Host memory ran out; the command ends with "error: out of host memory".
struct OutOfHostMemory {};

// A zeroed host array that frees itself when a failure unwinds past it.
struct HostBuffer {
  void *p = nullptr;
  explicit HostBuffer(size_t bytes) {
    p = calloc(bytes ? bytes : 1, 1);
    if (!p) throw OutOfHostMemory{};
  }
  HostBuffer(const HostBuffer &) = delete;
  HostBuffer &operator=(const HostBuffer &) = delete;
  ~HostBuffer() { free(p); }
  template <class T>
  T *as() const {
    return static_cast<T *>(p);
  }
};

// std::max's and std::min's results, NaN cases included: the first when neither is less.
double max_d(double a, double b) { return a < b ? b : a; }

/* ------------------------------------------------------------------------------------ */
/* Step 1: CPU reference                                                                */
/* ------------------------------------------------------------------------------------ */

// Recursive pairwise summation in double. The book halves the array in place
// (data[i] += data[i + stride]); splitting the index range instead gives the same tree
// shape without a writable copy of the input. In double, its error (about
// log2(n) * 2^-53 * sum|x|) is far below anything a float GPU sum can reach, so it
// serves as the exact answer for checking.
double cpu_pairwise_sum(const float *x, size_t n) {
  if (n <= 16) {
    double s = 0.0;
    for (size_t i = 0; i < n; ++i) s += (double)x[i];
    return s;
  }
  const size_t half = n / 2;
  return cpu_pairwise_sum(x, half) + cpu_pairwise_sum(x + half, n - half);
}

float cpu_max(const float *x, size_t n) {
  float m = -INFINITY;
  for (size_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

#include "reduce_steps.cuh" /* steps 2-10: the kernels */

/* ------------------------------------------------------------------------------------ */
/* Host side: the steps as launchable units                                             */
/* ------------------------------------------------------------------------------------ */

enum class Op { Sum, Max };

// Everything one configuration (n, block, data set) needs on the device.
struct Env {
  size_t n = 0;
  unsigned block = 256;
  cudaStream_t stream = nullptr;
  const float *in = nullptr;  // the input, never written
  float *scratch = nullptr;   // copy of the input for the in-place steps 2-9
  float *partials = nullptr;  // one float per block for steps 2-9
  float *out = nullptr;       // the step's result (a float, or the key for step 10m)
  void *cub_temp = nullptr;
  size_t cub_temp_bytes = 0;
  unsigned atomic_grid_sum = 1, atomic_grid_max = 1;  // step 10 grids
  pp_context *ctx = nullptr;
};

unsigned blocks_for(size_t n, size_t per_block) {
  const size_t g = (n + per_block - 1) / per_block;
  if (g > 0x7fffffffu) step_fail("n too large for a one-dimensional grid");
  return (unsigned)g;
}

void finish(const Env &e, unsigned grid) {
  finish_partials<<<1, kFinishThreads, 0, e.stream>>>(e.partials, grid, e.out);
  LADDER_CUDA_CHECK(cudaGetLastError());
}

// Steps 2-8: the step's kernel writes one partial per block of per_block elements (B, or
// K*B after its fold), then finish adds the partials.
using PartialsKernel = void (*)(float *g, float *partials, size_t n);
void run_partials(const Env &e, PartialsKernel kernel, size_t per_block) {
  const unsigned grid = blocks_for(e.n, per_block);
  kernel<<<grid, e.block, 0, e.stream>>>(e.scratch, e.partials, e.n);
  LADDER_CUDA_CHECK(cudaGetLastError());
  finish(e, grid);
}

void run_step2(const Env &e) { run_partials(e, reduce_neighboured_divergent, e.block); }
void run_step3(const Env &e) { run_partials(e, reduce_neighboured_less_divergent, e.block); }
// Step 4 is K = 1: no fold.
template <unsigned K>
void run_unrolled(const Env &e) { run_partials(e, reduce_unrolled<K>, (size_t)e.block * K); }
void run_step8(const Env &e) { run_partials(e, reduce_unrolled_last_warp, (size_t)e.block * 8); }

void run_step9(const Env &e) {
  const unsigned grid = blocks_for(e.n, (size_t)e.block * 8);
  switch (e.block) {
    case 64: reduce_complete_unroll<64><<<grid, 64, 0, e.stream>>>(e.scratch, e.partials, e.n); break;
    case 128: reduce_complete_unroll<128><<<grid, 128, 0, e.stream>>>(e.scratch, e.partials, e.n); break;
    case 256: reduce_complete_unroll<256><<<grid, 256, 0, e.stream>>>(e.scratch, e.partials, e.n); break;
    case 512: reduce_complete_unroll<512><<<grid, 512, 0, e.stream>>>(e.scratch, e.partials, e.n); break;
    case 1024: reduce_complete_unroll<1024><<<grid, 1024, 0, e.stream>>>(e.scratch, e.partials, e.n); break;
    default: step_fail("block size has no instantiation");
  }
  LADDER_CUDA_CHECK(cudaGetLastError());
  finish(e, grid);
}

void run_step10_sum(const Env &e) {
  LADDER_CUDA_CHECK(cudaMemsetAsync(e.out, 0, sizeof(float), e.stream));  // 0.0f: the atomics' start
  reduce_grid_stride_atomic_sum<<<e.atomic_grid_sum, e.block, e.block * sizeof(float), e.stream>>>(
      e.in, e.out, e.n);
  LADDER_CUDA_CHECK(cudaGetLastError());
}

void run_step10_max(const Env &e) {
  LADDER_CUDA_CHECK(cudaMemsetAsync(e.out, 0, sizeof(unsigned), e.stream));  // key 0 < key(-inf)
  reduce_grid_stride_atomic_max<<<e.atomic_grid_max, e.block, e.block * sizeof(float), e.stream>>>(
      e.in, reinterpret_cast<unsigned *>(e.out), e.n);
  LADDER_CUDA_CHECK(cudaGetLastError());
}

void run_production(const Env &e, pp_op op) {
  const pp_status st = pp_reduce(e.ctx, op, PP_F32, e.in, e.n, e.out);
  if (st != PP_OK) step_fail("pp_reduce: %s: %s", pp_status_string(st), pp_last_error(e.ctx));
}
void run_step11_sum(const Env &e) { run_production(e, PP_SUM); }
void run_step11_max(const Env &e) { run_production(e, PP_MAX); }

void run_step12_sum(const Env &e) {
  size_t bytes = e.cub_temp_bytes;
  LADDER_CUDA_CHECK(cub::DeviceReduce::Sum(e.cub_temp, bytes, e.in, e.out, (int64_t)e.n, e.stream));
}

void run_step12_max(const Env &e) {
  size_t bytes = e.cub_temp_bytes;
  LADDER_CUDA_CHECK(cub::DeviceReduce::Max(e.cub_temp, bytes, e.in, e.out, (int64_t)e.n, e.stream));
}

enum class Kind { Kernel, Production, Cub };

struct Step {
  const char *id;
  const char *name;
  Op op;
  Kind kind;
  bool in_place;    // works on e.scratch, which must hold the input before every run
  bool result_key;  // e.out holds an ordered key (step 10m), not a float
  void (*run)(const Env &);
};

const Step kSteps[] = {
    {"2", "neighboured pairs, divergent", Op::Sum, Kind::Kernel, true, false, run_step2},
    {"3", "neighboured pairs, less divergence", Op::Sum, Kind::Kernel, true, false, run_step3},
    {"4", "interleaved pairs", Op::Sum, Kind::Kernel, true, false, run_unrolled<1>},
    {"5", "unroll x2 + interleaved", Op::Sum, Kind::Kernel, true, false, run_unrolled<2>},
    {"6", "unroll x4 + interleaved", Op::Sum, Kind::Kernel, true, false, run_unrolled<4>},
    {"7", "unroll x8 + interleaved", Op::Sum, Kind::Kernel, true, false, run_unrolled<8>},
    {"8", "unroll x8 + unrolled last warp", Op::Sum, Kind::Kernel, true, false, run_step8},
    {"9", "unroll x8 + complete unroll <B>", Op::Sum, Kind::Kernel, true, false, run_step9},
    {"10", "grid-stride + smem tree + atomicAdd", Op::Sum, Kind::Kernel, false, false, run_step10_sum},
    {"11", "production pp_reduce(PP_SUM)", Op::Sum, Kind::Production, false, false, run_step11_sum},
    {"12", "cub::DeviceReduce::Sum", Op::Sum, Kind::Cub, false, false, run_step12_sum},
    {"10m", "grid-stride + smem tree + atomicMax", Op::Max, Kind::Kernel, false, true, run_step10_max},
    {"11m", "production pp_reduce(PP_MAX)", Op::Max, Kind::Production, false, false, run_step11_max},
    {"12m", "cub::DeviceReduce::Max", Op::Max, Kind::Cub, false, false, run_step12_max},
};

/* ------------------------------------------------------------------------------------ */
/* Data, validation                                                                      */
/* ------------------------------------------------------------------------------------ */

enum class Data { Uniform, Integers };

const char *data_name(Data d) { return d == Data::Uniform ? "uniform" : "integers"; }

uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Uniform: floats in [-1, 1) on a 2^-23 grid from a fixed seed, so every run of every
// build sees the same numbers. Integers (--check only): whole numbers in [-4, 4]; for
// n <= 2^22 every partial sum of any subset is an integer below 2^24 in magnitude, so it
// is exact in float whatever the order, and every step must match the reference exactly.
// That catches a dropped or doubled element that the tolerance might hide.
void fill(float *x, size_t n, Data d) {
  uint64_t state = 0x7061727072696dull;  // fixed seed
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = splitmix64(state);
    if (d == Data::Uniform)
      x[i] = (float)((int64_t)(r >> 40) - (1 << 23)) * (1.0f / (1 << 23));
    else
      x[i] = (float)((int)((r >> 32) % 9u) - 4);
  }
}

struct Reference {
  double sum = 0.0;
  double l2 = 0.0;  // sqrt(sum x^2)
  float max = 0.0f;
  double cpu_ms = 0.0;
};

Reference make_reference(const float *x, size_t n) {
  Reference r;
  const double t0 = cli_now_ms();
  r.sum = cpu_pairwise_sum(x, n);
  r.cpu_ms = cli_now_ms() - t0;
  double sq = 0.0;
  for (size_t i = 0; i < n; ++i) sq += (double)x[i] * (double)x[i];
  r.l2 = sqrt(sq);
  r.max = cpu_max(x, n);
  return r;
}

// SUM check. Rounding errors of a float sum grow with the size of the partial sums it
// forms. For zero-mean random data those grow like the L2 norm ||x||_2 (about 0.58*sqrt(n)
// here), not like sum|x| (n/2): the textbook worst-case bound eps*depth*sum|x| would be
// so loose at n = 2^24 that a dropped element would pass. So the error is measured
// relative to max(|sum|, ||x||_2), and allowed to grow with the depth of the summation:
//   PASS when |gpu - ref| <= 8 * FLT_EPSILON * max(1, ceil(log2 n)) * max(|ref|, ||x||_2)
// The Integers data set must match exactly.
double sum_tolerance(size_t n) {
  const double depth = max_d(1.0, ceil(log2((double)n)));
  return 8.0 * FLT_EPSILON * depth;
}

struct Verdict {
  bool pass = false;
  double rel_err = 0.0;
};

Verdict check_result(const Step &s, float got, const Reference &ref, size_t n, Data d) {
  Verdict v;
  if (s.op == Op::Max) {
    v.pass = (got == ref.max);  // max is exact in any order
    v.rel_err = isnan(got) ? INFINITY : fabs((double)got - (double)ref.max) /
                                            max_d(1e-30, fabs((double)ref.max));
    return v;
  }
  const double err = fabs((double)got - ref.sum);
  const double scale = max_d(fabs(ref.sum), ref.l2);
  v.rel_err = isnan(got) ? INFINITY : (scale > 0 ? err / scale : err);
  v.pass = isfinite(got) && (d == Data::Integers ? (double)got == ref.sum
                                                      : err <= sum_tolerance(n) * scale);
  return v;
}

/* ------------------------------------------------------------------------------------ */
/* Device resources                                                                      */
/* ------------------------------------------------------------------------------------ */

struct DeviceBuffer {
  void *p = nullptr;
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) {
    if (bytes) LADDER_CUDA_CHECK(cudaMalloc(&p, bytes));
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() {
    if (p) cudaFree(p);  // errors here cannot be reported usefully
  }
  template <class T>
  T *as() const {
    return static_cast<T *>(p);
  }
};

struct Session : LadderSession {  // lives for the whole command
  Session() : LadderSession{} {}
  ~Session() { ladder_session_close(this); }
};

/* ------------------------------------------------------------------------------------ */
/* Running one configuration                                                             */
/* ------------------------------------------------------------------------------------ */

struct Row {
  const char *id = "", *name = "";  // static strings (kSteps, literals)
  Op op = Op::Sum;
  Kind kind = Kind::Kernel;
  const char *status = "";  // PASS, FAIL, SKIP, ref
  char note[1024] = "";     // why it failed or was skipped
  double rel_err = NAN;
  double ms = NAN;          // median over the timed runs
};

// The CPU reference, then one row per step.
constexpr size_t kMaxRows = 1 + sizeof kSteps / sizeof kSteps[0];

struct Rows {
  Row r[kMaxRows];
  size_t count = 0;
};

bool status_is(const char *status, const char *want) { return strcmp(status, want) == 0; }

struct Options {
  size_t n = (size_t)1 << 24;
  bool n_given = false;
  unsigned block = 256;
  bool block_given = false;
  int reps = 25;
  int warmup = 3;
  bool check = false;
  bool csv = false;
};

// Puts e.out and e.partials in a poisoned state (NaN bits) and the scratch copy back to
// the input, so that a step that skips writing its result, or a partial, cannot pass on
// what an earlier run left behind.
void prepare(const Step &s, const Env &e) {
  if (s.in_place)
    LADDER_CUDA_CHECK(cudaMemcpyAsync(e.scratch, e.in, e.n * sizeof(float), cudaMemcpyDeviceToDevice,
                               e.stream));
  LADDER_CUDA_CHECK(cudaMemsetAsync(e.out, 0xff, sizeof(float), e.stream));
  if (s.kind == Kind::Kernel && s.in_place)
    LADDER_CUDA_CHECK(cudaMemsetAsync(e.partials, 0xff, (size_t)blocks_for(e.n, 64) * sizeof(float),
                               e.stream));
}

float read_result(const Step &s, const Env &e) {
  LADDER_CUDA_CHECK(cudaStreamSynchronize(e.stream));
  uint32_t bits = 0;
  LADDER_CUDA_CHECK(cudaMemcpy(&bits, e.out, sizeof bits, cudaMemcpyDeviceToHost));
  if (s.result_key) return ordered_key_to_float(bits);
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

// Adds one check's verdict to the step's: all must pass; the worst error is kept (NaN
// once any error is NaN).
void add_verdict(const Verdict &v, bool &pass, double &worst) {
  pass = pass && v.pass;
  worst = isnan(worst) || isnan(v.rel_err) ? NAN : max_d(worst, v.rel_err);
}

int compare_float(const void *a, const void *b) {
  const float x = *static_cast<const float *>(a), y = *static_cast<const float *>(b);
  return (x > y) - (x < y);
}

void run_config(Session &ss, const Options &o, size_t n, unsigned block, Data d, bool timing,
                Rows &rows) {
  HostBuffer host(n * sizeof(float));
  float *h = host.as<float>();
  fill(h, n, d);
  const Reference ref = make_reference(h, n);

  DeviceBuffer in(n * sizeof(float)), scratch(n * sizeof(float));
  DeviceBuffer partials((size_t)blocks_for(n, 64) * sizeof(float));  // most blocks: B = 64, K = 1
  DeviceBuffer out(sizeof(double));
  // On the ladder's stream, and waited for: a plain cudaMemcpy from pageable memory may
  // return before its DMA lands, and the non-blocking stream is not ordered after it.
  LADDER_CUDA_CHECK(cudaMemcpyAsync(in.p, h, n * sizeof(float), cudaMemcpyHostToDevice, ss.stream));
  LADDER_CUDA_CHECK(cudaStreamSynchronize(ss.stream));

  Env e;
  e.n = n;
  e.block = block;
  e.stream = ss.stream;
  e.in = in.as<const float>();
  e.scratch = scratch.as<float>();
  e.partials = partials.as<float>();
  e.out = out.as<float>();
  e.ctx = ss.ctx;

  // CUB's temporary storage: sized and allocated here, outside every timed region.
  size_t sum_bytes = 0, max_bytes = 0;
  LADDER_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, sum_bytes, e.in, e.out, (int64_t)n, ss.stream));
  LADDER_CUDA_CHECK(cub::DeviceReduce::Max(nullptr, max_bytes, e.in, e.out, (int64_t)n, ss.stream));
  e.cub_temp_bytes = sum_bytes < max_bytes ? max_bytes : sum_bytes;
  DeviceBuffer cub_temp(e.cub_temp_bytes);
  e.cub_temp = cub_temp.p;

  // Step 10: as many blocks as are resident at once, but no block without data.
  int per_sm_sum = 0, per_sm_max = 0;
  LADDER_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm_sum, reduce_grid_stride_atomic_sum, (int)block, block * sizeof(float)));
  LADDER_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm_max, reduce_grid_stride_atomic_max, (int)block, block * sizeof(float)));
  const size_t data_blocks = blocks_for(n, block);
  const size_t sms = (size_t)ss.prop.multiProcessorCount;
  e.atomic_grid_sum =
      (unsigned)min_size(data_blocks, (size_t)(per_sm_sum < 1 ? 1 : per_sm_sum) * sms);
  e.atomic_grid_max =
      (unsigned)min_size(data_blocks, (size_t)(per_sm_max < 1 ? 1 : per_sm_max) * sms);

  rows.count = 0;
  Row &cpu = rows.r[rows.count++];
  cpu = Row();
  cpu.id = "1";
  cpu.name = "cpu recursive pairwise (double)";
  cpu.status = "ref";
  cpu.ms = ref.cpu_ms;
  snprintf(cpu.note, sizeof cpu.note, "host, one run");

  for (const Step &s : kSteps) {
    Row &r = rows.r[rows.count++];
    r = Row();
    r.id = s.id;
    r.name = s.name;
    r.op = s.op;
    r.kind = s.kind;
    if (s.kind == Kind::Production && !ss.ctx) {
      r.status = ss.ctx_fail[0] ? "FAIL" : "SKIP";
      snprintf(r.note, sizeof r.note, "%s", ss.ctx_fail[0] ? ss.ctx_fail : ss.ctx_skip);
      continue;
    }
    try {
      // Validation run, then warm-up, then timed runs; the last timed run is checked too.
      bool pass = true;
      double worst = 0.0;
      prepare(s, e);
      s.run(e);
      add_verdict(check_result(s, read_result(s, e), ref, n, d), pass, worst);
      if (!timing) {  // --check: a second run catches state a first run depends on
        prepare(s, e);
        s.run(e);
        add_verdict(check_result(s, read_result(s, e), ref, n, d), pass, worst);
      } else {
        for (int w = 0; w < o.warmup; ++w) {
          prepare(s, e);
          s.run(e);
        }
        HostBuffer times_buf((size_t)o.reps * sizeof(float));
        float *times = times_buf.as<float>();
        for (int k = 0; k < o.reps; ++k) {
          prepare(s, e);
          // Evict the input from L2 (50-60 MB on an H100/H200) so that every step reads
          // it from DRAM, as the first reduction of freshly produced data would.
          if (ss.l2_flush)
            LADDER_CUDA_CHECK(cudaMemsetAsync(ss.l2_flush, k & 0xff, ss.l2_flush_bytes, ss.stream));
          LADDER_CUDA_CHECK(cudaEventRecord(ss.start, ss.stream));
          s.run(e);
          LADDER_CUDA_CHECK(cudaEventRecord(ss.stop, ss.stream));
          LADDER_CUDA_CHECK(cudaEventSynchronize(ss.stop));
          float ms = 0.0f;
          LADDER_CUDA_CHECK(cudaEventElapsedTime(&ms, ss.start, ss.stop));
          times[k] = ms;
        }
        add_verdict(check_result(s, read_result(s, e), ref, n, d), pass, worst);
        const size_t k = (size_t)o.reps;
        qsort(times, k, sizeof(float), compare_float);
        r.ms = k % 2 ? times[k / 2] : 0.5 * ((double)times[k / 2 - 1] + times[k / 2]);
      }
      r.status = pass ? "PASS" : "FAIL";
      r.rel_err = worst;
    } catch (const StepFailure &f) {
      LADDER_CUDA_CHECK(cudaStreamSynchronize(ss.stream));
      r.status = "FAIL";
      snprintf(r.note, sizeof r.note, "%s", f.what);
    }
  }
}

/* ------------------------------------------------------------------------------------ */
/* Output                                                                                */
/* ------------------------------------------------------------------------------------ */

const Row *find_row(const Rows &rows, Op op, Kind kind) {
  for (size_t i = 0; i < rows.count; ++i) {
    const Row &r = rows.r[i];
    if (r.op == op && r.kind == kind && !status_is(r.status, "ref")) return &r;
  }
  return nullptr;
}


void print_timing(const Rows &rows, const Options &o, const Session &ss) {
  const double bytes = 4.0 * (double)o.n;
  // With --csv the context goes to stderr, so stdout is pure CSV.
  FILE *info = o.csv ? stderr : stdout;
  fprintf(info,
          "parprim ladder reduce: f32, n = %zu (%.1f MiB), block = %u, median of %d runs after "
          "%d warm-up\n",
          o.n, bytes / (1 << 20), o.block, o.reps, o.warmup);
  fprintf(info, "device: %s (%d SMs, L2 %.0f MiB, flushed before every timed run)\n",
          ss.prop.name, ss.prop.multiProcessorCount, ss.prop.l2CacheSize / 1048576.0);
  fprintf(info,
          "check: PASS when |gpu - ref| <= %.3g * max(|ref|, ||x||_2)  "
          "(8 * FLT_EPSILON * ceil(log2 n)); MAX exact\n",
          sum_tolerance(o.n));
  fprintf(info, "steps 2-9 write one partial per block; a second 1-block kernel adds them, and "
                "its time is included\n");
  fprintf(info,
          "GB/s counts 4n bytes read; x prod / x cub = time / time of step 11 / 12 (same op)\n%s",
          o.csv ? "" : "\n");
  if (o.csv)
    printf("step,name,check,rel_err,ms,gbps,x_prod,x_cub,note\n");
  else
    printf("%-4s %-38s %-5s %9s %10s %9s %7s %7s\n", "step", "name", "check", "rel.err", "ms",
           "GB/s", "x prod", "x cub");
  for (size_t i = 0; i < rows.count; ++i) {
    const Row &r = rows.r[i];
    const Row *prod = find_row(rows, r.op, Kind::Production);
    const Row *cub = find_row(rows, r.op, Kind::Cub);
    const double gbs = isnan(r.ms) ? NAN : bytes / (r.ms * 1e6);
    const double xp = prod && !isnan(r.ms) ? r.ms / prod->ms : NAN;
    const double xc = cub && !isnan(r.ms) ? r.ms / cub->ms : NAN;
    if (o.csv) {
      printf("%s,%s,%s,%s,%s,%s,%s,%s,%s\n", r.id, ladder_csv(r.name).s, r.status,
             ladder_num("%.3e", r.rel_err).s, ladder_num("%.5f", r.ms).s, ladder_num("%.1f", gbs).s,
             ladder_num("%.3f", xp).s, ladder_num("%.3f", xc).s, ladder_csv(r.note).s);
    } else {
      printf("%-4s %-38s %-5s %9s %10s %9s %7s %7s%s%s\n", r.id, r.name, r.status,
             ladder_num("%.2e", r.rel_err).s, ladder_num("%.4f", r.ms).s, ladder_num("%.1f", gbs).s,
             ladder_num("%.2f", xp).s, ladder_num("%.2f", xc).s, r.note[0] ? "  " : "", r.note);
    }
  }
}

/* ------------------------------------------------------------------------------------ */
/* Command line                                                                          */
/* ------------------------------------------------------------------------------------ */

void usage(FILE *f) {
  fprintf(f,
          "usage: parprim ladder reduce [--n N] [--block B] [--reps R] [--check] [--csv] [--help]\n"
          "\n"
          "Runs the parallel-reduction ladder for f32 SUM (and the atomicMax step for f32 MAX):\n"
          "a CPU reference, the textbook GPU optimisation steps, the production pp_reduce and\n"
          "CUB. Every step is validated against the reference and timed with CUDA events.\n"
          "\n"
          "  --n N      number of elements, N >= 1 (default 16777216): " CLI_SIZE_FORMS "\n"
          "  --block B  threads per block for steps 2-10: a power of two in [64, 1024]\n"
          "             (default 256)\n"
          "  --reps R   timed runs per step, the median is reported (default 25, R >= 20)\n"
          "  --check    no timing: validate every step (two runs each) over awkward sizes\n"
          "             (1 .. 2^21+13, or only --n N) and two data sets, for every block size\n"
          "             (or only --block B); exit 0 only if all pass\n"
          "  --csv      comma-separated output\n"
          "  --help     this text\n"
          "\n"
          "exit status: 0 all passed, 1 a step failed, 2 bad usage, 77 no CUDA device\n");
}

LadderParse parse_args(int argc, char **argv, Options &o) {
  for (int i = ladder_first_arg(argc, argv); i < argc; ++i) {
    const char *a = argv[i] ? argv[i] : "";
    const char *eq = nullptr;
    const size_t len = ladder_opt_len(a, &eq);
    const char *v = "";
    if (ladder_is_opt(a, len, "--help") || ladder_is_opt(a, len, "-h")) {
      return LADDER_PARSE_HELP;
    } else if (ladder_is_opt(a, len, "--check") || ladder_is_opt(a, len, "--csv")) {
      if (!ladder_flag_has_no_value(a, len, eq)) return LADDER_PARSE_BAD;
      (ladder_is_opt(a, len, "--check") ? o.check : o.csv) = true;
    } else if (ladder_is_opt(a, len, "--n")) {
      size_t n = 0;
      if (!ladder_take_value(argc, argv, &i, eq, &v) || cli_parse_size(v, &n) != 0 || n == 0) {
        fprintf(stderr, "--n needs a number >= 1 (got '%s')\n", v);
        return LADDER_PARSE_BAD;
      }
      if (n > SIZE_MAX / 8) {
        fprintf(stderr, "--n %zu is too large\n", n);
        return LADDER_PARSE_BAD;
      }
      o.n = n;
      o.n_given = true;
    } else if (ladder_is_opt(a, len, "--block")) {
      size_t b = 0;
      if (!ladder_take_value(argc, argv, &i, eq, &v) || cli_parse_size(v, &b) != 0 || b < 64 ||
          b > 1024 || (b & (b - 1))) {
        fprintf(stderr, "--block needs a power of two in [64, 1024] (got '%s')\n", v);
        return LADDER_PARSE_BAD;
      }
      o.block = (unsigned)b;
      o.block_given = true;
    } else if (ladder_is_opt(a, len, "--reps")) {
      size_t r = 0;
      if (!ladder_parse_size("--reps", ladder_take_value(argc, argv, &i, eq, &v) ? v : nullptr, 20,
                             100000, &r))
        return LADDER_PARSE_BAD;
      o.reps = (int)r;
    } else {
      fprintf(stderr, "unknown argument '%.*s'\n", (int)len, a);
      return LADDER_PARSE_BAD;
    }
  }
  return LADDER_PARSE_OK;
}

// Appends formatted text to buf (cap bytes, NUL-terminated, `used` long); truncates
// rather than overflow.
void append(char *buf, size_t cap, size_t &used, const char *format, ...) {
  if (used + 1 >= cap) return;
  va_list ap;
  va_start(ap, format);
  const int w = vsnprintf(buf + used, cap - used, format, ap);
  va_end(ap);
  if (w > 0) used = used + (size_t)w < cap ? used + (size_t)w : cap - 1;
}

int run_check(Session &ss, const Options &o) {
  // Sizes around the segment lengths the steps use (B, 2B, ..., 8*1024), a warp, the
  // finishing kernel's 1024 threads, and the brief's 1<<20 and (1<<20)+7.
  static const size_t kSizes[] = {1,     2,      3,    31,   33,   63,   65,
                                  1000,  1023,   1025, 4097, 8191, 8193, 65537,
                                  100003, (size_t)1 << 20, ((size_t)1 << 20) + 7,
                                  ((size_t)1 << 21) + 13};
  static const unsigned kBlocks[] = {64, 128, 256, 512, 1024};
  static const Data kData[] = {Data::Uniform, Data::Integers};
  const size_t *sizes = o.n_given ? &o.n : kSizes;
  const size_t n_sizes = o.n_given ? 1 : sizeof kSizes / sizeof kSizes[0];
  const unsigned *blocks = o.block_given ? &o.block : kBlocks;
  const size_t n_blocks = o.block_given ? 1 : sizeof kBlocks / sizeof kBlocks[0];

  if (o.csv) printf("block,n,data,step,name,check,rel_err,note\n");
  else
    printf("parprim ladder reduce --check on %s: %zu sizes x %zu block sizes x 2 data sets, "
           "two runs per step\n",
           ss.prop.name, n_sizes, n_blocks);
  int failures = 0, configs = 0;
  double worst_uniform = 0.0;
  Rows rows;
  // " id (note)" per failed row at most.
  char failed[kMaxRows * (sizeof(Row::note) + 16)];
  for (size_t bi = 0; bi < n_blocks; ++bi) {
    const unsigned b = blocks[bi];
    for (size_t si = 0; si < n_sizes; ++si) {
      const size_t n = sizes[si];
      for (const Data d : kData) {
        // The Integers set is exact only while 4n < 2^24.
        if (d == Data::Integers && n > ((size_t)1 << 22)) continue;
        run_config(ss, o, n, b, d, false, rows);
        ++configs;
        size_t used = 0;
        failed[0] = '\0';
        for (size_t i = 0; i < rows.count; ++i) {
          const Row &r = rows.r[i];
          if (status_is(r.status, "FAIL")) {
            ++failures;
            append(failed, sizeof failed, used, " %s", r.id);
            if (r.note[0]) append(failed, sizeof failed, used, " (%s)", r.note);
          }
          if (d == Data::Uniform && r.op == Op::Sum && status_is(r.status, "PASS") &&
              r.kind == Kind::Kernel)
            worst_uniform = max_d(worst_uniform, r.rel_err);
          if (o.csv && !status_is(r.status, "ref"))
            printf("%u,%zu,%s,%s,%s,%s,%s,%s\n", b, n, data_name(d), r.id, ladder_csv(r.name).s,
                   r.status, ladder_num("%.3e", r.rel_err).s, ladder_csv(r.note).s);
        }
        if (!o.csv && failed[0])
          printf("FAIL block=%u n=%zu data=%s: steps%s\n", b, n, data_name(d), failed);
      }
    }
  }
  const bool skipped = !ss.ctx && !ss.ctx_fail[0];
  if (!o.csv) {
    printf("%d configurations, %d step failures; largest relative error of steps 2-10 on "
           "uniform data: %.2e (tolerance at n = 2^21: %.2e)\n",
           configs, failures, worst_uniform, sum_tolerance((size_t)1 << 21));
    if (skipped) printf("steps 11, 11m skipped: %s\n", ss.ctx_skip);
    printf("%s\n", failures ? "FAIL" : "PASS");
  }
  return failures ? 1 : 0;
}

int ladder_main(int argc, char **argv) {
  Options o;
  Session ss;
  const int early = ladder_start(parse_args(argc, argv, o), usage, &ss);
  if (early >= 0) return early;
  if (ss.prop.maxThreadsPerBlock < (int)o.block) {
    fprintf(stderr, "--block %u exceeds this device's limit of %d threads\n", o.block,
            ss.prop.maxThreadsPerBlock);
    return 2;
  }
  ladder_open_context(&ss);

  if (o.check) return run_check(ss, o);

  if (!ladder_alloc_l2_flush(&ss)) return 1;
  Rows rows;
  run_config(ss, o, o.n, o.block, Data::Uniform, true, rows);
  print_timing(rows, o, ss);
  for (size_t i = 0; i < rows.count; ++i)
    if (status_is(rows.r[i].status, "FAIL")) return 1;
  return 0;
}

}  // namespace

extern "C" int pp_ladder_reduce_main(int argc, char **argv) {
  try {
    return ladder_main(argc, argv);
  } catch (const LadderCudaFailure &) {
    // reported where it happened
  } catch (const StepFailure &f) {
    fprintf(stderr, "error: %s\n", f.what);
  } catch (const OutOfHostMemory &) {
    fprintf(stderr, "error: out of host memory\n");
  }
  return 1;
}

#ifdef PP_LADDER_STANDALONE
int main(int argc, char **argv) { return pp_ladder_reduce_main(argc, argv); }
#endif
