#!/usr/bin/env bash
# Fetch the optional GPU peers of `parprim bench` that the CUDA toolkit may lack, from PyPI,
# into .wheels/ (ignored by git), where cmake/bench_peers.cmake looks for them:
#   .wheels/cccl/nvidia/cu13/include/cccl   CCCL >= 3.3 headers (cub::DeviceTopK), from
#                                          the nvidia-cuda-cccl wheel
#   .wheels/npp/nvidia/cu13/{include,lib}  NPP headers and libraries, from nvidia-npp (only
#                                          needed where the toolkit has no NPP of its own)
# Then configure again (a fresh build directory, or -UPP_CCCL_NEW_INCLUDE -UPP_NPP_ROOT on an
# old one, since an earlier search result stays in the cache).
#   scripts/bench_wheels.sh [cccl] [npp]      (default: both)
# CCCL_SPEC and NPP_SPEC override the versions (pip requirement syntax); pip's own settings
# (PIP_INDEX_URL, PIP_FIND_LINKS, ...) apply.
set -euo pipefail
cd "$(dirname "$0")/.."
W=.wheels
CCCL_SPEC=${CCCL_SPEC:-nvidia-cuda-cccl==13.3.5.0.6}
NPP_SPEC=${NPP_SPEC:-nvidia-npp==13.2.0.93}
what=("$@")
[ ${#what[@]} -eq 0 ] && what=(cccl npp)
py=$(command -v python3 || command -v python)

fetch() { # name spec paths-inside-the-wheel...
  local name=$1 spec=$2
  shift 2
  rm -rf "$W/dl-$name" "$W/$name"
  mkdir -p "$W/dl-$name" "$W/$name"
  "$py" -m pip download --quiet --no-deps --only-binary=:all: -d "$W/dl-$name" "$spec"
  local whl
  whl=$(ls "$W/dl-$name"/*.whl)
  (cd "$W/$name" && unzip -q -o "../../$whl" "$@")
  rm -rf "$W/dl-$name"
  echo "bench_wheels: $(basename "$whl") unpacked in $W/$name"
}

for w in "${what[@]}"; do
  case $w in
    cccl) fetch cccl "$CCCL_SPEC" 'nvidia/cu13/include/cccl/*' ;;
    npp) fetch npp "$NPP_SPEC" 'nvidia/cu13/include/*' 'nvidia/cu13/lib/*' ;;
    *) echo "bench_wheels: unknown '$w' (cccl, npp)" >&2; exit 2 ;;
  esac
done
cat <<MSG
bench_wheels: configure with (or let a fresh build directory find them):
  -DPP_CCCL_NEW_INCLUDE=$PWD/$W/cccl/nvidia/cu13/include/cccl
  -DPP_NPP_ROOT=$PWD/$W/npp/nvidia/cu13
Run a program linked with the wheel's NPP elsewhere with LD_LIBRARY_PATH naming that
machine's NPP (the CUDA toolkit's lib64, e.g. /usr/local/cuda/lib64).
MSG
