/*
 * ladder/sort.cu — the sort ladder: from the textbooks' teaching kernels to the production
 * pp_sort (one-sweep LSD radix sort; stable quicksort with dynamic parallelism) and CUB,
 * plus pp_merge against CUB. "Han 7" is Learn CUDA Programming (Han and Sharma), ch. 7;
 * "Cook 6" is CUDA Programming: A Developer's Guide (Cook), ch. 6.
 *
 *   step 1   CPU reference: serial LSD radix sort, 8-bit digits (stable)
 *   step 2   Han 7: a warp sorts 32 keys, one bit per round: __ballot_sync gives the
 *            lanes holding a 1, __popc of the masked ballot is each key's new place
 *            (histogram and prefix sum of one bit); many independent 32-key groups
 *   step 3   Cook 6: a block of 32 threads sorts 1024 keys in shared memory: each
 *            thread 1-bit radix-sorts its own interleaved list (radix_sort2: the 0-list
 *            reuses the input's space), then the 32 sorted lists are merged, one output
 *            key per round, in the book's three ways:
 *              3a  one thread scans every list's head (merge_array1)
 *              3b  every thread offers its head to atomicMin (merge_array6)
 *              3c  a tree of pairwise minimums in shared memory (merge_array5)
 *            many independent 1024-key chunks
 *   step 4   production pp_sort on the whole array
 *   step 4q  production pp_sort with PP_SORT_QUICK (src/cuda/sort_quick.cu)
 *   step 5   cub::DeviceRadixSort on the whole array
 *   step 6   Han 7: quicksort with dynamic parallelism, one thread per partition, a
 *            child grid per side on its own stream, a depth limit, selection sort below
 *            32 keys (ladder/cdp/quicksort_cdp.cu); one run, only up to 2^24 keys
 *            (2^20 + 7 under --check)
 * and, for the cases the production sort is measured on, production vs CUB:
 *   4f / 4qf / 5f  f32 keys          4p / 4qp / 5p  u32 keys with u32 values
 *   4w / 4qw / 5w  u64 keys          4m / 5m        merge of two sorted f32 halves
 *                                                   (pp_merge / cub::DeviceMerge::MergeKeys)
 *
 * Steps 2 and 3 sort groups, not the array: they show what the books' ideas cost per key,
 * and why a device-wide sort needs more (a global histogram, prefix sums across blocks,
 * scattering to global positions: what pp_sort does in one sweep per digit). Each group is
 * checked against the CPU sort of the same group; every whole-array step against step 1.
 *
 * Run through the CLI:   parprim ladder sort [--n N] [--reps R] [--check] [--csv]
 * (standalone, ladder/cdp/quicksort_cdp.cu must be compiled and device-linked with it:
 *  nvcc -std=c++17 -arch=sm_90 -O3 -rdc=true -DPP_LADDER_STANDALONE -I include -I ladder
 *  -I cli ladder/sort.cu ladder/cdp/quicksort_cdp.cu cli/common.c -o ladder_sort
 *  -L<build> -lparprim)
 */
#include "cdp/quicksort_cdp.h"
#include "common.cuh"
#include "ladder.h"
#include "parprim.h"

