#!/usr/bin/env bash
# Time compile-time variants of the reduce kernel side by side on the GPU machine (one
# build per variant, built in parallel), each against CUB in its own process.
set -uo pipefail
OUT=${OUT:-/tmp/pp-out}; mkdir -p "$OUT"
declare -A V=(
  [base]=""
  [l2hint]="-DPP_REDUCE_LOAD=2"
  [contig_l2hint]="-DPP_REDUCE_CONTIGUOUS=1 -DPP_REDUCE_LOAD=2"
  [unroll8]="-DPP_REDUCE_UNROLL=8"
  [contig]="-DPP_REDUCE_CONTIGUOUS=1"
)
for name in "${!V[@]}"; do
  ( cmake -S . -B /tmp/v_$name -DCMAKE_CUDA_ARCHITECTURES=90 -DPP_BUILD_TESTS=OFF \
      "-DCMAKE_CUDA_FLAGS=${V[$name]}" > /tmp/v_$name.cfg 2>&1 &&
    cmake --build /tmp/v_$name -j3 > /tmp/v_$name.log 2>&1 || { echo "build $name failed"; tail -n 15 /tmp/v_$name.cfg /tmp/v_$name.log; } ) &
done
wait
for name in "${!V[@]}"; do
  for t in f32 i32 f64 u64 u8; do
    /tmp/v_$name/parprim bench reduce --n 2^20 --n 2^24 --n 2^28 --dtype $t --csv 2>&1 |
      sed "s/^/$name,/" >> "$OUT/variants.csv"
  done
done
grep -v "^[a-z_0-9]*,primitive" "$OUT/variants.csv" | sort -t, -k4,4 -k5,5n | head -200
