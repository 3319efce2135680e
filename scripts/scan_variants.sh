#!/usr/bin/env bash
# Time scan/select/partition kernel shapes against CUB (scripts/scan_probe.cu) on the GPU
# machine: builds the library once, then swaps in src/cuda/scan.cu compiled per variant.
#   scripts/scan_variants.sh "name:-DPP_SCAN_VECS=8 -DPP_SELECT_VECS=4" ...
# then scripts/scan_variants_run.sh 20 24 28 runs each variant's probe.
set -euo pipefail
B=${B:-/tmp/pp-lib}
cmake -S . -B "$B" -DCMAKE_CUDA_ARCHITECTURES=90 -DPP_BUILD_TOOLS=OFF -DPP_BUILD_TESTS=OFF > /dev/null
cmake --build "$B" -j16 --target parprim_static > /dev/null
build_variant() {
  local name=$1 flags=$2 dir="/tmp/scanvar/$1"
  mkdir -p "$dir"
  nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude $flags -c src/cuda/scan.cu -o "$dir/scan.cu.o"
  cp "$B/libparprim.a" "$dir/lib.a"
  ar d "$dir/lib.a" scan.cu.o
  ar q "$dir/lib.a" "$dir/scan.cu.o"
  nvcc -O2 -std=c++17 -arch=sm_90 -Iinclude scripts/scan_probe.cu "$dir/lib.a" -Xcompiler -fopenmp \
    -o "$dir/probe"
}
for spec in "$@"; do
  build_variant "${spec%%:*}" "${spec#*:}" &
done
wait