#include <cuda_runtime.h>
#include <cub/device/device_merge.cuh>
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace {

/* ------------------------------------------------------------------------------------ */
/* Error checking                                                                        */
/* ------------------------------------------------------------------------------------ */

struct StepFailure {
  std::string what;
};

void pp_check(pp_context *ctx, pp_status st, const char *what) {
  if (st != PP_OK)
    throw StepFailure{std::string(what) + ": " + pp_status_string(st) + ": " + pp_last_error(ctx)};
}

#include "sort_steps.cuh" /* key order, step 1, steps 2-3 */

/* ------------------------------------------------------------------------------------ */
/* Device resources                                                                      */
/* ------------------------------------------------------------------------------------ */

struct DeviceBuffer {
  void *p = nullptr;
  size_t bytes = 0;
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t b) : bytes(b) {
    if (b) LADDER_CUDA_CHECK(cudaMalloc(&p, b));
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() {
    if (p) cudaFree(p);
  }
  template <class T> T *as() const { return static_cast<T *>(p); }
};

struct Session : LadderSession {
  Session() : LadderSession{} {}
  ~Session() { ladder_session_close(this); }
};

struct Options {
  size_t n = (size_t)1 << 24;
  bool n_given = false;
  int reps = 25;
  int warmup = 3;
  bool check = false;
  bool csv = false;
};

enum class Kind { Kernel, Production, Cub };

struct Row {
  std::string id, name, group;
  Kind kind = Kind::Kernel;
  std::string status; /* PASS, FAIL, SKIP, ref */
  std::string note;
  double ms = NAN;
  size_t items = 0; /* keys sorted (or merged) per run */
};

/* One step: prepare() restores the input (untimed), run() is timed, verify() compares. */
struct Step {
  std::string id, name, group;
  Kind kind = Kind::Kernel;
  std::function<void()> prepare, run;
  std::function<std::string()> verify; /* "" when correct, else what is wrong */
  bool slow = false;     /* seconds a run: one run only, timed and checked */
  std::string skip_note; /* not run, and why */
  Step() = default;
  Step(std::string id_, std::string name_, std::string group_, Kind kind_, std::function<void()> prepare_,
       std::function<void()> run_, std::function<std::string()> verify_)
      : id(std::move(id_)), name(std::move(name_)), group(std::move(group_)), kind(kind_),
        prepare(std::move(prepare_)), run(std::move(run_)), verify(std::move(verify_)) {}
};

uint64_t splitmix64(uint64_t &s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

enum class Data { Uniform, Few, Sorted, Reversed, Equal };
const char *data_name(Data d) {
  switch (d) {
    case Data::Uniform: return "uniform";
    case Data::Few: return "few";
    case Data::Sorted: return "sorted";
    case Data::Reversed: return "reversed";
    case Data::Equal: return "equal";
  }
  return "?";
}

// Random keys of width U. For f32/f64 the bits are redrawn until they are a finite number
// other than -0.0: CUB orders -0.0 and NaN by their bits, pp_sort by API.md, so the data
// timed against CUB holds neither (the semantic cases are in --check's sweep).
template <class U> std::vector<U> make_keys(size_t n, Data d, bool finite_float, uint64_t seed) {
  std::vector<U> k(n);
  uint64_t s = seed;
  for (size_t i = 0; i < n; i++) {
    U v;
    do {
      v = (U)splitmix64(s);
      if (d == Data::Few) v = (U)(splitmix64(s) % 7) * (U)0x0101010101010101ull;
      if (d == Data::Equal) v = (U)0x4242424242424242ull;
      if (!finite_float) break;
      const U SIGN = (U)1 << (sizeof(U) * 8 - 1);
      const U EXP = sizeof(U) == 8 ? (U)0x7FF0000000000000ull : (U)0x7F800000u;
      if ((v & (U)~SIGN) < EXP && v != SIGN) break;
    } while (true);
    k[i] = v;
  }
  if (d == Data::Sorted || d == Data::Reversed) {
    const pp_dtype t = finite_float ? (sizeof(U) == 4 ? PP_F32 : PP_F64) : (sizeof(U) == 4 ? PP_U32 : PP_U64);
    cpu_radix_sort(k, nullptr, t, d == Data::Sorted ? PP_ASCENDING : PP_DESCENDING);
  }
  return k;
}

template <class T> std::vector<T> download(const void *d, size_t n) {
  std::vector<T> h(n);
  if (n) LADDER_CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

template <class T> std::string compare(const std::vector<T> &got, const std::vector<T> &want, const char *what) {
  for (size_t i = 0; i < want.size(); i++)
    if (memcmp(&got[i], &want[i], sizeof(T)) != 0) {
      char b[160];
      snprintf(b, sizeof b, "%s differ first at %zu of %zu", what, i, want.size());
      return b;
    }
  return "";
}

/* ------------------------------------------------------------------------------------ */
/* The steps of one configuration                                                       */
/* ------------------------------------------------------------------------------------ */

// Everything the steps of one run need; buffers live as long as the run.
struct Config {
  size_t n = 0;
  Data data = Data::Uniform;
  bool timing = false; /* else --check: many sizes and data sets, each run once or twice */
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  std::vector<Step> steps;
  std::vector<Row> rows; /* the CPU rows, filled while building */
  void *add(size_t bytes) {
    buffers.emplace_back(new DeviceBuffer(bytes));
    return buffers.back()->p;
  }
};

// Whole-array sort of keys (and optionally values) of type K/V: production and CUB.
// Returns the device copy of the input (never written); *host receives the input.
// K holds the keys' bits; CK is the type CUB is told the keys have (float for f32 keys,
// so that CUB sorts them as floats, not as their unsigned bit patterns).
template <class K, class V, bool PAIRS, class CK = K>
K *add_sort_group(Session &ss, Config &c, const char *group, const char *suffix, pp_dtype t,
                  bool finite_float, const char *label, std::vector<K> *host = nullptr,
                  std::shared_ptr<std::vector<K>> *want_out = nullptr) {
  const size_t n = c.n;
  std::vector<K> h = make_keys<K>(n, c.data, finite_float, 0x5eed0000u + (uint64_t)t);
  if (host) *host = h;
  auto want_keys = std::make_shared<std::vector<K>>(h);
  auto want_vals = std::make_shared<std::vector<V>>();
  if (want_out) *want_out = want_keys;
  {
    std::vector<uint64_t> perm(n);
    for (size_t i = 0; i < n; i++) perm[i] = i;
    const auto t0 = std::chrono::steady_clock::now();
    cpu_radix_sort(*want_keys, PAIRS ? &perm : nullptr, t, PP_ASCENDING);
    const auto t1 = std::chrono::steady_clock::now();
    if (PAIRS) {
      want_vals->resize(n);
      for (size_t i = 0; i < n; i++) (*want_vals)[i] = (V)perm[i];
    }
    Row r;
    r.id = std::string("1") + suffix;
    r.name = std::string("cpu LSD radix sort, ") + label;
    r.group = group;
    r.status = "ref";
    r.ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    r.items = n;
    r.note = "host, one run";
    c.rows.push_back(r);
  }
  K *pristine = (K *)c.add(n * sizeof(K));
  K *work = (K *)c.add(n * sizeof(K));
  K *cub_out = (K *)c.add(n * sizeof(K));
  V *vals_pristine = nullptr, *vals_work = nullptr, *vals_out = nullptr;
  LADDER_CUDA_CHECK(cudaMemcpy(pristine, h.data(), n * sizeof(K), cudaMemcpyHostToDevice));
  if (PAIRS) {
    std::vector<V> hv(n);
    for (size_t i = 0; i < n; i++) hv[i] = (V)i;
    vals_pristine = (V *)c.add(n * sizeof(V));
    vals_work = (V *)c.add(n * sizeof(V));
    vals_out = (V *)c.add(n * sizeof(V));
    LADDER_CUDA_CHECK(cudaMemcpy(vals_pristine, hv.data(), n * sizeof(V), cudaMemcpyHostToDevice));
  }
  size_t cub_bytes = 0;
  if (PAIRS)
    LADDER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, cub_bytes, (const CK *)pristine, (CK *)cub_out, vals_pristine,
                                               vals_out, (int64_t)n, 0, (int)sizeof(K) * 8, ss.stream));
  else
    LADDER_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, cub_bytes, (const CK *)pristine, (CK *)cub_out, (int64_t)n, 0,
                                              (int)sizeof(K) * 8, ss.stream));
  void *cub_temp = c.add(cub_bytes);
  cudaStream_t stream = ss.stream;
  pp_context *ctx = ss.ctx;

  Step prod;
  prod.id = std::string("4") + suffix;
  prod.name = std::string("production pp_sort, ") + label;
  prod.group = group;
  prod.kind = Kind::Production;
  prod.prepare = [=]() {
    LADDER_CUDA_CHECK(cudaMemcpyAsync(work, pristine, n * sizeof(K), cudaMemcpyDeviceToDevice, stream));
    if (PAIRS)
      LADDER_CUDA_CHECK(cudaMemcpyAsync(vals_work, vals_pristine, n * sizeof(V), cudaMemcpyDeviceToDevice, stream));
  };
  prod.run = [=]() {
    pp_sort_opts o = {PP_ASCENDING, PP_SORT_AUTO};
    pp_check(ctx, pp_sort(ctx, t, work, PAIRS ? vals_work : nullptr, PAIRS ? sizeof(V) : 0, n, &o), "pp_sort");
  };
  prod.verify = [=]() {
    LADDER_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::string e = compare(download<K>(work, n), *want_keys, "keys");
    if (e.empty() && PAIRS) e = compare(download<V>(vals_work, n), *want_vals, "values (stability)");
    return e;
  };
  if (!ctx) {
    prod.run = nullptr;
  }
  c.steps.push_back(prod);

  // the same call with PP_SORT_QUICK (src/cuda/sort_quick.cu): stable quicksort, recursion
  // on the device
  Step quick = prod;
  quick.id = std::string("4q") + suffix;
  quick.name = std::string("production pp_sort PP_SORT_QUICK, ") + label;
  quick.kind = Kind::Kernel;
  if (ctx)
    quick.run = [=]() {
      pp_sort_opts o = {PP_ASCENDING, PP_SORT_QUICK};
      pp_check(ctx, pp_sort(ctx, t, work, PAIRS ? vals_work : nullptr, PAIRS ? sizeof(V) : 0, n, &o), "pp_sort");
    };
  c.steps.push_back(quick);

  Step cub;
  cub.id = std::string("5") + suffix;
  cub.name = std::string(PAIRS ? "cub::DeviceRadixSort::SortPairs, " : "cub::DeviceRadixSort::SortKeys, ") + label;
  cub.group = group;
  cub.kind = Kind::Cub;
  cub.prepare = [=]() { LADDER_CUDA_CHECK(cudaMemsetAsync(cub_out, 0xff, n * sizeof(K), stream)); };
  cub.run = [=]() {
    size_t bytes = cub_bytes;
    if (PAIRS)
      LADDER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(cub_temp, bytes, (const CK *)pristine, (CK *)cub_out, vals_pristine, vals_out,
                                                 (int64_t)n, 0, (int)sizeof(K) * 8, stream));
    else
      LADDER_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(cub_temp, bytes, (const CK *)pristine, (CK *)cub_out, (int64_t)n, 0,
                                                (int)sizeof(K) * 8, stream));
  };
  cub.verify = [=]() {
    LADDER_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::string e = compare(download<K>(cub_out, n), *want_keys, "keys");
    if (e.empty() && PAIRS) e = compare(download<V>(vals_out, n), *want_vals, "values");
    return e;
  };
  c.steps.push_back(cub);
  return pristine;
}

