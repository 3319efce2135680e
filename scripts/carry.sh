#!/usr/bin/env bash
# Build here and pack what the GPU machine runs, so a device call spends no time compiling
# (a full build there takes minutes of scarce device time; here it costs nothing but waiting).
#   [CARRY=.carry] scripts/carry.sh [BUILD_DIR] [target ...]
# Builds BUILD_DIR (default build-gpu) with the tools and tests linked to the shared library,
# then packs the library, the programs and the ctest files as $CARRY/bd.tgz (ignored by git;
# compressed because the library and the parprim program together exceed the 64 MiB that
# the device tool's `carry` takes). On the GPU machine, scripts/device.sh (run with
# the same CARRY) finds $CARRY/bd and uses it instead of building: pass carry: ["$CARRY"].
set -euo pipefail
cd "$(dirname "$0")/.."
BD=${1:-build-gpu}; shift || true
C=${CARRY:-.carry}
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
            -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
cmake -S . -B "$BD" -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_BUILD_TYPE=Release -DPP_TOOLS_SHARED=ON "${launcher[@]}" > /dev/null
if [ $# -gt 0 ]; then
  for t in "$@"; do cmake --build "$BD" -j2 --target "$t"; done
else
  cmake --build "$BD" -j2
fi

rm -rf "$C" && mkdir -p "$C/bd"
cp -a "$BD"/libparprim.so* "$C/bd"/
for f in "$BD"/parprim "$BD"/test_* "$BD"/check-gpu.sh; do
  [ -x "$f" ] && [ -f "$f" ] && cp -a "$f" "$C/bd"/
done
cp "$BD"/CTestTestfile.cmake "$C/bd"/
[ -f "$BD"/check-gpu.list ] && cp "$BD"/check-gpu.list "$C/bd"/
realpath "$BD" > "$C/bd"/ORIGIN
realpath . > "$C/bd"/ORIGIN_REPO
origin=$(cat "$C/bd"/ORIGIN)
tar -C "$C" -czf "$C/bd.tgz" bd && rm -rf "$C/bd"
echo "packed $(du -sh "$C" | cut -f1) into $C/bd.tgz (from $origin)"
# The shared libraries the command links beyond the C runtime (image and plot libraries,
# MPI), for a GPU machine that lacks them; scripts/gpu_env.sh uses only the missing ones.
mkdir -p "$C/libs"
ldd "$BD/parprim" "$BD"/libparprim.so 2>/dev/null | awk '/=> \// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libdl|libpthread|librt|ld-linux|libgcc_s|libstdc\+\+|libgomp|libcuda|libcudart|libcublas|libcublasLt|libnccl|libparprim|libnpp[a-z]*)[.-]' |
  while read -r f; do cp -L "$f" "$C/libs/"; done
echo "carried $(ls "$C/libs" | wc -l) libraries ($(du -sh "$C/libs" | cut -f1)) in $C/libs"
