#!/usr/bin/env bash
# fuzz.sh [SECONDS] — build the libFuzzer harnesses (cmake/fuzz.cmake) with clang, ASan and
# UBSan in build-fuzz/, and run each for SECONDS (default 15) over its seed corpus
# fuzz/corpus/<name>/ (harness fuzz_<name>). The corpus is copied to a temporary directory first, so the
# repository is never modified; new inputs the fuzzer finds are thrown away with it.
# Exits non-zero on any finding (crash, sanitizer report, leak, timeout), leaving the
# reproducer in build-fuzz/findings/<name>/ and printing the command that replays it.
# Environment: FUZZ_BUILD (default build-fuzz), FUZZ_JOBS (build jobs, default 2),
# FUZZ_ONLY (run only this harness).
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-15}
case "$secs" in
  '' | *[!0-9]*) echo "usage: $0 [seconds per harness]" >&2; exit 2 ;;
esac
build=${FUZZ_BUILD:-build-fuzz}
jobs=${FUZZ_JOBS:-2}

command -v clang >/dev/null || {
  echo "fuzz.sh: clang not found (Debian: apt-get install clang libclang-rt-14-dev libomp-14-dev)" >&2
  exit 2
}

mkdir -p "$build"
cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPP_ENABLE_CUDA=OFF -DPP_BUILD_TOOLS=OFF -DPP_FUZZ=ON >"$build/configure.log" 2>&1 || {
  cat "$build/configure.log" >&2
  exit 1
}
mapfile -t harnesses < <(grep -v '^$' "$build/fuzz_harnesses.txt")
if [ -n "${FUZZ_ONLY:-}" ]; then harnesses=("$FUZZ_ONLY"); fi
if [ ${#harnesses[@]} -eq 0 ]; then
  echo "fuzz.sh: no harness in this tree" >&2
  exit 1
fi
cmake --build "$build" -j "$jobs" --target "${harnesses[@]}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# allocator_may_return_null: an impossible allocation is a status the library reports
# (PP_ERR_OUT_OF_MEMORY), not a crash; OpenMP threads stay idle at the sizes fuzzed
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_WAIT_POLICY=passive

status=0
summary=()
for h in "${harnesses[@]}"; do
  corpus="$work/$h"
  seeds="fuzz/corpus/${h#fuzz_}" # fuzz_api's seeds are in fuzz/corpus/api/
  rm -rf "$build/findings/$h"
  mkdir -p "$corpus" "$build/findings/$h"
  if [ -d "$seeds" ]; then cp -r "$seeds/." "$corpus/"; fi
  log="$build/findings/$h/fuzz.log"
  echo "== $h: ${secs}s over $(find "$corpus" -type f | wc -l) seed inputs"
  rc=0
  "$build/$h" -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$build/findings/$h/" "$corpus" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  summary+=("$h: ${execs:-?} executions, exit $rc")
  if [ "$rc" -ne 0 ]; then
    status=1
    echo "!! $h found a problem (exit $rc); the log's end:"
    tail -40 "$log"
    for f in "$build/findings/$h"/crash-* "$build/findings/$h"/leak-* \
             "$build/findings/$h"/timeout-* "$build/findings/$h"/oom-*; do
      [ -e "$f" ] && echo "   replay: $build/$h $f"
    done
  fi
done
echo "== fuzzing summary (${secs}s per harness)"
printf '   %s\n' "${summary[@]}"
exit $status