struct FloatLess {
  __device__ bool operator()(float a, float b) const { return a < b; }
};

// Merge of two sorted f32 halves.
void add_merge_group(Session &ss, Config &c) {
  const size_t n = c.n, na = n / 2, nb = n - na;
  std::vector<uint32_t> a = make_keys<uint32_t>(na, c.data, true, 0xa11ce);
  std::vector<uint32_t> b = make_keys<uint32_t>(nb, c.data, true, 0xb0b);
  cpu_radix_sort(a, nullptr, PP_F32, PP_ASCENDING);
  cpu_radix_sort(b, nullptr, PP_F32, PP_ASCENDING);
  auto want = std::make_shared<std::vector<uint32_t>>(n);
  {
    const auto t0 = std::chrono::steady_clock::now();
    size_t i = 0, j = 0, k = 0;
    auto f = [](uint32_t x) { float v; memcpy(&v, &x, 4); return v; };
    while (i < na || j < nb) (*want)[k++] = (j >= nb || (i < na && !(f(b[j]) < f(a[i])))) ? a[i++] : b[j++];
    const auto t1 = std::chrono::steady_clock::now();
    Row r;
    r.id = "1m";
    r.name = "cpu merge, f32 halves";
    r.group = "merge f32";
    r.status = "ref";
    r.ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    r.items = n;
    r.note = "host, one run";
    c.rows.push_back(r);
  }
  float *da = (float *)c.add(na * 4), *db = (float *)c.add(nb * 4), *out = (float *)c.add(n * 4);
  LADDER_CUDA_CHECK(cudaMemcpy(da, a.data(), na * 4, cudaMemcpyHostToDevice));
  LADDER_CUDA_CHECK(cudaMemcpy(db, b.data(), nb * 4, cudaMemcpyHostToDevice));
  size_t cub_bytes = 0;
  LADDER_CUDA_CHECK(cub::DeviceMerge::MergeKeys(nullptr, cub_bytes, da, (int64_t)na, db, (int64_t)nb, out, FloatLess{},
                                         ss.stream));
  void *cub_temp = c.add(cub_bytes);
  cudaStream_t stream = ss.stream;
  pp_context *ctx = ss.ctx;
  auto prepare = [=]() { LADDER_CUDA_CHECK(cudaMemsetAsync(out, 0xff, n * 4, stream)); };
  auto verify = [=]() {
    LADDER_CUDA_CHECK(cudaStreamSynchronize(stream));
    return compare(download<uint32_t>(out, n), *want, "merged keys");
  };
  Step prod{"4m", "production pp_merge, f32 halves", "merge f32", Kind::Production, prepare,
            [=]() { pp_check(ctx, pp_merge(ctx, PP_F32, da, na, db, nb, out, PP_ASCENDING), "pp_merge"); },
            verify};
  if (!ctx) prod.run = nullptr;
  c.steps.push_back(prod);
  Step cub{"5m", "cub::DeviceMerge::MergeKeys, f32 halves", "merge f32", Kind::Cub, prepare,
           [=]() {
             size_t bytes = cub_bytes;
             LADDER_CUDA_CHECK(cub::DeviceMerge::MergeKeys(cub_temp, bytes, da, (int64_t)na, db, (int64_t)nb, out,
                                                    FloatLess{}, stream));
           },
           verify};
  c.steps.push_back(cub);
}

