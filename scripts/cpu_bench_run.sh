#!/usr/bin/env bash
# On the GPU machine's host: unpack .carry28/cpu28.tar.xz (scripts/cpu_bench_pack.sh) and
# run `parprim bench --backend cpu` on the cases the CPU targets are set at, with THREADS
# OpenMP threads (the peers get the same count: OpenBLAS, OpenCV and TBB are capped to the
# context's threads), writing $OUT/cpu-<THREADS>threads.txt and the machine's description.
#   scripts/cpu_bench_run.sh THREADS [REPS]        (THREADS: 16, 2, ...; REPS default 20)
# Only the libraries the machine lacks are taken from the pack, so none of its own is
# shadowed.
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${1:?usage: cpu_bench_run.sh THREADS [REPS]}
reps=${2:-20}
out=${OUT:-.}
work=$(mktemp -d /tmp/pp28.XXXXXX)
tar -C "$work" -xJf .carry28/cpu28.tar.xz
bin=$work/cpu28/parprim
mkdir -p "$work/use"
export LD_LIBRARY_PATH="$work/use${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# ldd names a missing library's own needs only once the library is found: a few rounds
for round in 1 2 3 4 5; do
  for lib in $(ldd "$bin" 2>/dev/null | awk '/not found/ {print $1}' | sort -u); do
    [ -e "$work/cpu28/libs/$lib" ] && ln -sf "$work/cpu28/libs/$lib" "$work/use/"
  done
done
if ldd "$bin" | grep -q "not found"; then
  echo "cpu_bench_run: still missing: $(ldd "$bin" | grep 'not found')" >&2
  exit 1
fi
export OMP_NUM_THREADS=$threads OMP_PROC_BIND=${OMP_PROC_BIND:-false}
f=$out/cpu-${threads}threads.txt
{
  echo "# parprim bench --backend cpu, $threads threads, commit $(cat "$work/cpu28/COMMIT"), $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# carried libraries used: $(ls "$work/use" | tr '\n' ' ')"
  echo "# $(grep -m1 'model name' /proc/cpuinfo); $(nproc) logical CPUs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
  "$bin" info 2>&1
  b() { echo "## parprim bench $*"; "$bin" bench "$@" --backend cpu --reps "$reps" --quiet 2>&1 || echo "(exit $?)"; }
  b sgemm --n 1024 --n 4096
  b conv --n 2^24
  b histogram --n 2^24 --dtype u8
  b sort --n 2^24
  b memcpy reduce scan select --n 2^26
  b topk --n 2^26 --k 1000
  b nbody --n 16384
} > "$f"
echo "wrote $f"
rm -rf "$work"
