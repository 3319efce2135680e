/* scan_probe.cu — check-and-time of compile-time variants of src/cuda/scan.cu against CUB and
 * a device memcpy in one process, for tuning the kernels before the full bench.
 *
 * The same file is compiled twice over: once as the program, and once per variant with
 * -DPROBE_VARIANT=<name> and the variant's -D flags, which puts the whole of scan.cu in
 * namespace <name> and registers its entry points. scripts/scan_variants.sh builds it:
 *   scripts/scan_variants.sh OUTDIR "name:-DPP_SCAN_VECS=8 ..." ...
 * and links OUTDIR/scan_probe against the library of the build dir (BD, default
 * build-scan); "lib" is that library's own pp_scan / pp_select / pp_partition.
 *
 *   scan_probe time [LOG2N ...]      default 24 28: u32 exclusive scan, f32 select and
 *                                    partition of x > 0 (half kept), each variant checked
 *                                    against CUB on the device, then timed; memcpy and
 *                                    pp_reduce as the limits
 *   scan_probe small [race] [NAME ...]  sizes around tile boundaries, every element size,
 *                                    offsets 0 and 1, against a host reference (race: fewer
 *                                    cases, for compute-sanitizer)
 *   scan_probe prof LOG2N NAME ...   one scan and one select per variant ("cub": CUB's), for
 *                                    ncu
 * Variants named diag_* give wrong results on purpose (timing diagnostics): only their
 * scan is timed, and its check does not fail the run. Exit status 1 on any other wrong
 * result.
 */
#include "parprim.h"

#include <cuda_runtime.h>
#include <stdint.h>
#include <vector>

typedef pp_status (*probe_scan_fn)(pp_context *, pp_op, pp_dtype, const void *, void *, size_t,
                                   bool);
typedef pp_status (*probe_select_fn)(pp_context *, pp_dtype, const void *, size_t, pp_cmp,
                                     const void *, void *, uint64_t *);
struct probe_variant {
  const char *name;
  probe_scan_fn scan;
  probe_select_fn select, partition;
};
int probe_register(const probe_variant &v);

#ifdef PROBE_VARIANT
/* ---- one variant: scan.cu in its own namespace -------------------------------------------- */
#include <string.h>
#include <type_traits>

#include "../src/cuda/arith.cuh"
#include "../src/cuda/common.cuh"
#include "../src/cuda/cuda_backend.h"

namespace PROBE_VARIANT {
#include "../src/cuda/scan.cu"
}

#define PROBE_STR2(x) #x
#define PROBE_STR(x) PROBE_STR2(x)
static int probe_registered = probe_register(
    {PROBE_STR(PROBE_VARIANT), PROBE_VARIANT::pp_cuda_scan, PROBE_VARIANT::pp_cuda_select,
     PROBE_VARIANT::pp_cuda_partition});

#else
/* ---- the program ------------------------------------------------------------------------ */
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

static std::vector<probe_variant> &variants() {
  static std::vector<probe_variant> v;
  return v;
}
int probe_register(const probe_variant &v) {
  variants().push_back(v);
  return 0;
}
static int lib_registered = probe_register({"lib", pp_scan, pp_select, pp_partition});

static bool is_diag(const probe_variant &v) { return strncmp(v.name, "diag", 4) == 0; }

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__);                         \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

struct positive {
  __device__ bool operator()(float x) const { return x > 0.0f; }
};

/* how many i in [0, n) have got[i] != want[j(i)], j(i) = i below split, else the mirror
 * of the tail (CUB's partition writes its rejected part reversed) */
template <typename T>
__global__ void mismatches(const T *got, const T *want, size_t n, size_t split,
                           unsigned long long *bad) {
  static_assert(sizeof(T) == 4, "compares 4-byte elements");
  unsigned long long mine = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    size_t j = i < split ? i : n - 1 - (i - split);
    mine += *reinterpret_cast<const uint32_t *>(&got[i]) !=
            *reinterpret_cast<const uint32_t *>(&want[j]); /* 4-byte elements: bits */
  }
  if (mine) atomicAdd(bad, mine);
}

