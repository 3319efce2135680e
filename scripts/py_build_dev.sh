#!/usr/bin/env bash
# py_build_dev.sh — build parprim's Python extension in seconds against a library that is
# already built (a CUDA build's libparprim.so), with the current python3 and its headers,
# into a folder to put on PYTHONPATH. The wheel build (pip install ./python) rebuilds the
# whole library, which takes minutes; this is for trying the module on the GPU machine.
#
#   scripts/py_build_dev.sh [LIBDIR [OUTDIR]]     defaults: build-gpu, LIBDIR/pydev
#   export PYTHONPATH=$OUTDIR                      then: python3 -m pytest python/tests
#
# Environment: PYTHON (default python3), CC (default cc), CUDA_HOME (default
# /usr/local/cuda; used when the library links cudart).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
libdir=$(cd "${1:-$root/build-gpu}" && pwd)
out=${2:-$libdir/pydev}
py=${PYTHON:-python3}
cc=${CC:-cc}
cuda_home=${CUDA_HOME:-/usr/local/cuda}

lib="$libdir/libparprim.so"
[ -e "$lib" ] || { echo "py_build_dev: no $lib (build the library first: cmake --build $libdir)" >&2; exit 1; }
inc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
suffix=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
[ -e "$inc/Python.h" ] || { echo "py_build_dev: no Python.h in $inc (install python3-dev for $py)" >&2; exit 1; }

cuda=()
if readelf -d "$lib" | grep -q 'libcudart'; then
  # the module orders streams with events and asks where a pointer lives (cudart)
  cuda=(-DPPY_HAVE_CUDA=1 -I"$cuda_home/include" -L"$cuda_home/lib64" -lcudart -Wl,-rpath,"$cuda_home/lib64")
fi

mkdir -p "$out/parprim"
"$cc" -std=c11 -O2 -fPIC -shared -fvisibility=hidden -Wall -Wextra -Werror -Wno-unused-parameter \
  -I"$root/include" -I"$inc" "$root"/python/src/*.c -o "$out/parprim/_parprim$suffix" \
  -L"$libdir" -lparprim -Wl,-rpath,"$libdir" "${cuda[@]}"
cp "$root"/python/parprim/*.py "$root"/python/parprim/*.pyi "$root"/python/parprim/py.typed "$out/parprim/"
kind=cpu
[ ${#cuda[@]} -gt 0 ] && kind=cuda
echo "py_build_dev: built $out/parprim/_parprim$suffix against $lib ($kind); export PYTHONPATH=$out"
