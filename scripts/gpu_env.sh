# gpu_env.sh — sourced on the GPU machine before running a build carried there by
# scripts/carry.sh: NCCL from the Python environment's wheel, the command's image and plot
# libraries from the carried copies where the machine lacks them, Open MPI allowed as root,
# and NVLink multicast kept off (it can take a shared host's GPUs out of service).
#   . scripts/gpu_env.sh [BUILD_DIR]
export NCCL_NVLS_ENABLE=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
pp_nccl=$(python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null)
[ -n "$pp_nccl" ] && export LD_LIBRARY_PATH="$pp_nccl/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
pp_bd=${1:-build-gpu}
C=${CARRY:-.carry}
if [ -d "$C/libs" ] && [ -x "$pp_bd/parprim" ]; then
  # only what the dynamic linker cannot find here, so nothing of the machine's is shadowed
  mkdir -p /tmp/pp-libs
  export LD_LIBRARY_PATH="/tmp/pp-libs:$LD_LIBRARY_PATH"
  # ldd names a missing library's own needs only once the library is found: a few rounds
  for pp_round in 1 2 3 4; do
    for lib in $(ldd "$pp_bd/parprim" "$pp_bd"/libparprim.so 2>/dev/null | awk '/not found/ {print $1}' | sort -u); do
      [ -e "$C/libs/$lib" ] && ln -sf "$(realpath "$C/libs/$lib")" /tmp/pp-libs/
    done
  done
fi
echo "gpu_env: NCCL from ${pp_nccl:-(none found)}; carried libraries used: $(ls /tmp/pp-libs 2>/dev/null | tr '\n' ' ')"