template <typename T>
static unsigned long long count_bad(const T *got, const T *want, size_t n, size_t split) {
  static unsigned long long *d = nullptr;
  if (!d) CK(cudaMalloc(&d, sizeof *d));
  CK(cudaMemset(d, 0, sizeof *d));
  mismatches<<<1024, 256>>>(got, want, n, split, d);
  unsigned long long h = 0;
  CK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
  return h;
}

template <typename F>
static float time_ms(F f, int reps = 30) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> t;
  for (int i = 0; i < reps + 3; i++) {
    cudaEventRecord(a);
    f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    if (i >= 3) t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return t[t.size() / 2];
}

static bool selected(const probe_variant &v, const std::vector<std::string> &names) {
  if (names.empty()) return true;
  for (const std::string &s : names)
    if (s == v.name) return true;
  return false;
}

static int run_time(pp_context *ctx, const std::vector<int> &logs) {
  int bad = 0;
  const float zero = 0.0f;
  for (int lg : logs) {
    size_t n = (size_t)1 << lg;
    std::vector<uint32_t> h(n);
    std::vector<float> hf(n);
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) {
      s ^= s << 13; s ^= s >> 7; s ^= s << 17;
      h[i] = (uint32_t)(s >> 40);
      hf[i] = (float)((int64_t)(s >> 11) - (int64_t)(1ull << 52)) / (float)(1ull << 52);
    }
    uint32_t *din, *dout, *dref;
    float *fin, *fout, *fref, *pref;
    uint64_t *dcount;
    int64_t *cub_count;
    CK(cudaMalloc(&din, n * 4)); CK(cudaMalloc(&dout, n * 4)); CK(cudaMalloc(&dref, n * 4));
    CK(cudaMalloc(&fin, n * 4)); CK(cudaMalloc(&fout, n * 4)); CK(cudaMalloc(&fref, n * 4));
    CK(cudaMalloc(&pref, n * 4));
    CK(cudaMalloc(&dcount, 8)); CK(cudaMalloc(&cub_count, 8));
    CK(cudaMemcpy(din, h.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(fin, hf.data(), n * 4, cudaMemcpyHostToDevice));
    size_t tb = 0, tb2 = 0, tb3 = 0;
    cub::DeviceScan::ExclusiveSum(nullptr, tb, din, dout, (int64_t)n);
    cub::DeviceSelect::If(nullptr, tb2, fin, fout, cub_count, (int64_t)n, positive());
    cub::DevicePartition::If(nullptr, tb3, fin, fout, cub_count, (int64_t)n, positive());
    void *tmp;
    CK(cudaMalloc(&tmp, std::max(tb, std::max(tb2, tb3))));

    float t_copy = time_ms([&] { cudaMemcpyAsync(dout, din, n * 4, cudaMemcpyDeviceToDevice); });
    float t_red = time_ms([&] { pp_reduce(ctx, PP_SUM, PP_F32, fin, n, fout); });
    printf("2^%d memcpy %.4f ms (%.0f GB/s), read (pp_reduce) %.4f ms (%.0f GB/s)\n", lg,
           t_copy, 8.0 * n / t_copy / 1e6, t_red, 4.0 * n / t_red / 1e6);

    CK(cub::DeviceScan::ExclusiveSum(tmp, tb, din, dref, (int64_t)n));
    float t_cub = time_ms([&] { cub::DeviceScan::ExclusiveSum(tmp, tb, din, dout, (int64_t)n); });
    CK(cub::DeviceSelect::If(tmp, tb2, fin, fref, cub_count, (int64_t)n, positive()));
    int64_t kept = 0;
    CK(cudaMemcpy(&kept, cub_count, 8, cudaMemcpyDeviceToHost));
    float t_cubs = time_ms([&] { cub::DeviceSelect::If(tmp, tb2, fin, fout, cub_count, (int64_t)n, positive()); });
    CK(cub::DevicePartition::If(tmp, tb3, fin, pref, cub_count, (int64_t)n, positive()));
    float t_cubp = time_ms([&] { cub::DevicePartition::If(tmp, tb3, fin, fout, cub_count, (int64_t)n, positive()); });
    printf("2^%d cub: scan %.4f ms (%.0f GB/s)  select %.4f  partition %.4f\n", lg, t_cub,
           8.0 * n / t_cub / 1e6, t_cubs, t_cubp);

    for (const probe_variant &v : variants()) {
      int vbad = 0;
      /* scan */
      CK(cudaMemset(dout, 0xAB, n * 4));
      pp_status st = v.scan(ctx, PP_SUM, PP_U32, din, dout, n, false);
      CK(cudaDeviceSynchronize());
      unsigned long long w = count_bad(dout, dref, n, n);
      float t = time_ms([&] { v.scan(ctx, PP_SUM, PP_U32, din, dout, n, false); });
      vbad += st != PP_OK || w != 0;
      printf("2^%d %-14s scan %.4f ms %.3fx %4.0f GB/s wrong %llu", lg, v.name, t, t_cub / t,
             8.0 * n / t / 1e6, w);
      if (is_diag(v)) { /* its partition would write past the output: scan only */
        printf("  (diagnostic)\n");
        continue;
      }
      /* select */
      CK(cudaMemset(fout, 0xAB, n * 4));
      st = v.select(ctx, PP_F32, fin, n, PP_GT, &zero, fout, dcount);
      uint64_t cnt = 0;
      CK(cudaMemcpy(&cnt, dcount, 8, cudaMemcpyDeviceToHost));
      w = count_bad(fout, fref, (size_t)kept, (size_t)kept) + (cnt != (uint64_t)kept);
      t = time_ms([&] { v.select(ctx, PP_F32, fin, n, PP_GT, &zero, fout, dcount); });
      vbad += st != PP_OK || w != 0;
      printf(" | select %.4f %.3fx wrong %llu", t, t_cubs / t, w);
      /* partition */
      CK(cudaMemset(fout, 0xAB, n * 4));
      st = v.partition(ctx, PP_F32, fin, n, PP_GT, &zero, fout, dcount);
      CK(cudaMemcpy(&cnt, dcount, 8, cudaMemcpyDeviceToHost));
      w = count_bad(fout, pref, n, (size_t)kept) + (cnt != (uint64_t)kept);
      t = time_ms([&] { v.partition(ctx, PP_F32, fin, n, PP_GT, &zero, fout, dcount); });
      vbad += st != PP_OK || w != 0;
      printf(" | partition %.4f %.3fx wrong %llu%s\n", t, t_cubp / t, w, vbad ? "  FAILED" : "");
      bad += vbad;
    }
    cudaFree(din); cudaFree(dout); cudaFree(dref); cudaFree(fin); cudaFree(fout); cudaFree(fref);
    cudaFree(pref); cudaFree(dcount); cudaFree(cub_count); cudaFree(tmp);
  }
  return bad;
}