// Steps 2 and 3 on u32 keys: independent groups, each checked against its CPU sort.
// The book's quicksort partitions the whole array in one thread at level 0 (tens of seconds
// at 2^24 keys), so it is timed only up to 2^24 keys, and --check, which runs it on five
// data sets per size, stops at 2^20 + 7.
constexpr size_t kCdpQuicksortMax = (size_t)1 << 24;
constexpr size_t kCdpQuicksortCheckMax = ((size_t)1 << 20) + 7;

void add_book_steps(Session &ss, Config &c, const std::vector<uint32_t> &h, uint32_t *pristine,
                    std::shared_ptr<std::vector<uint32_t>> want) {
  const size_t n = c.n;
  uint32_t *out = (uint32_t *)c.add(n * 4);
  cudaStream_t stream = ss.stream;
  auto groups_sorted = [=](size_t group) {
    auto want = std::make_shared<std::vector<uint32_t>>(h);
    for (size_t g = 0; g < n; g += group) std::sort(want->begin() + g, want->begin() + std::min(n, g + group));
    return want;
  };
  auto want32 = groups_sorted(32), want1024 = groups_sorted(kChunk);
  auto prepare = [=]() { LADDER_CUDA_CHECK(cudaMemsetAsync(out, 0xff, n * 4, stream)); };
  const size_t blocks2 = (n + kWarpSortThreads - 1) / kWarpSortThreads;
  const size_t blocks3 = (n + kChunk - 1) / kChunk;
  if (blocks2 > 0x7fffffffu) throw StepFailure{"n too large for step 2's grid"};
  c.steps.push_back(Step{"2", "Han 7: warp ballot radix sort, 32-key groups", "u32 keys", Kind::Kernel, prepare,
                         [=]() {
                           warp_ballot_radix_sort<<<(unsigned)blocks2, kWarpSortThreads, 0, stream>>>(pristine, out, n);
                           LADDER_CUDA_CHECK(cudaGetLastError());
                         },
                         [=]() {
                           LADDER_CUDA_CHECK(cudaStreamSynchronize(stream));
                           return compare(download<uint32_t>(out, n), *want32, "32-key groups");
                         }});
  auto verify1024 = [=]() {
    LADDER_CUDA_CHECK(cudaStreamSynchronize(stream));
    return compare(download<uint32_t>(out, n), *want1024, "1024-key chunks");
  };
  // step 3: one kernel per merge of the 32 sorted lists
  auto add_step3 = [&](const char *id, const char *name,
                       void (*kernel)(const uint32_t *, uint32_t *, size_t)) {
    c.steps.push_back(Step{id, name, "u32 keys", Kind::Kernel, prepare,
                           [=]() {
                             kernel<<<(unsigned)blocks3, kLists, 0, stream>>>(pristine, out, n);
                             LADDER_CUDA_CHECK(cudaGetLastError());
                           },
                           verify1024});
  };
  add_step3("3a", "Cook 6: 32 lists + single-thread merge, 1024-key chunks",
            block_lists_radix_sort<MergeKind::Single>);
  add_step3("3b", "Cook 6: 32 lists + atomicMin merge, 1024-key chunks",
            block_lists_radix_sort<MergeKind::AtomicMin>);
  add_step3("3c", "Cook 6: 32 lists + reduction merge, 1024-key chunks",
            block_lists_radix_sort<MergeKind::Reduction>);

  // Han 7's quicksort with dynamic parallelism, on the whole array: one thread per
  // partition, so each level costs a serial pass over its longest segment
  Step cdp{"6", "Han 7: CDP quicksort, one thread per partition", "u32 keys", Kind::Kernel,
            [=]() {
              LADDER_CUDA_CHECK(pp_ladder_cdp_quicksort_limits());
              LADDER_CUDA_CHECK(cudaMemcpyAsync(out, pristine, n * 4, cudaMemcpyDeviceToDevice, stream));
            },
            [=]() { LADDER_CUDA_CHECK(pp_ladder_cdp_quicksort(out, n, stream)); },
            [=]() {
              LADDER_CUDA_CHECK(cudaStreamSynchronize(stream));
              return compare(download<uint32_t>(out, n), *want, "keys");
            }};
  cdp.slow = true;
  if (n > (c.timing ? kCdpQuicksortMax : kCdpQuicksortCheckMax))
    cdp.skip_note = c.timing ? "n > 2^24: the serial partitions would take minutes"
                              : "n > 2^20 + 7 under --check: tens of seconds per data set";
  c.steps.push_back(cdp);
}

