/* cpu_peak.c — the core clock and the FP32 FMA issue rate of this CPU, measured, so that
 * a "share of the FP32 peak" can be read against what the cores actually do rather than
 * a nominal clock and an assumed number of FMA pipes (a VM hides the CPU model).
 *
 *   cc -O2 -mavx2 -mfma -pthread -o cpu_peak scripts/probes/cpu_peak.c && ./cpu_peak [threads]
 *
 * Clock: a chain of dependent integer adds retires one add per cycle on every x86 core of
 * the last twenty years (Agner Fog's instruction tables), so adds per second is cycles per
 * second. FMA rate: 16 independent chains of 512-bit FMAs (12 of 256-bit), enough to cover a
 * 4-cycle latency on two pipes; FMAs per cycle is the pipes the core really has for that
 * width. Each thread measures both, all threads at once (the clock under an all-core load).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <string.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

typedef struct {
  double ghz, fma512_per_cycle, fma256_per_cycle, imul_hz;
  pthread_barrier_t *bar;
  int cpu;            /* vCPU to pin to, -1: none */
  double *phase_wall; /* thread 0 writes the concurrent phase's wall time here */
} job;

/* Dependent register-register adds: one cycle each. (An add of an immediate is no clock:
 * newer Intel cores fold chains of them at rename, several a cycle.) Dependent imuls, three
 * cycles each on Intel and AMD cores alike, check it. */
static double adds_per_second(long iters) {
  unsigned long x = 0, one = 1;
  double t0 = now();
  for (long i = 0; i < iters; i++)
    __asm__ volatile("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                     "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
                     : "+r"(x)
                     : "r"(one));
  return 8.0 * iters / (now() - t0);
}

static double imul_cycles_per_second(long iters) {
  unsigned long x = 3, m = 5;
  double t0 = now();
  for (long i = 0; i < iters; i++)
    __asm__ volatile("imul %1, %0\n\timul %1, %0\n\timul %1, %0\n\timul %1, %0" : "+r"(x) : "r"(m));
  return 12.0 * iters / (now() - t0);
}

/* The FMA loops are written in assembly, so that the chains stay in registers (a C array of
 * vectors was kept in memory, one store per FMA). 512-bit: 16 chains in zmm0-15, constants
 * in zmm30/31. 256-bit: 12 chains in ymm0-11, constants in ymm14/15 (AVX2 has 16). Values
 * converge to c / (1 - m), so nothing overflows or turns denormal. */
static const float fm = 0.999999f, fc = 1e-7f;

/* The loop's text: broadcast m and c into registers M and C of width W ("zmm"/"ymm"),
 * start every chain at m, then n rounds of one FMA per chain. */
#define FMA_OP(W, M, C, K) "vfmadd213ps %%" W C ", %%" W M ", %%" W #K "\n\t"
#define MOV_OP(W, M, C, K) "vmovaps %%" W M ", %%" W #K "\n\t"
#define OPS4(OP, W, M, C, a, b, c, d) OP(W, M, C, a) OP(W, M, C, b) OP(W, M, C, c) OP(W, M, C, d)
#define OPS12(OP, W, M, C) \
  OPS4(OP, W, M, C, 0, 1, 2, 3) OPS4(OP, W, M, C, 4, 5, 6, 7) OPS4(OP, W, M, C, 8, 9, 10, 11)
#define OPS16(OP, W, M, C) OPS12(OP, W, M, C) OPS4(OP, W, M, C, 12, 13, 14, 15)
#define FMA_LOOP_ASM(W, M, C, OPS)                                                           \
  "vbroadcastss %[m], %%" W M "\n\tvbroadcastss %[c], %%" W C "\n\t" OPS(MOV_OP, W, M, C)  \
  "1:\n\t" OPS(FMA_OP, W, M, C) "dec %[n]\n\tjnz 1b\n\tvzeroupper"
#define CHAIN_REGS "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", \
                   "xmm9", "xmm10", "xmm11"

__attribute__((target("avx512f"))) static void fma512_loop(long n) {
  __asm__ volatile(FMA_LOOP_ASM("zmm", "30", "31", OPS16) : [n] "+r"(n) : [m] "m"(fm), [c] "m"(fc)
                   : CHAIN_REGS, "xmm12", "xmm13", "xmm14", "xmm15", "xmm30", "xmm31", "cc");
}

static void fma256_loop(long n) {
  __asm__ volatile(FMA_LOOP_ASM("ymm", "14", "15", OPS12) : [n] "+r"(n) : [m] "m"(fm), [c] "m"(fc)
                   : CHAIN_REGS, "xmm14", "xmm15", "cc");
}

