/*
 * nccl_a2a_probe.cu — what limits an all-to-all of large blocks between the GPUs of one node
 * through NCCL's grouped ncclSend / ncclRecv (NCCL user guide, "Point-to-point
 * communication: All-to-all"), the exchange at the heart of the distributed sort.
 *
 * One process drives every visible GPU (one communicator per GPU, made in one group). Each
 * GPU sends n/p 4-byte words to every GPU, itself included, and the variants change one
 * thing at a time:
 *   default      the communicator's defaults, buffers from cudaMalloc, the block for this
 *                GPU itself sent through NCCL too
 *   self-copy    the own block by cudaMemcpyAsync on the same stream, NCCL for the others
 *   ctas N       ncclConfig_t minCTAs = maxCTAs = N (more or fewer channels)
 *   pool         buffers from a stream-ordered pool (cudaMallocAsync), as parprim's scratch
 *   registered   buffers from ncclMemAlloc, registered with ncclCommRegister
 *   skew         blocks that start 4 bytes past a 16-byte boundary on the sending side,
 *                the receiving side or both (a sort's split points fall anywhere)
 *   3 parts      such blocks cut at their 16-byte boundaries, the aligned middles sent on
 *                their own: in one group with the heads and tails, or in a group before them
 * Prints, per variant, the median over the runs of the slowest GPU's time and the bytes that
 * leave each GPU per second.
 *
 * Build: nvcc -O2 -std=c++17 -o nccl_a2a_probe scripts/nccl_a2a_probe.cu -lnccl
 * Run:   NCCL_NVLS_ENABLE=0 ./nccl_a2a_probe [log2 words per GPU, default 30] [runs, default 5]
 */
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

