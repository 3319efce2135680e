/* sort_probe.cu — times compile-time variants of the CUDA radix sort (src/cuda/sort.cu)
 * and merge (src/cuda/merge.cu) against CUB in one process, and checks every result
 * against CUB's. Each variant is one translation unit (sort_probe_variant.cu) that
 * includes the library's source inside its own namespace with its own tuning macros and
 * registers itself here; scripts/sort_probe.sh builds them all and links this harness
 * against libparprim.so.
 *
 *   sort_probe [--n LOG2] [--reps R] [--what sort,hist,merge] [--kinds 0,1,2,3,4]
 *              [--variants a,b]
 * --reps 0: each sort runs once, untimed (for ncu: one run per kind and variant).
 * kinds: 0 u32 keys, 1 f32 keys (the bench's values k * 2^-23 - 1), 2 u64 keys,
 * 3 u32/u32 pairs, 4 u32 keys already sorted (0, 1, 2, ...). hist times the upfront histogram kernel alone (with its header memset).
 * merge: two sorted f32 halves of n. Rows: variant, median ms over R runs, CUB's median,
 * CUB / ours, and whether the output equals CUB's bit for bit.
 * msort (only when asked for): the merge and sample sorts of the MSORT variants, u32 and
 * f32 keys (--kinds 0,1), against cub::DeviceMergeSort::SortKeys, checked against its keys.
 */
#include "sort_probe.h"

#include <cub/cub.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      printf("CUDA %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__);           \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

std::vector<probe_variant> &probe_registry() {
  static std::vector<probe_variant> r;
  return r;
}
int probe_register(const probe_variant &v) {
  probe_registry().push_back(v);
  return 0;
}

static uint64_t __host__ __device__ splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* kind 0/3 u32 bits, 1 f32 in [-1, 1) on a 2^-23 grid, 2 u64 bits, 4 u32 sorted (the
 * index); values: the index */
__global__ void gen_keys(int kind, void *keys, uint32_t *vals, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const uint64_t h = splitmix(seed + i);
    if (kind == 2)
      ((uint64_t *)keys)[i] = h;
    else if (kind == 4)
      ((uint32_t *)keys)[i] = (uint32_t)i;
    else if (kind == 1)
      ((float *)keys)[i] = (float)((double)(h >> 40) * 0x1p-23 - 1.0);
    else
      ((uint32_t *)keys)[i] = (uint32_t)(h >> 32);
    if (vals) vals[i] = (uint32_t)i;
  }
}

/* a sorted run: -1 + 2 (i + u_i) / count, non-decreasing in i */
__global__ void gen_sorted(float *out, size_t count, uint64_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
    const double u = (double)(splitmix(seed + i) >> 11) * 0x1p-53;
    out[i] = (float)(-1.0 + 2.0 * (((double)i + u) / (double)count));
  }
}

__global__ void count_diff(const uint32_t *a, const uint32_t *b, size_t words, unsigned long long *bad) {
  unsigned long long c = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x)
    c += a[i] != b[i];
  if (c) atomicAdd(bad, c);
}

static unsigned long long *g_bad;
static unsigned long long diff(const void *a, const void *b, size_t bytes) {
  CK(cudaMemset(g_bad, 0, sizeof *g_bad));
  count_diff<<<1024, 256>>>((const uint32_t *)a, (const uint32_t *)b, bytes / 4, g_bad);
  unsigned long long h = 0;
  CK(cudaMemcpy(&h, g_bad, sizeof h, cudaMemcpyDeviceToHost));
  return h;
}

static cudaStream_t g_stream;

/* median of reps timed calls of run(), each after prep() (untimed) */
template <typename Prep, typename Run>
static double time_ms(int reps, Prep prep, Run run) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int i = 0; i < (reps > 0 ? reps + 1 : 1); i++) {
    prep();
    CK(cudaEventRecord(a, g_stream));
    run();
    CK(cudaEventRecord(b, g_stream));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    if (i > 0) t.push_back(ms); /* the first run is a warm-up */
  }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  if (t.empty()) return 0.0; /* reps 0: one untimed run (e.g. under a profiler) */
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