/* Host references of one dtype: exclusive scan out of place, inclusive scan in place,
 * select and partition of x > threshold; in and out at element offset `off`. Float data
 * are small integers, so every order of summation is exact. */
template <typename T>
static int small_case(pp_context *ctx, const probe_variant &v, pp_dtype t, size_t n, int off) {
  std::vector<T> h(n), got(n + 1), want(n);
  uint64_t s = 0x9e3779b97f4a7c15ull ^ (n * 31 + off);
  for (size_t i = 0; i < n; i++) {
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    if (std::is_floating_point<T>::value) h[i] = (T)((int)(s % 201) - 100);
    else h[i] = (T)(s >> 8);
  }
  T thr = (T)0;
  if constexpr (!std::is_floating_point<T>::value) thr = (T)((T)~(T)0 / 2);
  T *bin, *bout;
  uint64_t *dc;
  CK(cudaMalloc(&bin, (n + 1) * sizeof(T))); CK(cudaMalloc(&bout, (n + 1) * sizeof(T)));
  CK(cudaMalloc(&dc, 8));
  T *din = bin + off, *dout = bout + off;
  int bad = 0;
  for (int incl = 0; incl < 2; incl++) {
    CK(cudaMemcpy(din, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    T *o = incl ? din : dout; /* inclusive: in place */
    pp_status st = v.scan(ctx, PP_SUM, t, din, o, n, incl != 0);
    CK(cudaMemcpy(got.data(), o, n * sizeof(T), cudaMemcpyDeviceToHost));
    T acc = 0;
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
      T next = (T)(acc + h[i]);
      w += got[i] != (incl ? next : acc);
      acc = next;
    }
    if (st != PP_OK || w) printf("small %s %s n=%zu off=%d scan %s: %s wrong %zu\n", v.name,
                                 pp_dtype_string(t), n, off, incl ? "incl" : "excl",
                                 pp_status_string(st), w);
    bad += st != PP_OK || w != 0;
  }
  CK(cudaMemcpy(din, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (h[i] > thr) want[k++] = h[i];
  const size_t kept = k;
  for (size_t i = 0; i < n; i++)
    if (!(h[i] > thr)) want[k++] = h[i];
  for (int part = 0; part < 2; part++) {
    CK(cudaMemset(bout, 0xAB, (n + 1) * sizeof(T)));
    pp_status st = part ? v.partition(ctx, t, din, n, PP_GT, &thr, dout, dc)
                        : v.select(ctx, t, din, n, PP_GT, &thr, dout, dc);
    uint64_t cnt = 0;
    CK(cudaMemcpy(&cnt, dc, 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(got.data(), dout, (n + (off ? 0 : 1)) * sizeof(T), cudaMemcpyDeviceToHost));
    const size_t m = part ? n : kept;
    size_t w = cnt != kept;
    for (size_t i = 0; i < m; i++) w += memcmp(&got[i], &want[i], sizeof(T)) != 0;
    if (!off) { /* nothing written past the output */
      T sent;
      memset(&sent, 0xAB, sizeof sent);
      w += memcmp(&got[m], &sent, sizeof(T)) != 0;
    }
    if (st != PP_OK || w) printf("small %s %s n=%zu off=%d %s: %s count %llu want %zu wrong %zu\n",
                                 v.name, pp_dtype_string(t), n, off,
                                 part ? "partition" : "select", pp_status_string(st),
                                 (unsigned long long)cnt, kept, w);
    bad += st != PP_OK || w != 0;
  }
  cudaFree(bin); cudaFree(bout); cudaFree(dc);
  return bad;
}

/* Sizes around the tile boundaries (tiles of 2048 to 16384 elements) and (u32, f32) a few
 * million elements. */
static int run_small(pp_context *ctx, bool race, const std::vector<std::string> &names) {
  static const size_t sizes[] = {1, 31, 4097, 8193, 3 * 8192 + 5, 70001, 200003};
  int bad = 0;
  for (const probe_variant &v : variants()) {
    if (!selected(v, names) || is_diag(v)) continue;
    int vbad = 0, cases = 0;
    for (size_t n : sizes)
      for (int off = 0; off < 2; off++) {
        if (race && (n < 8193 || n > 70001 || off)) continue; /* racecheck is slow */
        vbad += small_case<uint8_t>(ctx, v, PP_U8, n, off);
        vbad += small_case<uint32_t>(ctx, v, PP_U32, n, off);
        vbad += small_case<float>(ctx, v, PP_F32, n, off);
        vbad += small_case<uint64_t>(ctx, v, PP_U64, n, off);
        vbad += small_case<double>(ctx, v, PP_F64, n, off);
        cases += 5;
      }
    if (!race) {
      vbad += small_case<uint32_t>(ctx, v, PP_U32, (size_t)4 << 20, 0);
      vbad += small_case<float>(ctx, v, PP_F32, ((size_t)4 << 20) + 7, 0);
      vbad += small_case<uint8_t>(ctx, v, PP_U8, ((size_t)4 << 20) + 9, 1);
      cases += 3;
    }
    printf("small %s: %d cases (4 calls each), %d failed\n", v.name, cases, vbad);
    bad += vbad;
  }
  return bad;
}

/* One call of each named variant's scan and select (for ncu), "cub" for CUB's. */
static int run_prof(pp_context *ctx, int lg, const std::vector<std::string> &names) {
  const size_t n = (size_t)1 << lg;
  const float zero = 0.0f;
  uint32_t *din, *dout;
  float *fin, *fout;
  uint64_t *dcount;
  int64_t *cub_count;
  CK(cudaMalloc(&din, n * 4)); CK(cudaMalloc(&dout, n * 4));
  CK(cudaMalloc(&fin, n * 4)); CK(cudaMalloc(&fout, n * 4));
  CK(cudaMalloc(&dcount, 8)); CK(cudaMalloc(&cub_count, 8));
  CK(cudaMemset(din, 1, n * 4));
  {
    std::vector<float> hf(n);
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) {
      s ^= s << 13; s ^= s >> 7; s ^= s << 17;
      hf[i] = (s >> 63) ? 1.0f : -1.0f;
    }
    CK(cudaMemcpy(fin, hf.data(), n * 4, cudaMemcpyHostToDevice));
  }
  for (const std::string &name : names) {
    if (name == "cub") {
      size_t tb = 0, tb2 = 0;
      cub::DeviceScan::ExclusiveSum(nullptr, tb, din, dout, (int64_t)n);
      cub::DeviceSelect::If(nullptr, tb2, fin, fout, cub_count, (int64_t)n, positive());
      void *tmp;
      CK(cudaMalloc(&tmp, std::max(tb, tb2)));
      CK(cub::DeviceScan::ExclusiveSum(tmp, tb, din, dout, (int64_t)n));
      CK(cub::DeviceSelect::If(tmp, tb2, fin, fout, cub_count, (int64_t)n, positive()));
      CK(cudaDeviceSynchronize());
      cudaFree(tmp);
      continue;
    }
    for (const probe_variant &v : variants())
      if (name == v.name) {
        v.scan(ctx, PP_SUM, PP_U32, din, dout, n, false);
        v.select(ctx, PP_F32, fin, n, PP_GT, &zero, fout, dcount);
        CK(cudaDeviceSynchronize());
      }
  }
  cudaFree(din); cudaFree(dout); cudaFree(fin); cudaFree(fout);
  cudaFree(dcount); cudaFree(cub_count);
  return 0;
}

int main(int argc, char **argv) {
  const std::string mode = argc > 1 ? argv[1] : "time";
  pp_context *ctx;
  if (pp_create(&ctx, PP_BACKEND_CUDA) != PP_OK) return 77;
  pp_set_stream(ctx, 0);
  int bad = 0;
  if (mode == "small") {
    bool race = argc > 2 && strcmp(argv[2], "race") == 0;
    std::vector<std::string> names(argv + 2 + race, argv + argc);
    bad = run_small(ctx, race, names);
  } else if (mode == "prof" && argc > 3) {
    bad = run_prof(ctx, atoi(argv[2]), std::vector<std::string>(argv + 3, argv + argc));
  } else {
    std::vector<int> logs;
    for (int i = 2; i < argc; i++) logs.push_back(atoi(argv[i]));
    if (logs.empty()) logs = {24, 28};
    bad = run_time(ctx, logs);
  }
  pp_destroy(ctx);
  printf(bad ? "PROBE FAILED\n" : "probe ok\n");
  return bad ? 1 : 0;
}
#endif
