#!/usr/bin/env bash
# The GPU machine's check, in one call (device time is scarce): build, then the steps named
# on the command line, each logged under $OUT. Prints a short summary last.
#   steps: test large bench ladder sanitize ncu
# usage: scripts/gpu_check.sh test bench ...      (OUT defaults to /tmp/pp-out)
set -uo pipefail
OUT=${OUT:-/tmp/pp-out}
B=${B:-/tmp/pp-build}
mkdir -p "$OUT"
summary=()
note() { summary+=("$1"); echo "== $1"; }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"
if ! cmake -S . -B "$B" -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/configure.log" 2>&1 ||
   ! cmake --build "$B" -j16 > "$OUT/build.log" 2>&1; then
  tail -40 "$OUT/configure.log" "$OUT/build.log"
  echo "BUILD FAILED"; exit 1
fi
note "build ok ($(grep -c warning "$OUT/build.log") warning lines)"

for step in "$@"; do
  case "$step" in
  test)
    (cd "$B" && ctest --output-on-failure -j4 -LE large) > "$OUT/ctest.log" 2>&1
    note "ctest: $(grep -E 'tests passed|tests failed' "$OUT/ctest.log")"
    grep -E "Failed|\*\*\*|Not Run" "$OUT/ctest.log" | head -20 ;;
  large)
    (cd "$B" && ctest --output-on-failure -L large) > "$OUT/large.log" 2>&1
    note "ctest large: $(grep -E 'tests passed|tests failed' "$OUT/large.log")" ;;
  bench)
    "$B/parprim" bench > "$OUT/bench.txt" 2>&1
    "$B/parprim" bench --csv > "$OUT/bench.csv" 2>&1
    note "bench: see bench.txt"; cat "$OUT/bench.txt" ;;
  ladder)
    "$B/parprim" ladder reduce --n 268435456 > "$OUT/ladder.txt" 2>&1
    note "ladder: exit $?"; cat "$OUT/ladder.txt" ;;
  sanitize)
    # memcheck over the whole reduce test; racecheck and synccheck (slow: they track every
    # shared-memory access) over the demo, which runs every reduce kernel once
    timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/test_reduce" cuda > "$OUT/san_memcheck.log" 2>&1
    note "compute-sanitizer memcheck test_reduce: exit $? $(grep -E 'ERROR SUMMARY' "$OUT/san_memcheck.log" | tail -n 1)"
    for tool in racecheck synccheck; do
      timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 "$B/parprim" demo --backend cuda --n 1000003 > "$OUT/san_$tool.log" 2>&1
      note "compute-sanitizer $tool demo: exit $? $(grep -E 'SUMMARY' "$OUT/san_$tool.log" | tail -n 1)"
    done ;;
  ncu)
    ncu --clock-control none --set full -k regex:reduce_kernel -c 3 "$B/parprim" bench reduce --n 268435456 --reps 1 > "$OUT/ncu.txt" 2>&1
    note "ncu: see ncu.txt" ;;
  *) note "unknown step $step" ;;
  esac
done
printf '%s\n' "${summary[@]}"