static std::vector<std::string> split(const char *s) {
  std::vector<std::string> out;
  std::string cur;
  for (; *s; s++) {
    if (*s == ',') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += *s;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}
static bool listed(const std::vector<std::string> &l, const std::string &x) {
  return l.empty() || std::find(l.begin(), l.end(), x) != l.end();
}

static const char *kind_name[5] = {"u32", "f32", "u64", "u32/u32", "u32 sort"};

template <typename K>
static cudaError_t cub_sort(void *temp, size_t &bytes, K *k0, K *k1, uint32_t *v0, uint32_t *v1,
                            size_t n, int *sel) {
  cub::DoubleBuffer<K> dk(k0, k1);
  cudaError_t e;
  if (v0) {
    cub::DoubleBuffer<uint32_t> dv(v0, v1);
    e = cub::DeviceRadixSort::SortPairs(temp, bytes, dk, dv, (int)n, 0, (int)sizeof(K) * 8, g_stream);
  } else {
    e = cub::DeviceRadixSort::SortKeys(temp, bytes, dk, (int)n, 0, (int)sizeof(K) * 8, g_stream);
  }
  if (sel) *sel = dk.selector;
  return e;
}

static cudaError_t cub_sort_kind(int kind, void *temp, size_t &bytes, void *k0, void *k1, uint32_t *v0,
                                 uint32_t *v1, size_t n, int *sel) {
  if (kind == 0 || kind == 3 || kind == 4) return cub_sort<uint32_t>(temp, bytes, (uint32_t *)k0, (uint32_t *)k1, v0, v1, n, sel);
  if (kind == 1) return cub_sort<float>(temp, bytes, (float *)k0, (float *)k1, v0, v1, n, sel);
  return cub_sort<uint64_t>(temp, bytes, (uint64_t *)k0, (uint64_t *)k1, v0, v1, n, sel);
}

int main(int argc, char **argv) {
  int lg = 28, reps = 10;
  std::vector<std::string> what = {"sort", "hist", "merge"}, kinds, variants;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--n") && i + 1 < argc) lg = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--what") && i + 1 < argc) what = split(argv[++i]);
    else if (!strcmp(argv[i], "--kinds") && i + 1 < argc) kinds = split(argv[++i]);
    else if (!strcmp(argv[i], "--variants") && i + 1 < argc) variants = split(argv[++i]);
    else {
      printf("unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  const size_t n = (size_t)1 << lg;
  pp_context *ctx;
  if (pp_create(&ctx, PP_BACKEND_CUDA) != PP_OK) return 77;
  CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  pp_set_stream(ctx, g_stream);
  CK(cudaMalloc(&g_bad, sizeof *g_bad));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("sort_probe on %s, n = 2^%d, median of %d\n", prop.name, lg, reps);
  int failures = 0;

  for (int kind = 0; kind < 5; kind++) {
    if (!listed(kinds, std::to_string(kind))) continue;
    const bool sort_on = listed(what, "sort"), hist_on = listed(what, "hist");
    if (!sort_on && !hist_on) break;
    const size_t ks = kind == 2 ? 8 : 4;
    const bool pairs = kind == 3;
    void *src, *work, *c0, *c1, *ref;
    uint32_t *vsrc = nullptr, *vwork = nullptr, *cv0 = nullptr, *cv1 = nullptr, *vref = nullptr;
    CK(cudaMalloc(&src, n * ks));
    CK(cudaMalloc(&work, n * ks));
    CK(cudaMalloc(&c0, n * ks));
    CK(cudaMalloc(&c1, n * ks));
    CK(cudaMalloc(&ref, n * ks));
    if (pairs) {
      CK(cudaMalloc(&vsrc, n * 4));
      CK(cudaMalloc(&vwork, n * 4));
      CK(cudaMalloc(&cv0, n * 4));
      CK(cudaMalloc(&cv1, n * 4));
      CK(cudaMalloc(&vref, n * 4));
    }
    gen_keys<<<4096, 256, 0, g_stream>>>(kind, src, vsrc, n, 0x5eed0000ull + (uint64_t)kind);
    CK(cudaStreamSynchronize(g_stream));

    /* CUB: its result is the reference */
    size_t tbytes = 0;
    CK(cub_sort_kind(kind, nullptr, tbytes, c0, c1, cv0, cv1, n, nullptr));
    void *temp;
    CK(cudaMalloc(&temp, tbytes));
    int sel = 0;
    auto cub_prep = [&] {
      CK(cudaMemcpyAsync(c0, src, n * ks, cudaMemcpyDeviceToDevice, g_stream));
      if (pairs) CK(cudaMemcpyAsync(cv0, vsrc, n * 4, cudaMemcpyDeviceToDevice, g_stream));
    };
    auto cub_run = [&] {
      size_t b = tbytes;
      CK(cub_sort_kind(kind, temp, b, c0, c1, cv0, cv1, n, &sel));
    };
    const double cub_ms = time_ms(reps, cub_prep, cub_run);
    CK(cudaStreamSynchronize(g_stream));
    CK(cudaMemcpy(ref, sel ? c1 : c0, n * ks, cudaMemcpyDeviceToDevice));
    if (pairs) CK(cudaMemcpy(vref, sel ? cv1 : cv0, n * 4, cudaMemcpyDeviceToDevice));
    printf("sort  %-8s %-14s %9.4f ms\n", kind_name[kind], "CUB", cub_ms);
    for (const probe_variant &v : probe_registry()) {
      if (!v.sort || !listed(variants, v.name)) continue;
      if (sort_on) {
        auto prep = [&] {
          CK(cudaMemcpyAsync(work, src, n * ks, cudaMemcpyDeviceToDevice, g_stream));
          if (pairs) CK(cudaMemcpyAsync(vwork, vsrc, n * 4, cudaMemcpyDeviceToDevice, g_stream));
        };
        pp_status st = PP_OK;
        auto run = [&] {
          pp_status s = v.sort(ctx, kind, work, vwork, n);
          if (s != PP_OK) st = s;
        };
        const double ms = time_ms(reps, prep, run);
        CK(cudaStreamSynchronize(g_stream));
        const unsigned long long bad = st != PP_OK ? ~0ull : diff(work, ref, n * ks) + (pairs ? diff(vwork, vref, n * 4) : 0);
        failures += bad != 0;
        printf("sort  %-8s %-14s %9.4f ms  CUB %9.4f  ratio %6.3f  %s\n", kind_name[kind], v.name, ms,
               cub_ms, cub_ms / ms, bad ? "MISMATCH" : "ok");
      }
      if (hist_on && v.hist) {
        const double ms = time_ms(reps, [] {}, [&] { v.hist(ctx, kind, src, n); });
        CK(cudaStreamSynchronize(g_stream));
        printf("hist  %-8s %-14s %9.4f ms\n", kind_name[kind], v.name, ms);
      }
    }
    CK(cudaFree(temp));
    CK(cudaFree(src));
    CK(cudaFree(work));
    CK(cudaFree(c0));
    CK(cudaFree(c1));
    CK(cudaFree(ref));
    if (pairs) {
      CK(cudaFree(vsrc));
      CK(cudaFree(vwork));
      CK(cudaFree(cv0));
      CK(cudaFree(cv1));
      CK(cudaFree(vref));
    }
  }

  if (listed(what, "merge")) {
    const size_t na = n / 2, nb = n - na;
    float *in, *out, *ref;
    CK(cudaMalloc(&in, n * 4));
    CK(cudaMalloc(&out, n * 4));
    CK(cudaMalloc(&ref, n * 4));
    gen_sorted<<<4096, 256, 0, g_stream>>>(in, na, 0x3e3e1ull);
    gen_sorted<<<4096, 256, 0, g_stream>>>(in + na, nb, 0x3e3e2ull);
    size_t tbytes = 0;
    CK(cub::DeviceMerge::MergeKeys(nullptr, tbytes, in, (int64_t)na, in + na, (int64_t)nb, ref,
                                   ::cuda::std::less<>{}, g_stream));
    void *temp;
    CK(cudaMalloc(&temp, tbytes));
    const double cub_ms = time_ms(reps, [] {}, [&] {
      size_t b = tbytes;
      CK(cub::DeviceMerge::MergeKeys(temp, b, in, (int64_t)na, in + na, (int64_t)nb, ref,
                                     ::cuda::std::less<>{}, g_stream));
    });
    CK(cudaStreamSynchronize(g_stream));
    printf("merge f32      %-14s %9.4f ms\n", "CUB", cub_ms);
    for (const probe_variant &v : probe_registry()) {
      if (!v.merge || !listed(variants, v.name)) continue;
      CK(cudaMemset(out, 0, n * 4));
      pp_status st = PP_OK;
      const double ms = time_ms(reps, [] {}, [&] {
        pp_status s = v.merge(ctx, in, na, in + na, nb, out);
        if (s != PP_OK) st = s;
      });
      CK(cudaStreamSynchronize(g_stream));
      const unsigned long long bad = st != PP_OK ? ~0ull : diff(out, ref, n * 4);
      failures += bad != 0;
      printf("merge f32      %-14s %9.4f ms  CUB %9.4f  ratio %6.3f  %s\n", v.name, ms, cub_ms,
             cub_ms / ms, bad ? "MISMATCH" : "ok");
    }
    CK(cudaFree(temp));
    CK(cudaFree(in));
    CK(cudaFree(out));
    CK(cudaFree(ref));
  }
  if (std::find(what.begin(), what.end(), "msort") != what.end()) {
    uint32_t *src, *work, *ref;
    CK(cudaMalloc(&src, n * 4));
    CK(cudaMalloc(&work, n * 4));
    CK(cudaMalloc(&ref, n * 4));
    size_t tbytes = 0;
    CK(cub::DeviceMergeSort::SortKeys(nullptr, tbytes, (float *)ref, (int64_t)n, ::cuda::std::less<>{}, g_stream));
    size_t tb2 = 0;
    CK(cub::DeviceMergeSort::SortKeys(nullptr, tb2, ref, (int64_t)n, ::cuda::std::less<>{}, g_stream));
    tbytes = std::max(tbytes, tb2);
    void *temp;
    CK(cudaMalloc(&temp, tbytes));
    for (int kind = 0; kind < 2; kind++) {
      if (!listed(kinds, std::to_string(kind))) continue;
      gen_keys<<<4096, 256, 0, g_stream>>>(kind, src, nullptr, n, 0x5eed0000ull + (uint64_t)kind);
      auto prep = [&] { CK(cudaMemcpyAsync(work, src, n * 4, cudaMemcpyDeviceToDevice, g_stream)); };
      const double cub_ms = time_ms(reps, [&] { CK(cudaMemcpyAsync(ref, src, n * 4, cudaMemcpyDeviceToDevice, g_stream)); },
                                    [&] {
                                      size_t b = tbytes;
                                      if (kind == 1)
                                        CK(cub::DeviceMergeSort::SortKeys(temp, b, (float *)ref, (int64_t)n,
                                                                          ::cuda::std::less<>{}, g_stream));
                                      else
                                        CK(cub::DeviceMergeSort::SortKeys(temp, b, ref, (int64_t)n,
                                                                          ::cuda::std::less<>{}, g_stream));
                                    });
      CK(cudaStreamSynchronize(g_stream));
      printf("msort %-8s %-14s %9.4f ms\n", kind_name[kind], "CUB", cub_ms);
      for (int algo = 0; algo < 2; algo++) {
        for (const probe_variant &v : probe_registry()) {
          if (!v.msort || !listed(variants, v.name)) continue;
          pp_status st = PP_OK;
          const double ms = time_ms(reps, prep, [&] {
            pp_status s2 = v.msort(ctx, algo, kind, work, n);
            if (s2 != PP_OK) st = s2;
          });
          CK(cudaStreamSynchronize(g_stream));
          const unsigned long long bad = st != PP_OK ? ~0ull : diff(work, ref, n * 4);
          failures += bad != 0;
          printf("%-6s %-7s %-14s %9.4f ms  CUB %9.4f  ratio %6.3f  %s\n", algo ? "sample" : "merge",
                 kind_name[kind], v.name, ms, cub_ms, cub_ms / ms, bad ? "MISMATCH" : "ok");
        }
      }
    }
    CK(cudaFree(temp));
    CK(cudaFree(src));
    CK(cudaFree(work));
    CK(cudaFree(ref));
  }
  pp_destroy(ctx);
  printf("%d mismatches\n", failures);
  return failures ? 1 : 0;
}
