#!/usr/bin/env bash
# One call on the GPU machine (device time is scarce, so one call does everything): build,
# then each step named on the command line, each bounded by `timeout` and logged under $OUT.
# Prints a one-line summary per step last.
#   test                 the whole ctest suite but the large label
#   large                ctest -L large (CUDA runs)
#   bench:P1,P2[:ARGS]   parprim bench P1 P2 ARGS (ARGS: options with '+' for spaces)
#   memcheck:PROG        compute-sanitizer memcheck on PROG cuda (a test program)
#   racecheck:PROG       compute-sanitizer racecheck on PROG cuda
#   ladder:NAME          parprim ladder NAME
#   ncu:NAME:REGEX:COUNT:ARGS  ncu --set full on COUNT kernels matching REGEX while running
#                        parprim ARGS ('+' for spaces), e.g. ncu:red:reduce:2:bench+reduce+--n+2^20+--reps+1
#   run:CMD              any command (with '+' for spaces), e.g. run:$B/parprim+info
# With a build packed by scripts/carry.sh in $CARRY/bd.tgz or $CARRY/bd (CARRY defaults to .carry; pass
# carry: ["$CARRY"] to the run), nothing is built there.
# usage: scripts/device.sh test bench:reduce,scan memcheck:test_sort
set -uo pipefail
# $OUT brings back at most 8 files: logs go to $LOGS and come back as one $OUT/logs.tgz
OUT=${OUT:-/tmp/pp-out}
LOGS=${LOGS:-/tmp/pp-logs}
B=${B:-/tmp/pp-build}
STEP_LIMIT=${STEP_LIMIT:-240}
mkdir -p "$OUT" "$LOGS"
trap 'tar -C "$LOGS" -czf "$OUT/logs.tgz" .' EXIT
t0=$(date +%s)
summary=()
note() { summary+=("[$(($(date +%s) - t0))s] $1"); echo "== $1"; }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv \
  > "$LOGS/gpu.txt" 2>&1
cat "$LOGS/gpu.txt"
C=${CARRY:-.carry}
[ -f "$C/bd.tgz" ] && [ ! -d "$C/bd" ] && tar -C "$C" -xzf "$C/bd.tgz"
if [ -f "$C/bd/ORIGIN" ]; then
  # a build made elsewhere by scripts/carry.sh: put it where its absolute paths (RPATH,
  # CTestTestfile) point, through links, and use it as is
  repo=$(cat "$C/bd/ORIGIN_REPO"); B=$(cat "$C/bd/ORIGIN")
  if [ "$(realpath "$repo" 2>/dev/null)" != "$(realpath .)" ]; then
    mkdir -p "$(dirname "$repo")" && rm -rf "$repo" && ln -s "$(realpath .)" "$repo"
  fi
  rm -rf "$B" && ln -s "$(realpath "$C/bd")" "$B"
  # the CTest file names the cmake of the machine that built it (cli_usage runs cmake -P)
  if here=$(command -v cmake); then
    sed -i -E "s#\"[^\"]*/cmake\" \"-DCLI=#\"$here\" \"-DCLI=#" "$C/bd/CTestTestfile.cmake"
  fi
  note "carried build at $B"
elif ! cmake -S . -B "$B" -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
       > "$LOGS/configure.log" 2>&1 ||
   ! cmake --build "$B" -j16 > "$LOGS/build.log" 2>&1; then
  grep -E "error|Error" "$LOGS/build.log" | head -40
  tail -20 "$LOGS/configure.log"
  echo "BUILD FAILED"; exit 1
else
  note "build ok ($(grep -ci warning "$LOGS/build.log") warning lines)"
fi

for step in "$@"; do
  kind=${step%%:*}; arg=${step#*:}; [ "$arg" = "$step" ] && arg=""
  tag=$(printf '%s' "$step" | tr -c 'A-Za-z0-9_.-' '_' | cut -c1-60)
  log="$LOGS/$tag.log"
  case "$kind" in
  test)
    (cd "$B" && timeout "$STEP_LIMIT" ctest --output-on-failure -j8 -LE large) > "$log" 2>&1
    note "ctest: $(grep -E 'tests passed|tests failed' "$log")"
    grep -E "\(Failed\)|\*\*\*|Not Run|Timeout" "$log" | head -20 ;;
  large)
    (cd "$B" && timeout "$STEP_LIMIT" ctest --output-on-failure -L large -R _cuda) > "$log" 2>&1
    note "ctest large: $(grep -E 'tests passed|tests failed' "$log")" ;;
  bench)
    prims=${arg%%:*}; extra=""; [ "$prims" != "$arg" ] && extra=${arg#*:}
    timeout "$STEP_LIMIT" "$B/parprim" bench ${prims//,/ } ${extra//+/ } > "$log" 2>&1
    note "bench $prims: exit $?"; cat "$log" ;;
  memcheck|racecheck)
    timeout "$STEP_LIMIT" compute-sanitizer --tool "$kind" --error-exitcode 9 "$B/$arg" cuda \
      > "$log" 2>&1
    note "$kind $arg: exit $? $(grep -E 'SUMMARY' "$log" | tail -n 1)" ;;
  ladder)
    timeout "$STEP_LIMIT" "$B/parprim" ladder ${arg//+/ } > "$log" 2>&1
    note "ladder $arg: exit $?"; cat "$log" ;;
  ncu)
    IFS=: read -r name regex count args <<< "$arg"
    timeout "$STEP_LIMIT" ncu --set full -k "regex:$regex" -c "$count" "$B/parprim" ${args//+/ } \
      > "$log" 2>&1
    note "ncu $name: exit $? ($(grep -c '^  [A-Za-z_].*(' "$log") kernels)" ;;
  run)
    (export B; timeout "$STEP_LIMIT" bash -c "${arg//+/ }") > "$log" 2>&1
    note "run $arg: exit $?"; tail -40 "$log" ;;
  *) note "unknown step $step" ;;
  esac
done
printf '%s\n' "${summary[@]}"
