#!/usr/bin/env bash
# Build scripts/scan_probe.cu with compile-time variants of src/cuda/scan.cu, all in one
# program (each variant's scan.cu in its own namespace), linked against the shared library
# of the build dir BD (default build-scan; build it first, e.g. with scripts/carry.sh).
#   scripts/scan_variants.sh OUTDIR "name:-DPP_SCAN_VECS=8 -DPP_SELECT_VECS=4" ...
# OUTDIR gets scan_probe and the library beside it (run it from there, or carry OUTDIR to the
# GPU machine; COPY_LIB=0 leaves the library out: the probe then finds it in BD, e.g. in the
# build that scripts/carry.sh packed and scripts/device.sh unpacked); "lib" is always there:
# the library's own kernels. See scan_probe.cu for the modes. Names starting with diag_ are
# timing diagnostics whose results are wrong.
set -euo pipefail
cd "$(dirname "$0")/.."
BD=${BD:-build-scan}
JOBS=${JOBS:-2}
out=$1
shift
mkdir -p "$out/obj"
rm -f "$out"/obj/*.o
flags=(-O3 -std=c++17 -arch=sm_90 -Iinclude -Xcompiler=-Wall,-Wextra --Werror=all-warnings)
for spec in "$@"; do
  name=${spec%%:*}
  vflags=${spec#*:}
  [ "$vflags" = "$spec" ] && vflags=""
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do sleep 1; done
  # shellcheck disable=SC2086 # the variant's flags are words
  nvcc "${flags[@]}" -DPROBE_VARIANT="$name" $vflags -c scripts/scan_probe.cu \
    -o "$out/obj/$name.o" &
done
wait
nvcc "${flags[@]}" scripts/scan_probe.cu "$out"/obj/*.o -L"$BD" -lparprim \
  -Xlinker -rpath="\$ORIGIN:$(realpath "$BD")" -o "$out/scan_probe"
rm -f "$out"/libparprim.so*
[ "${COPY_LIB:-1}" = 1 ] && cp -a "$BD"/libparprim.so* "$out"/
echo "built $out/scan_probe with: lib $(for s in "$@"; do printf '%s ' "${s%%:*}"; done)"
