#!/usr/bin/env bash
# Build, check and time variants of the CUDA sort and merge (src/cuda/sort.cu, merge.cu)
# against CUB in ONE call on the GPU machine. Logs go to $OUT (or /tmp/sortvar).
#
#   scripts/sort_variants.sh [name:file:flags ...]
#     name   a label, e.g. ballot
#     file   sort or merge (which object the flags rebuild)
#     flags  -D options of that file's tuning macros
#   e.g. scripts/sort_variants.sh "matchany:sort:-DPP_SORT_MATCH_ANY=1" \
#          "k32x20:sort:-DPP_SORT_ITEMS_K32=20" "m256:merge:-DPP_MERGE_THREADS=256"
#
# The tree is built once (default macros); its tests run under the default build (plus
# compute-sanitizer memcheck and racecheck on small benches), then every variant recompiles only its one object
# with CMake's own flags, swaps it into a copy of libparprim.a and relinks the parprim
# command with CMake's link line, so a variant costs one nvcc run (in parallel), not a
# build. Environment: B (build dir, default /tmp/pp-sortvar), SIZES (the default build's
# sizes, default "2^20 2^24 2^28": every sort case and merge), VSIZES (the variants' sizes,
# default "2^24 2^28"), NCU=1 to add Nsight Compute reports of the default onesweep and
# merge kernels and of CUB's, VTEST=1 to run test_sort on every variant too.
set -uo pipefail
B=${B:-/tmp/pp-sortvar}
LOG=${OUT:-/tmp/sortvar}
SIZES=${SIZES:-"2^20 2^24 2^28"}
VSIZES=${VSIZES:-"2^24 2^28"}
SRC=$(pwd)
mkdir -p "$LOG"
NARGS=() VARGS=()
for s in $SIZES; do NARGS+=(--n "$s"); done
for s in $VSIZES; do VARGS+=(--n "$s"); done

cmake -S . -B "$B" -G "Unix Makefiles" -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release > /dev/null || exit 1
cmake --build "$B" -j16 --target parprim_cli test_sort test_large_sort > "$LOG/build.txt" 2>&1 ||
  { tail -30 "$LOG/build.txt"; exit 1; }

# ---- variants: compile in the background while the default build is checked -----------------
OBJ=$B/CMakeFiles/parprim_objects.dir
FLAGS=$(sed -n 's/^CUDA_FLAGS = //p' "$OBJ/flags.make")
DEFS=$(sed -n 's/^CUDA_DEFINES = //p' "$OBJ/flags.make")
build_variant() { # name file flags
  local dir=$B/var/$1
  mkdir -p "$dir"
  (set -f && cd "$B" && /usr/local/cuda/bin/nvcc $DEFS --options-file "$OBJ/includes_CUDA.rsp" $FLAGS $3 \
    -c "$SRC/src/cuda/$2.cu" -o "$dir/$2.cu.o") > "$dir/nvcc.txt" 2>&1 || return 1
  cp "$B/libparprim.a" "$dir/lib.a" && ar rs "$dir/lib.a" "$dir/$2.cu.o" 2> /dev/null || return 1
  relink "$dir" parprim_cli parprim && relink "$dir" test_sort test_sort
}
relink() { # dir target output: the target linked against dir/lib.a instead of libparprim.a
  local dir=$1 rsp=$B/CMakeFiles/$2.dir/linkLibs.rsp link
  link=$(cat "$B/CMakeFiles/$2.dir/link.txt")
  if [ -f "$rsp" ]; then
    sed "s# libparprim.a # $dir/lib.a #" "$rsp" > "$dir/$2.rsp"
    link=${link//@CMakeFiles\/$2.dir\/linkLibs.rsp/@$dir/$2.rsp}
  fi
  link=${link// libparprim.a / $dir/lib.a }
  link=${link//-o $3 /-o $dir/$3 }
  (cd "$B" && eval "$link") >> "$dir/nvcc.txt" 2>&1
}
PIDS=()
for spec in "$@"; do
  name=${spec%%:*} rest=${spec#*:}
  build_variant "$name" "${rest%%:*}" "${rest#*:}" &
  PIDS+=($!)
done

# ---- the default build: tests, sanitizer, timings ---------------------------------------------
"$B/test_sort" cuda > "$LOG/test_sort.txt" 2>&1
echo "test_sort cuda: rc $? $(tail -1 "$LOG/test_sort.txt")"
"$B/test_large_sort" cuda > "$LOG/test_large_sort.txt" 2>&1
echo "test_large_sort cuda: rc $? $(tail -1 "$LOG/test_large_sort.txt")"
# small sorts (one block; a few onesweep tiles) and a merge past the one-launch limit
# (3000017 f32 = 391 tiles > 2 per SM: the partition kernel runs)
for tool in memcheck racecheck; do
  f=$LOG/sanitizer_$tool.txt
  compute-sanitizer --tool $tool --error-exitcode 9 "$B/parprim" bench sort --dtype u32 --n 4000 \
    --n 100003 --reps 1 > "$f" 2>&1
  r1=$?
  compute-sanitizer --tool $tool --error-exitcode 9 "$B/parprim" bench merge --n 3000017 \
    --reps 1 >> "$f" 2>&1
  r2=$?
  echo "compute-sanitizer $tool: rc $r1 $r2 ($(grep -c 'ERROR SUMMARY: 0 errors' "$f") of 2 clean)"
done
# with sizes given, sort runs u32, f32 and u64 keys and u32/u32 pairs at each of them
"$B/parprim" bench sort merge "${NARGS[@]}" > "$LOG/bench_default.txt" 2>&1
if [ "${NCU:-0}" = 1 ]; then
  N="ncu --clock-control none --set full --print-details all"
  $N -k regex:'onesweep_kernel|radix_histogram' -c 5 "$B/parprim" bench sort --n 2^24 --reps 1 \
    --dtype u32 > "$LOG/ncu_sort.txt" 2>&1
  $N -k regex:'Onesweep|HistogramKernel' -c 3 "$B/parprim" bench sort --n 2^24 --reps 1 \
    --dtype u32 > "$LOG/ncu_sort_cub.txt" 2>&1
  $N -k regex:'merge' -c 2 "$B/parprim" bench merge --n 2^28 --reps 1 > "$LOG/ncu_merge.txt" 2>&1
  $N -k regex:'Merge' -c 2 "$B/parprim" bench merge --n 2^28 --reps 1 > "$LOG/ncu_merge_cub.txt" 2>&1
fi

# ---- each variant: the bench of its file (sort or merge) at VSIZES; compare with the default ---
i=0
for spec in "$@"; do
  name=${spec%%:*} rest=${spec#*:}
  file=${rest%%:*}
  if wait "${PIDS[$i]}" && [ -x "$B/var/$name/parprim" ]; then
    if [ "${VTEST:-0}" = 1 ]; then
      "$B/var/$name/test_sort" cuda > "$LOG/test_sort_$name.txt" 2>&1
      echo "variant $name: test_sort cuda rc $? $(tail -1 "$LOG/test_sort_$name.txt")"
    fi
    "$B/var/$name/parprim" bench "$file" "${VARGS[@]}" > "$LOG/bench_$name.txt" 2>&1
  else
    echo "variant $name did not build:"; tail -5 "$B/var/$name/nvcc.txt"
  fi
  i=$((i + 1))
done
for f in "$LOG"/bench_*.txt; do
  echo "== $(basename "$f" .txt)"
  grep -E '^(sort|merge) ' "$f"
done
