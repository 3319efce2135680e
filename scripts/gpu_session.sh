#!/bin/bash
# One batched GPU-machine session: build, the whole ctest suite, benches, sanitizers.
# Usage (on the device): scripts/gpu_session.sh "bench prims" "sanitize targets" [large]
# Logs go to $OUT. Each step is bounded by `timeout` so one hang cannot eat the call.
set -u
OUT=${OUT:-/tmp/out}; B=/tmp/b
mkdir -p "$OUT"
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 ))s] $*"; }
stamp configure
cmake -S . -B $B -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release >"$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
stamp build
cmake --build $B -j16 >"$OUT/build.log" 2>&1 || { grep -E "error|Error" "$OUT/build.log" | head -40; exit 1; }
stamp ctest
(cd $B && timeout 300 ctest -LE large -j6 --output-on-failure >"$OUT/ctest.log" 2>&1)
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Skipped|\*\*\*" "$OUT/ctest.log" | head -40
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
for p in $1; do
  stamp "bench $p"
  timeout 120 $B/parprim bench $p >"$OUT/bench_$p.txt" 2>&1; echo "rc $?" >>"$OUT/bench_$p.txt"
  cat "$OUT/bench_$p.txt"
done
for s in ${2:-}; do
  stamp "memcheck $s"
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/$s cuda >"$OUT/memcheck_$s.txt" 2>&1
  echo "rc $?"; tail -4 "$OUT/memcheck_$s.txt"
done
if [ "${3:-}" = large ]; then
  stamp "ctest large"
  (cd $B && timeout 240 ctest -L large -R _cuda --output-on-failure >"$OUT/ctest_large.log" 2>&1)
  tail -8 "$OUT/ctest_large.log"
fi
stamp done
