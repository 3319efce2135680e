#!/usr/bin/env bash
# Build here, for the GPU machine's host, a CPU-only parprim command with its CPU peers
# (OpenBLAS, OpenCV, TBB) and pack it with the shared libraries it needs that a bare Debian
# machine lacks, so that scripts/cpu_bench_run.sh can measure the CPU backend there.
#   scripts/cpu_bench_pack.sh            -> build-cpu28/, .carry28/cpu28.tar.xz
# CUDA, MPI and NCCL are left out (-DPP_ENABLE_CUDA=OFF ...): the command links the library
# statically, so only third-party libraries travel. The C runtime, libstdc++, libgcc_s and
# libgomp are the machine's own. xz keeps the pack well under the device tool's carry limit
# (OpenBLAS alone is 36 MB unpacked: one copy of every x86 kernel generation).
set -euo pipefail
cd "$(dirname "$0")/.."
BD=${BD:-build-cpu28}
C=.carry28
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$BD" -DCMAKE_BUILD_TYPE=Release -DPP_ENABLE_CUDA=OFF -DPP_ENABLE_MPI=OFF \
  -DPP_ENABLE_NCCL=OFF -DPP_BUILD_TESTS=OFF -DPP_TOOLS_SHARED=OFF "${launcher[@]}" > /dev/null
cmake --build "$BD" -j2 --target parprim_cli
grep -E "^PP_OPENBLAS_LIBRARY|^OpenCV_DIR|^TBB_DIR" "$BD/CMakeCache.txt" || true

rm -rf "$C" && mkdir -p "$C/cpu28/libs"
cp -a "$BD/parprim" "$C/cpu28/"
ldd "$BD/parprim" | awk '/=> \// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*|libgcc_s|libstdc\+\+|libgomp)[.-]' |
  while read -r f; do cp -L "$f" "$C/cpu28/libs/"; done
git rev-parse --short HEAD > "$C/cpu28/COMMIT"
tar -C "$C" -cJf "$C/cpu28.tar.xz" cpu28 && rm -rf "$C/cpu28"
size=$(stat -c %s "$C/cpu28.tar.xz")
echo "packed $C/cpu28.tar.xz: $((size / 1024 / 1024)) MiB ($size bytes)"
if [ "$size" -gt $((25 * 1024 * 1024)) ]; then
  echo "cpu_bench_pack: the pack is over 25 MiB" >&2
  exit 1
fi
