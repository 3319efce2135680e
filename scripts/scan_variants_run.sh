#!/usr/bin/env bash
# On the GPU machine: unpack the probe that scripts/scan_variants.sh built and packed as
# $CARRY/probe.tgz, then run what is asked, logs under $OUT:
#   scripts/scan_variants_run.sh small | time:20,24,28 | prof:28:lib,cub,... |
#                                memcheck:NAME,... | racecheck:NAME,... ...
# prof runs ncu (a few sections: throughput, memory, warp stalls, occupancy) on one scan and
# one select per named variant at 2^LOG2N; memcheck and racecheck run the small mode's
# reduced cases of the named variants under compute-sanitizer.
set -uo pipefail
C=${CARRY:-.carry-scan}
OUT=${OUT:-/tmp/pp-out}
mkdir -p "$OUT" "$C/x"
tar -C "$C/x" -xzf "$C/probe.tgz"
P=$(ls -d "$C"/x/*/scan_probe | head -n 1)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
t0=$(date +%s)
for step in "$@"; do
  kind=${step%%:*}
  arg=${step#*:}
  case "$kind" in
  small)
    timeout 120 "$P" small > "$OUT/small.log" 2>&1
    echo "[$(($(date +%s) - t0))s] small: exit $?"
    grep -E "^small .*:|FAILED|ok" "$OUT/small.log" | tail -40 ;;
  time)
    timeout 150 "$P" time ${arg//,/ } > "$OUT/time.log" 2>&1
    echo "[$(($(date +%s) - t0))s] time: exit $?"
    cat "$OUT/time.log" ;;
  prof)
    lg=${arg%%:*}
    names=${arg#*:}
    timeout 150 ncu --section SpeedOfLight --section MemoryWorkloadAnalysis \
      --section WarpStateStats --section Occupancy --section LaunchStats \
      --section SchedulerStats \
      --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,smsp__warps_issue_stalled_sleeping_per_warp_active.pct,smsp__warps_issue_stalled_barrier_per_warp_active.pct,smsp__warps_issue_stalled_long_scoreboard_per_warp_active.pct \
      -k "regex:scan_kernel|scan_bulk_kernel|select_kernel|select_bulk_kernel|DeviceScanKernel|DeviceSelectSweepKernel" \
      -c 40 -o "$OUT/prof" "$P" prof "$lg" ${names//,/ } > "$OUT/ncu.log" 2>&1
    echo "[$(($(date +%s) - t0))s] ncu: exit $?"
    ncu -i "$OUT/prof.ncu-rep" --page details > "$OUT/ncu_details.txt" 2>&1
    grep -E "^  [A-Za-z_].*\(|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit" \
      "$OUT/ncu_details.txt" | head -150 ;;
  memcheck|racecheck)
    timeout 90 compute-sanitizer --tool "$kind" --error-exitcode 9 "$P" small race ${arg//,/ } \
      > "$OUT/$kind.log" 2>&1
    echo "[$(($(date +%s) - t0))s] $kind: exit $? $(grep -E 'SUMMARY' "$OUT/$kind.log" | tail -n 1)"
    grep -E "^small .*:" "$OUT/$kind.log" | tail ;;
  esac
done