/* FMAs per second: 16 chains of 512-bit ones, or 12 of 256-bit ones */
static double fma_per_second(int wide, long iters) {
  double t0 = now();
  if (wide)
    fma512_loop(iters);
  else
    fma256_loop(iters);
  return (wide ? 16.0 : 12.0) * iters / (now() - t0);
}

static void *run(void *p) {
  job *j = p;
  if (j->cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(j->cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  }
  /* all threads' 512-bit FMA loops at once, between two barriers: the rate the cores give
     together (vCPUs that share a physical core's FMA pipes show here, not alone) */
  const int has512 = __builtin_cpu_supports("avx512f");
  for (int r = 0; r < 2; r++) {
    pthread_barrier_wait(j->bar);
    double t0 = now();
    if (has512) fma_per_second(1, 20000000); else fma_per_second(0, 20000000);
    pthread_barrier_wait(j->bar);
    if (j->phase_wall && (r == 0 || now() - t0 < *j->phase_wall)) *j->phase_wall = now() - t0;
  }
  pthread_barrier_wait(j->bar);
  double best_hz = 0, best512 = 0, best256 = 0;
  for (int r = 0; r < 3; r++) { /* interleaved, so the clock is read under the FMA load's licence too; the best of each (least disturbed) */
    double hz = adds_per_second(100000000);
    double f5 = __builtin_cpu_supports("avx512f") ? fma_per_second(1, 20000000) : 0.0;
    double f2 = fma_per_second(0, 20000000);
    double hz2 = adds_per_second(100000000);
    if (hz2 > hz) hz = hz2;
    double hz3 = imul_cycles_per_second(30000000);
    if (hz3 > j->imul_hz) j->imul_hz = hz3;
    best_hz = hz > best_hz ? hz : best_hz;
    best512 = f5 > best512 ? f5 : best512;
    best256 = f2 > best256 ? f2 : best256;
  }
  j->ghz = best_hz / 1e9;
  j->fma512_per_cycle = best512 / best_hz;
  j->fma256_per_cycle = best256 / best_hz;
  return NULL;
}

int main(int argc, char **argv) {
  int nt = argc > 1 ? atoi(argv[1]) : 1;
  /* argv[2]: optional comma list of vCPUs to pin the threads to, in order */
  int cpus[256];
  int ncpus = 0;
  if (argc > 2) {
    char *list = strdup(argv[2]);
    for (char *t = strtok(list, ","); t && ncpus < 256; t = strtok(NULL, ",")) cpus[ncpus++] = atoi(t);
    free(list);
  }
  double phase = 0;
  if (nt < 1) nt = 1;
  pthread_t *th = calloc((size_t)nt, sizeof *th);
  job *jobs = calloc((size_t)nt, sizeof *jobs);
  pthread_barrier_t bar;
  pthread_barrier_init(&bar, NULL, (unsigned)nt);
  for (int i = 0; i < nt; i++) {
    jobs[i].bar = &bar;
    jobs[i].cpu = i < ncpus ? cpus[i] : -1;
    jobs[i].phase_wall = i == 0 ? &phase : NULL;
    pthread_create(&th[i], NULL, run, &jobs[i]);
  }
  double ghz = 0, f5 = 0, f2 = 0, ighz = 0;
  for (int i = 0; i < nt; i++) {
    pthread_join(th[i], NULL);
    ghz += jobs[i].ghz / nt;
    f5 += jobs[i].fma512_per_cycle / nt;
    f2 += jobs[i].fma256_per_cycle / nt;
    ighz += jobs[i].imul_hz / 1e9 / nt;
  }
  printf("%d threads: clock %.3f GHz (dependent adds; %.3f GHz from dependent imuls at 3 cycles), "
         "512-bit FMAs per cycle %.2f, 256-bit FMAs per cycle %.2f\n",
         nt, ghz, ighz, f5, f2);
  const int lanes = f5 > 0 ? 16 : 8;
  const double together = (double)nt * 20000000.0 * (lanes == 16 ? 16 : 12) / phase; /* FMAs/s */
  printf("%d threads%s%s: all at once %.0f GFLOP/s = %.2f FMAs per cycle per thread at the clock above\n", nt,
         argc > 2 ? " on vCPUs " : "", argc > 2 ? argv[2] : "", together * lanes * 2 / 1e9, together / nt / (ghz * 1e9));
  if (f5 > 0)
    printf("FP32 peak from these: %.0f GFLOP/s (threads x clock x 16 lanes x 2 flops x 512-bit FMAs/cycle)\n",
           nt * ghz * 16 * 2 * f5);
  else
    printf("FP32 peak from these: %.0f GFLOP/s (threads x clock x 8 lanes x 2 flops x 256-bit FMAs/cycle)\n",
           nt * ghz * 8 * 2 * f2);
  return 0;
}
