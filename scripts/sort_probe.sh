#!/usr/bin/env bash
# Build sort_probe (scripts/sort_probe.cu): the CUDA sort and merge in several compile-time
# variants, each timed against CUB and checked against it in one process. Built here (no
# GPU needed) against the libparprim.so of BUILD_DIR (scripts/carry.sh), into OUT_DIR,
# which can travel to the GPU machine next to the carried build:
#   CARRY=.carry-sort scripts/carry.sh build-sort parprim parprim_cli
#   scripts/sort_probe.sh build-sort .carry-sort/probe
#   (GPU machine, after scripts/device.sh has put the carried build in place)
#   .carry-sort/probe/sort_probe --n 28 --reps 10
# OLD=<git revision>: also time that revision's sort.cu and merge.cu, as "old".
# Variants: the two lists below (name and -D flags), or SORT_VARIANTS / MERGE_VARIANTS from the
# environment, one "name|flags" per line (an empty list builds none of that kind), so that two
# people can probe different files from one tree.
set -euo pipefail
cd "$(dirname "$0")/.."
B=$(realpath "${1:-build-sort}")
O=${2:-$B/probe}
mkdir -p "$O"
O=$(realpath "$O")
# MSORT_VARIANTS (environment only, default none): variants of the merge and sample sorts
# (sort_merge.cu, sort_sample.cu and sort_block.cuh), timed with `--what msort`.
mapfile -t MSORT_VARIANTS < <(printf '%s\n' "${MSORT_VARIANTS:-}" | grep -v '^[[:space:]]*$')
if [ -n "${SORT_VARIANTS+x}" ] || [ -n "${MERGE_VARIANTS+x}" ]; then
  mapfile -t SORT_VARIANTS < <(printf '%s\n' "${SORT_VARIANTS:-}" | grep -v '^[[:space:]]*$')
  mapfile -t MERGE_VARIANTS < <(printf '%s\n' "${MERGE_VARIANTS:-}" | grep -v '^[[:space:]]*$')
else
SORT_VARIANTS=(
  "new|"
  "u64_13or|-DPP_SORT_ITEMS_K64=13"
  "u64_15or|-DPP_SORT_ITEMS_K64=15"
  "u64_17bal|-DPP_SORT_MATCH_K64=0"
  "p21late|-DPP_SORT_ITEMS_K32_V32=21"
  "or4|-DPP_SORT_MATCH=2"
  "3blk18|-DPP_SORT_ITEMS_K32_LARGE=18 -DPP_SORT_MIN_BLOCKS_K32=3"
)
MERGE_VARIANTS=(
  "m512x15|"
  "m512x17|-DPP_MERGE_ITEMS=17"
)
fi
NVCC=(nvcc -O3 -DNDEBUG -std=c++17 -arch=sm_90 -DPP_HAVE_CUDA=1 -Iinclude -Isrc -Isrc/cuda -Iscripts
      --Werror=all-warnings)
# the sort source without its final dispatch function, so that only the probed types are
# instantiated
sed '/^pp_status pp_cuda_sort(/,$d' src/cuda/sort.cu > "$O/sort_body.cu"
if [ ${#MSORT_VARIANTS[@]} -gt 0 ]; then
  sed '/^pp_status pp_cuda_sort_merge(/,$d' src/cuda/sort_merge.cu > "$O/sort_merge_body.cu"
  sed '/^static pp_status ssort_by_values(/,$d' src/cuda/sort_sample.cu | sed '$d' > "$O/sort_sample_body.cu"
  grep -q 'ssort_sort' "$O/sort_sample_body.cu" || { echo "sort_sample.cu: ssort_sort not found"; exit 1; }
fi
if [ ${#MSORT_VARIANTS[@]} -gt 0 ] && [ -n "${OLD:-}" ]; then
  mkdir -p "$O/msort_old"
  git show "$OLD:src/cuda/sort_block.cuh" > "$O/msort_old/sort_block.cuh"
  git show "$OLD:src/cuda/sort_merge.cu" | sed '/^pp_status pp_cuda_sort_merge(/,$d' > "$O/msort_old/sort_merge_body.cu"
  git show "$OLD:src/cuda/sort_sample.cu" | sed '/^static pp_status ssort_by_values(/,$d' | sed '$d' \
    > "$O/msort_old/sort_sample_body.cu"
  MSORT_VARIANTS+=("ms_old|@$O/msort_old/sort_merge_body.cu")
fi
if [ -n "${OLD:-}" ]; then
  git show "$OLD:src/cuda/sort.cu" | sed '/^pp_status pp_cuda_sort(/,$d' > "$O/sort_old.cu"
  git show "$OLD:src/cuda/merge.cu" > "$O/merge_old.cu"
  [ ${#SORT_VARIANTS[@]} -eq 0 ] || SORT_VARIANTS+=("old|@$O/sort_old.cu")
  [ ${#MERGE_VARIANTS[@]} -eq 0 ] || MERGE_VARIANTS+=("m_old|@$O/merge_old.cu")
fi
i=0
rm -f "$O"/pv*.o "$O"/FAILED
build() { # kind name flags: one variant object, two compiles at a time (2 cores here)
  local src name=$2 flags=$3 ns="pv$i"
  if [ "${flags:0:1}" = "@" ] && [ "$1" = msort ]; then
    src=${flags:1} flags="-DPROBE_OLD=1 -DPROBE_SSORT_SRC=\"$(dirname "$src")/sort_sample_body.cu\""
  elif [ "${flags:0:1}" = "@" ]; then
    src=${flags:1} flags="-DPROBE_OLD=1"
  elif [ "$1" = sort ]; then
    src=$O/sort_body.cu
  elif [ "$1" = msort ]; then
    src=$O/sort_merge_body.cu flags="$flags -DPROBE_SSORT_SRC=\"$O/sort_sample_body.cu\""
  else
    src=$(realpath src/cuda/merge.cu)
  fi
  local def=PROBE_SORT_SRC
  [ "$1" = merge ] && def=PROBE_MERGE_SRC
  [ "$1" = msort ] && def=PROBE_MSORT_SRC
  # shellcheck disable=SC2086
  "${NVCC[@]}" -DPROBE_NS=$ns "-DPROBE_NAME=\"$name\"" "-D$def=\"$src\"" $flags \
    -c scripts/sort_probe_variant.cu -o "$O/$ns.o" > "$O/$ns.log" 2>&1 ||
    { echo "variant $name failed:"; cat "$O/$ns.log"; touch "$O/FAILED"; }
}
for spec in "${SORT_VARIANTS[@]/#/sort|}" "${MERGE_VARIANTS[@]/#/merge|}" "${MSORT_VARIANTS[@]/#/msort|}"; do
  kind=${spec%%|*} rest=${spec#*|}
  while [ "$(jobs -rp | wc -l)" -ge "${JOBS:-2}" ]; do sleep 1; done
  build "$kind" "${rest%%|*}" "${rest#*|}" &
  i=$((i + 1))
done
wait
[ ! -e "$O/FAILED" ] || exit 1
"${NVCC[@]}" -c scripts/sort_probe.cu -o "$O/main.o"
"${NVCC[@]}" -o "$O/sort_probe" "$O"/main.o "$O"/pv*.o -L"$B" -lparprim -Xlinker -rpath,"$B"
ls -la "$O/sort_probe"
