#!/usr/bin/env bash
# Contiguous mapping at unroll 4 vs 8, each type at 2^28, two runs each to show the noise.
set -uo pipefail
OUT=${OUT:-/tmp/pp-out}; mkdir -p "$OUT"
for u in 4 8; do
  ( cmake -S . -B /tmp/u$u -DCMAKE_CUDA_ARCHITECTURES=90 -DPP_BUILD_TESTS=OFF \
      "-DCMAKE_CUDA_FLAGS=-DPP_REDUCE_UNROLL=$u" > /tmp/u$u.cfg 2>&1 &&
    cmake --build /tmp/u$u -j8 > /tmp/u$u.log 2>&1 || { echo "build u$u failed"; tail -n 15 /tmp/u$u.log; } ) &
done
wait
for rep in 1 2; do for u in 4 8; do for t in f32 i32 f64 u64 u8; do
  /tmp/u$u/parprim bench reduce --n 2^24 --n 2^28 --dtype $t --csv 2>/dev/null | grep -v ^primitive | sed "s/^/u$u,rep$rep,/"
done; done; done | tee "$OUT/unroll.csv" | cut -d, -f1,2,5,6,17