const char *const kGroups[] = {"u32 keys", "f32 keys", "u32/u32 pairs", "u64 keys", "merge f32"};

void build_config(Session &ss, Config &c) {
  std::vector<uint32_t> h;
  std::shared_ptr<std::vector<uint32_t>> want;
  uint32_t *pristine =
      add_sort_group<uint32_t, uint32_t, false>(ss, c, kGroups[0], "", PP_U32, false, "u32 keys", &h, &want);
  add_book_steps(ss, c, h, pristine, want);
  add_sort_group<uint32_t, uint32_t, false, float>(ss, c, kGroups[1], "f", PP_F32, true, "f32 keys");
  add_sort_group<uint32_t, uint32_t, true>(ss, c, kGroups[2], "p", PP_U32, false, "u32/u32 pairs");
  add_sort_group<uint64_t, uint32_t, false>(ss, c, kGroups[3], "w", PP_U64, false, "u64 keys");
  add_merge_group(ss, c);
}

// Validation run, then (when timing) warm-up and timed runs; the last timed run is
// checked too. --check: a second run catches state a first run depends on.
Row run_step(Session &ss, const Options &o, const Step &s, size_t items, bool timing) {
  Row r;
  r.id = s.id;
  r.name = s.name;
  r.group = s.group;
  r.kind = s.kind;
  r.items = items;
  if (!s.skip_note.empty()) {
    r.status = "SKIP";
    r.note = s.skip_note;
    return r;
  }
  if (!s.run) {
    r.status = ss.ctx_fail[0] ? "FAIL" : "SKIP";
    r.note = ss.ctx_fail[0] ? ss.ctx_fail : ss.ctx_skip;
    return r;
  }
  // One run of the step between the two events, after writing the L2 flush buffer with
  // `fill` when flush is set: the input is evicted from L2, so every run starts from DRAM.
  auto timed_run = [&](bool flush, int fill) {
    if (flush && ss.l2_flush) LADDER_CUDA_CHECK(cudaMemsetAsync(ss.l2_flush, fill, ss.l2_flush_bytes, ss.stream));
    LADDER_CUDA_CHECK(cudaEventRecord(ss.start, ss.stream));
    s.run();
    LADDER_CUDA_CHECK(cudaEventRecord(ss.stop, ss.stream));
    LADDER_CUDA_CHECK(cudaEventSynchronize(ss.stop));
    float ms = 0.0f;
    LADDER_CUDA_CHECK(cudaEventElapsedTime(&ms, ss.start, ss.stop));
    return ms;
  };
  try {
    std::string err;
    if (s.slow) { /* one run, timed when timing, and checked */
      s.prepare();
      const float ms = timed_run(timing, 0);
      if (timing) r.ms = ms;
      err = s.verify();
      r.status = err.empty() ? "PASS" : "FAIL";
      r.note = err.empty() && timing ? "one run" : err;
      return r;
    }
    s.prepare();
    s.run();
    err = s.verify();
    if (err.empty()) {
      if (!timing) {
        s.prepare();
        s.run();
        err = s.verify();
      } else {
        for (int w = 0; w < o.warmup; ++w) {
          s.prepare();
          s.run();
        }
        std::vector<float> times;
        for (int k = 0; k < o.reps; ++k) {
          s.prepare();
          times.push_back(timed_run(true, k & 0xff));
        }
        err = s.verify();
        std::sort(times.begin(), times.end());
        const size_t k = times.size();
        r.ms = k % 2 ? times[k / 2] : 0.5 * ((double)times[k / 2 - 1] + times[k / 2]);
      }
    }
    r.status = err.empty() ? "PASS" : "FAIL";
    r.note = err;
  } catch (const StepFailure &f) {
    LADDER_CUDA_CHECK(cudaStreamSynchronize(ss.stream));
    r.status = "FAIL";
    r.note = f.what;
  }
  return r;
}