/* Stops the probe at the first failed CUDA or NCCL call, naming it. */
static void check(bool ok, const char *call, const char *why, int line) {
  if (ok) return;
  fprintf(stderr, "%s:%d %s: %s\n", __FILE__, line, call, why);
  exit(1);
}
static const char *why_of(cudaError_t e) { return cudaGetErrorString(e); }
static const char *why_of(ncclResult_t r) { return ncclGetErrorString(r); }
static bool ok_of(cudaError_t e) { return e == cudaSuccess; }
static bool ok_of(ncclResult_t r) { return r == ncclSuccess; }
#define CK(x)                                                                                  \
  do {                                                                                         \
    auto r_ = (x);                                                                             \
    check(ok_of(r_), #x, why_of(r_), __LINE__);                                                \
  } while (0)
#define NK(x) CK(x)

enum alloc_kind { ALLOC_MALLOC, ALLOC_POOL, ALLOC_NCCL };

struct variant {
  const char *name;
  int ctas;       /* 0: NCCL's default */
  bool self_copy; /* the own block by cudaMemcpyAsync */
  alloc_kind alloc;
  size_t send_skew, recv_skew; /* words added to every block's start (misalignment) */
  int split;                   /* 1: each block as head, aligned middle, tail in one group;
                                  2: the middles in one group, heads and tails in a second */
};

/* A block of `bytes` at p: the bytes before p's first 16-byte boundary, the aligned middle,
 * the rest (as src/dist/comm_nccl.c cuts them). */
static void cut3(const void *p, size_t bytes, size_t part[3]) {
  size_t head = (size_t)((16 - ((uintptr_t)p & 15)) & 15);
  head = head < bytes ? head : bytes;
  part[0] = head;
  part[1] = (bytes - head) & ~(size_t)15;
  part[2] = bytes - head - part[1];
}

/* Posts the parts `which` (bit i: part i) of block q of GPU g, both directions. */
static void post_parts(ncclComm_t comm, cudaStream_t st, const unsigned *send, unsigned *recv,
                       size_t bytes, int q, unsigned which) {
  size_t sp[3], rp[3], sat = 0, rat = 0;
  cut3(send, bytes, sp);
  cut3(recv, bytes, rp);
  for (int i = 0; i < 3; sat += sp[i], rat += rp[i], i++) {
    if (!(which & (1u << i))) continue;
    if (sp[i]) NK(ncclSend((const char *)send + sat, sp[i], ncclChar, q, comm, st));
    if (rp[i]) NK(ncclRecv((char *)recv + rat, rp[i], ncclChar, q, comm, st));
  }
}

static double run_variant(const variant &v, int p, size_t n, int runs) {
  std::vector<ncclComm_t> comm(p);
  std::vector<cudaStream_t> st(p);
  std::vector<unsigned *> send(p), recv(p);
  std::vector<void *> hs(p, nullptr), hr(p, nullptr);
  std::vector<cudaEvent_t> e0(p), e1(p);
  ncclUniqueId id;
  NK(ncclGetUniqueId(&id));
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  if (v.ctas) cfg.minCTAs = cfg.maxCTAs = v.ctas;
  NK(ncclGroupStart());
  for (int g = 0; g < p; g++) {
    CK(cudaSetDevice(g));
    NK(ncclCommInitRankConfig(&comm[g], p, id, g, &cfg));
  }
  NK(ncclGroupEnd());
  const size_t bytes = n * sizeof(unsigned), chunk = n / (size_t)p;
  for (int g = 0; g < p; g++) {
    CK(cudaSetDevice(g));
    CK(cudaStreamCreateWithFlags(&st[g], cudaStreamNonBlocking));
    CK(cudaEventCreate(&e0[g]));
    CK(cudaEventCreate(&e1[g]));
    if (v.alloc == ALLOC_MALLOC) {
      CK(cudaMalloc(&send[g], bytes + 64));
      CK(cudaMalloc(&recv[g], bytes + 64));
    } else if (v.alloc == ALLOC_POOL) {
      CK(cudaMallocAsync((void **)&send[g], bytes + 64, st[g]));
      CK(cudaMallocAsync((void **)&recv[g], bytes + 64, st[g]));
    } else {
      NK(ncclMemAlloc((void **)&send[g], bytes));
      NK(ncclMemAlloc((void **)&recv[g], bytes));
      NK(ncclCommRegister(comm[g], send[g], bytes, &hs[g]));
      NK(ncclCommRegister(comm[g], recv[g], bytes, &hr[g]));
    }
    CK(cudaMemsetAsync(send[g], g, bytes, st[g]));
    CK(cudaStreamSynchronize(st[g]));
  }
  std::vector<double> times;
  for (int run = -1; run < runs; run++) {
    for (int g = 0; g < p; g++) {
      CK(cudaSetDevice(g));
      CK(cudaStreamSynchronize(st[g]));
    }
    for (int g = 0; g < p; g++) {
      CK(cudaSetDevice(g));
      CK(cudaEventRecord(e0[g], st[g]));
      if (v.self_copy)
        CK(cudaMemcpyAsync(recv[g] + (size_t)g * chunk + v.recv_skew, send[g] + (size_t)g * chunk + v.send_skew,
                           chunk * sizeof(unsigned), cudaMemcpyDeviceToDevice, st[g]));
    }
    for (int round = 0; round < (v.split == 2 ? 2 : 1); round++) {
      NK(ncclGroupStart());
      for (int g = 0; g < p; g++) {
        for (int q = 0; q < p; q++) {
          if (v.self_copy && q == g) continue;
          const unsigned *sb = send[g] + (size_t)q * chunk + v.send_skew;
          unsigned *rb = recv[g] + (size_t)q * chunk + v.recv_skew;
          if (v.split) {
            post_parts(comm[g], st[g], sb, rb, chunk * sizeof(unsigned), q,
                       v.split == 1 ? 7u : round == 0 ? 2u : 5u);
          } else {
            NK(ncclSend(sb, chunk, ncclUint32, q, comm[g], st[g]));
            NK(ncclRecv(rb, chunk, ncclUint32, q, comm[g], st[g]));
          }
        }
      }
      NK(ncclGroupEnd());
    }
    double worst = 0;
    for (int g = 0; g < p; g++) {
      CK(cudaSetDevice(g));
      CK(cudaEventRecord(e1[g], st[g]));
      CK(cudaEventSynchronize(e1[g]));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, e0[g], e1[g]));
      worst = std::max(worst, (double)ms);
    }
    if (run >= 0) times.push_back(worst);
  }
  for (int g = 0; g < p; g++) {
    CK(cudaSetDevice(g));
    if (v.alloc == ALLOC_NCCL) {
      NK(ncclCommDeregister(comm[g], hs[g]));
      NK(ncclCommDeregister(comm[g], hr[g]));
      NK(ncclMemFree(send[g]));
      NK(ncclMemFree(recv[g]));
    } else if (v.alloc == ALLOC_POOL) {
      CK(cudaFreeAsync(send[g], st[g]));
      CK(cudaFreeAsync(recv[g], st[g]));
      CK(cudaStreamSynchronize(st[g]));
    } else {
      CK(cudaFree(send[g]));
      CK(cudaFree(recv[g]));
    }
    NK(ncclCommDestroy(comm[g]));
    CK(cudaStreamDestroy(st[g]));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

int main(int argc, char **argv) {
  const int lg = argc > 1 ? atoi(argv[1]) : 30, runs = argc > 2 ? atoi(argv[2]) : 5;
  int p = 0;
  CK(cudaGetDeviceCount(&p));
  const size_t n = (size_t)1 << lg;
  const double out_gb = 4.0 * (double)(n / (size_t)p) * (double)(p - 1) / 1e9;
  const variant vs[] = {
      {"default", 0, false, ALLOC_MALLOC, 0, 0, 0},
      {"self-copy", 0, true, ALLOC_MALLOC, 0, 0, 0},
      {"ctas 32", 32, false, ALLOC_MALLOC, 0, 0, 0},
      {"pool", 0, false, ALLOC_POOL, 0, 0, 0},
      {"registered", 0, false, ALLOC_NCCL, 0, 0, 0},
      {"skew send +4 B", 0, false, ALLOC_MALLOC, 1, 0, 0},
      {"skew recv +4 B", 0, false, ALLOC_MALLOC, 0, 1, 0},
      {"skew both +4 B", 0, false, ALLOC_MALLOC, 1, 1, 0},
      {"skew both, 3 parts, 1 group", 0, false, ALLOC_MALLOC, 1, 1, 1},
      {"skew both, 3 parts, 2 groups", 0, false, ALLOC_MALLOC, 1, 1, 2},
      {"pool, skew both, 3 parts, 1 group", 0, false, ALLOC_POOL, 1, 1, 1},
  };
  int ver = 0;
  NK(ncclGetVersion(&ver));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("NCCL %d, %d x %s, 2^%d words per GPU, %.2f GB leave each GPU, median of %d\n", ver, p,
         prop.name, lg, out_gb, runs);
  for (const variant &v : vs) {
    const double ms = run_variant(v, p, n, runs);
    printf("%-24s %9.3f ms %8.1f GB/s out of each GPU\n", v.name, ms, out_gb / (ms / 1e3));
    fflush(stdout);
  }
  return 0;
}
