#!/usr/bin/env bash
# On the GPU machine, as a run: step of scripts/device.sh (which sets B, the carried build):
# the checks a change to scan.cu needs before its commit, run side by side to save device
# time (none of them is timed): test_scan cuda, memcheck of test_scan with
# PARPRIM_TEST_QUICK=1, and racecheck of the library's kernels through the probe's small
# race cases (scan, select, partition of 5 dtypes at 8193 to 70001 elements).
#   CARRY=.carry-X scripts/device.sh run:bash+scripts/scan_variants_check.sh bench:...
# The probe: PROBE (default $CARRY/probe/scan_probe), built here against the carried
# library, e.g.
#   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude scripts/scan_probe.cu -LBD -lparprim \
#     -Xlinker -rpath="$(realpath BD)" -o "$CARRY/probe/scan_probe"
# Logs under LOGS (device.sh's default), one summary line per check, exit 1 on a failure.
set -uo pipefail
LOGS=${LOGS:-/tmp/pp-logs}
C=${CARRY:-.carry}
P=${PROBE:-$C/probe/scan_probe}
mkdir -p "$LOGS"
t0=$(date +%s)
timeout 150 "$B/test_scan" cuda > "$LOGS/test_scan_cuda.log" 2>&1 &
p1=$!
PARPRIM_TEST_QUICK=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 \
  "$B/test_scan" cuda > "$LOGS/memcheck_test_scan_quick.log" 2>&1 &
p2=$!
timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 "$P" small race lib \
  > "$LOGS/racecheck_probe_small_race_lib.log" 2>&1 &
p3=$!
bad=0
wait "$p1"; r1=$?
wait "$p2"; r2=$?
wait "$p3"; r3=$?
echo "[$(($(date +%s) - t0))s] test_scan cuda: exit $r1, $(grep -E 'passed' "$LOGS/test_scan_cuda.log" | tail -n 1)"
echo "[$(($(date +%s) - t0))s] memcheck test_scan (quick): exit $r2, $(grep -E 'passed' "$LOGS/memcheck_test_scan_quick.log" | tail -n 1); $(grep -E 'SUMMARY' "$LOGS/memcheck_test_scan_quick.log" | tail -n 1)"
echo "[$(($(date +%s) - t0))s] racecheck probe small race lib: exit $r3, $(grep -E '^small ' "$LOGS/racecheck_probe_small_race_lib.log" | tail -n 1); $(grep -E 'SUMMARY' "$LOGS/racecheck_probe_small_race_lib.log" | tail -n 1)"
for r in "$r1" "$r2" "$r3"; do [ "$r" = 0 ] || bad=1; done
grep -E "FAIL|wrong" "$LOGS"/test_scan_cuda.log "$LOGS"/memcheck_test_scan_quick.log \
  "$LOGS"/racecheck_probe_small_race_lib.log | head -20
exit "$bad"
