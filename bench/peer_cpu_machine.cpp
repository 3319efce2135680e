/*
 * peer_cpu_machine.cpp — the FP32 peak beside the CPU backend's compute-bound rows
 * (N-body, SGEMM): what the cores could do if every cycle issued full-width FMAs.
 *
 *   peak = threads x clock x lanes x pipes x 2 flops per FMA
 *
 * clock: the highest frequency the kernel reports (cpufreq's cpuinfo_max_freq), else the
 * "cpu MHz" of /proc/cpuinfo (what a virtual machine shows: its nominal clock); lanes: 8
 * FP32 lanes with AVX2 + FMA, 16 with AVX-512 on Intel cores (AMD's Zen 4 runs AVX-512 on
 * its 256-bit units, so 8 there), 4 otherwise (SSE, NEON); pipes: 2 FMA units per core,
 * as on Intel's cores since Haswell (server parts since Skylake-SP for AVX-512) and AMD's
 * since Zen 2 (Agner Fog, "The microarchitecture of Intel, AMD and VIA CPUs"). Threads
 * count as cores: the bench runs one OpenMP thread per core. C++ only to sit beside the
 * other peers; the interface is C (gpu.h).
 */
#include "gpu.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

/* MHz from cpufreq, else from /proc/cpuinfo; 0 when neither says. *source names it. */
double clock_mhz(const char **source) {
  if (FILE *f = std::fopen("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "r")) {
    double khz = 0;
    int got = std::fscanf(f, "%lf", &khz);
    std::fclose(f);
    if (got == 1 && khz > 0) {
      *source = "cpufreq maximum";
      return khz / 1000.0;
    }
  }
  double mhz = 0;
  if (FILE *f = std::fopen("/proc/cpuinfo", "r")) {
    char line[512];
    while (std::fgets(line, sizeof line, f))
      if (std::strncmp(line, "cpu MHz", 7) == 0) {
        const char *colon = std::strchr(line, ':');
        if (colon) mhz = std::atof(colon + 1);
        break;
      }
    std::fclose(f);
  }
  *source = "/proc/cpuinfo cpu MHz";
  return mhz;
}

int fp32_lanes(const char **isa) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_is("intel")) {
    *isa = "AVX-512";
    return 16;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    *isa = "AVX2+FMA";
    return 8;
  }
  *isa = "SSE";
  return 4;
#else
  *isa = "128-bit SIMD";
  return 4;
#endif
}

} // namespace

extern "C" double bench_cpu_fp32_peak_gflops(int threads, char *how, size_t how_len) {
  const char *source = "", *isa = "";
  double mhz = clock_mhz(&source);
  int lanes = fp32_lanes(&isa);
  const int pipes = 2;
  double peak = (double)threads * mhz / 1000.0 * lanes * pipes * 2.0;
  if (how && how_len)
    std::snprintf(how, how_len, "%d threads x %.3f GHz (%s) x %d lanes (%s) x %d FMA pipes x 2",
                  threads, mhz / 1000.0, source, lanes, isa, pipes);
  return mhz > 0 ? peak : 0.0;
}