std::vector<Row> run_config(Session &ss, const Options &o, size_t n, Data d, bool timing) {
  Config c;
  c.n = n;
  c.data = d;
  c.timing = timing;
  build_config(ss, c);
  std::vector<Row> rows;
  for (const char *g : kGroups) { /* per group: the CPU reference, then steps in id order */
    for (const Row &r : c.rows)
      if (r.group == g) rows.push_back(r);
    std::vector<const Step *> steps;
    for (const Step &s : c.steps)
      if (s.group == g) steps.push_back(&s);
    std::stable_sort(steps.begin(), steps.end(), [](const Step *a, const Step *b) { return a->id < b->id; });
    for (const Step *s : steps) rows.push_back(run_step(ss, o, *s, n, timing));
  }
  return rows;
}

#include "sort_check.cuh" /* --check over every dtype, order and value size */

/* ------------------------------------------------------------------------------------ */
/* Output                                                                                */
/* ------------------------------------------------------------------------------------ */

const Row *find_row(const std::vector<Row> &rows, const std::string &group, Kind kind) {
  for (const Row &r : rows)
    if (r.group == group && r.kind == kind && r.status != "ref") return &r;
  return nullptr;
}

std::string csv_text(const std::string &t) {
  std::string q = "\"";
  for (char ch : t) q += (ch == '"') ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

std::string fmt(const char *f, double v) {
  if (std::isnan(v)) return "-";
  char b[64];
  snprintf(b, sizeof b, f, v);
  return b;
}

void print_timing(const std::vector<Row> &rows, const Options &o, const Session &ss) {
  FILE *info = o.csv ? stderr : stdout;
  fprintf(info, "parprim ladder sort: n = %zu, median of %d runs after %d warm-up\n", o.n, o.reps, o.warmup);
  fprintf(info, "device: %s (%d SMs, L2 %.0f MiB, flushed before every timed run)\n", ss.prop.name,
          ss.prop.multiProcessorCount, ss.prop.l2CacheSize / 1048576.0);
  fprintf(info, "Gkeys/s = n / time; x prod / x cub = time / time of the production / CUB step of the same "
                "group; steps 2 and 3 sort 32- and 1024-key groups, not the array\n%s",
          o.csv ? "" : "\n");
  if (o.csv)
    printf("step,group,name,check,ms,gkeys_per_s,x_prod,x_cub,note\n");
  else
    printf("%-4s %-56s %-5s %10s %8s %7s %7s\n", "step", "name", "check", "ms", "Gkeys/s", "x prod", "x cub");
  for (const Row &r : rows) {
    const Row *prod = find_row(rows, r.group, Kind::Production);
    const Row *cub = find_row(rows, r.group, Kind::Cub);
    const double gk = std::isnan(r.ms) ? NAN : (double)r.items / (r.ms * 1e6);
    const double xp = prod && !std::isnan(r.ms) ? r.ms / prod->ms : NAN;
    const double xc = cub && !std::isnan(r.ms) ? r.ms / cub->ms : NAN;
    if (o.csv)
      printf("%s,%s,%s,%s,%s,%s,%s,%s,%s\n", r.id.c_str(), csv_text(r.group).c_str(), csv_text(r.name).c_str(),
             r.status.c_str(), fmt("%.5f", r.ms).c_str(), fmt("%.3f", gk).c_str(), fmt("%.3f", xp).c_str(),
             fmt("%.3f", xc).c_str(), csv_text(r.note).c_str());
    else
      printf("%-4s %-56s %-5s %10s %8s %7s %7s%s%s\n", r.id.c_str(), r.name.c_str(), r.status.c_str(),
             fmt("%.4f", r.ms).c_str(), fmt("%.2f", gk).c_str(), fmt("%.2f", xp).c_str(), fmt("%.2f", xc).c_str(),
             r.note.empty() ? "" : "  ", r.note.c_str());
  }
}

int run_check(Session &ss, const Options &o) {
  std::vector<size_t> sizes;
  if (o.n_given)
    sizes.push_back(o.n);
  else
    sizes = {1, 2, 3, 31, 32, 33, 1000, 1023, 1025, 4095, 4096, 4097, 6911, 6912, 6913,
             65537, 100003, ((size_t)1 << 20) + 7, 3 * ((size_t)1 << 20) + 17};
  const Data datas[] = {Data::Uniform, Data::Few, Data::Sorted, Data::Reversed, Data::Equal};
  if (o.csv) printf("n,data,step,name,check,note\n");
  else
    printf("parprim ladder sort --check on %s: %zu sizes x 5 data sets, two runs per step\n", ss.prop.name,
           sizes.size());
  int failures = 0, configs = 0;
  for (size_t n : sizes)
    for (Data d : datas) {
      const std::vector<Row> rows = run_config(ss, o, n, d, false);
      ++configs;
      std::string failed;
      for (const Row &r : rows) {
        if (r.status == "FAIL") {
          ++failures;
          failed += " " + r.id + (r.note.empty() ? "" : " (" + r.note + ")");
        }
        if (o.csv && r.status != "ref")
          printf("%zu,%s,%s,%s,%s,%s\n", n, data_name(d), r.id.c_str(), csv_text(r.name).c_str(), r.status.c_str(),
                 csv_text(r.note).c_str());
      }
      if (!o.csv && !failed.empty()) printf("FAIL n=%zu data=%s: steps%s\n", n, data_name(d), failed.c_str());
    }
  int cases = 0;
  const int sem_failures = run_semantics(ss, o, cases);
  failures += sem_failures;
  if (!o.csv) {
    printf("%d configurations; %d pp_sort/pp_merge semantic cases (%d failed); %d failures in all\n", configs,
           cases, sem_failures, failures);
    if (!ss.ctx) printf("production steps skipped: %s\n", ss.ctx_fail[0] ? ss.ctx_fail : ss.ctx_skip);
    printf("%s\n", failures ? "FAIL" : "PASS");
  }
  return failures ? 1 : 0;
}

/* ------------------------------------------------------------------------------------ */
/* Command line                                                                          */
/* ------------------------------------------------------------------------------------ */

void usage(FILE *f) {
  fprintf(f,
          "usage: parprim ladder sort [--n N] [--reps R] [--check] [--csv] [--help]\n"
          "\n"
          "Runs the sort ladder: a CPU LSD radix sort, the textbooks' warp (ballot/popc) and\n"
          "block (per-thread lists + single-thread, atomicMin or reduction merge) radix sorts,\n"
          "the production pp_sort (radix and PP_SORT_QUICK), CUB, and the textbook quicksort with\n"
          "dynamic parallelism (n <= 2^24) on u32 keys; then production vs CUB on f32 keys,\n"
          "u32/u32 pairs, u64 keys, and pp_merge vs cub::DeviceMerge on two sorted f32 halves.\n"
          "Every step is validated against the CPU reference and timed with CUDA events.\n"
          "\n"
          "  --n N      number of keys, 1 .. 2^34 (default 16777216): " CLI_SIZE_FORMS "\n"
          "  --reps R   timed runs per step, the median is reported (default 25)\n"
          "  --check    no timing: validate every step (two runs each) over awkward sizes and\n"
          "             five data sets (or only --n N), then pp_sort and pp_merge over every\n"
          "             dtype, both orders, keys only and with 4- and 8-byte values, on keys\n"
          "             with NaN, -0.0, infinities and long runs of ties; exit 0 only if all pass\n"
          "  --csv      comma-separated output\n"
          "  --help     this text\n"
          "\n"
          "exit status: 0 all passed, 1 a step failed, 2 bad usage, 77 no CUDA device\n");
}

LadderParse parse_args(int argc, char **argv, Options &o) {
  for (int i = ladder_first_arg(argc, argv); i < argc; ++i) {
    std::string a = argv[i] ? argv[i] : "";
    std::string val;
    bool has_val = false;
    const size_t eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      val = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_val = true;
    }
    auto take = [&](std::string &dst) {
      if (has_val) {
        dst = val;
        return true;
      }
      if (i + 1 >= argc || !argv[i + 1]) return false;
      dst = argv[++i];
      return true;
    };
    if (a == "--help" || a == "-h") {
      return LADDER_PARSE_HELP;
    } else if (a == "--check" || a == "--csv") {
      if (has_val) {
        fprintf(stderr, "%s takes no value\n", a.c_str());
        return LADDER_PARSE_BAD;
      }
      (a == "--check" ? o.check : o.csv) = true;
    } else if (a == "--n") {
      std::string v;
      size_t n = 0;
      if (!take(v) || cli_parse_size(v.c_str(), &n) != 0 || n == 0) {
        fprintf(stderr, "--n needs a number >= 1 (got '%s')\n", v.c_str());
        return LADDER_PARSE_BAD;
      }
      if (n > ((size_t)1 << 34)) {
        fprintf(stderr, "--n %zu is too large for this ladder (at most 2^34)\n", n);
        return LADDER_PARSE_BAD;
      }
      o.n = n;
      o.n_given = true;
    } else if (a == "--reps") {
      std::string v;
      size_t r = 0;
      if (!take(v) || cli_parse_size(v.c_str(), &r) != 0 || r < 1 || r > 100000) {
        fprintf(stderr, "--reps needs a number in [1, 100000] (got '%s')\n", v.c_str());
        return LADDER_PARSE_BAD;
      }
      o.reps = (int)r;
    } else {
      fprintf(stderr, "unknown argument '%s'\n", a.c_str());
      return LADDER_PARSE_BAD;
    }
  }
  return LADDER_PARSE_OK;
}

int ladder_main(int argc, char **argv) {
  Options o;
  Session ss;
  const int early = ladder_start(parse_args(argc, argv, o), usage, &ss);
  if (early >= 0) return early;
  ladder_open_context(&ss);
  if (o.check) return run_check(ss, o);
  if (!ladder_alloc_l2_flush(&ss)) return 1;
  const std::vector<Row> rows = run_config(ss, o, o.n, Data::Uniform, true);
  print_timing(rows, o, ss);
  for (const Row &r : rows)
    if (r.status == "FAIL") return 1;
  return 0;
}

}  // namespace

extern "C" int pp_ladder_sort_main(int argc, char **argv) {
  try {
    return ladder_main(argc, argv);
  } catch (const LadderCudaFailure &) {
    // reported where it happened
  } catch (const StepFailure &f) {
    fprintf(stderr, "error: %s\n", f.what.c_str());
  } catch (const std::bad_alloc &) {
    fprintf(stderr, "error: out of host memory\n");
  } catch (const std::exception &x) {
    fprintf(stderr, "error: %s\n", x.what());
  }
  return 1;
}

#ifdef PP_LADDER_STANDALONE
int main(int argc, char **argv) { return pp_ladder_sort_main(argc, argv); }
#endif
