# The optional GPU peers of `parprim bench` that the CUDA toolkit's own headers do not bring
# (docs/benchmarks/peers.md):
#   PP_CCCL_NEW_INCLUDE  CCCL headers new enough for cub::DeviceTopK (CCCL >= 3.3), used by
#                        bench/peer_cub_topk.cu alone, which then gets PP_HAVE_CUB_TOPK
#   PP_NPP_ROOT          a directory with NPP's include/ and lib/ (or lib64/): the toolkit's
#                        own NPP, or the nvidia-npp wheel; bench/peer_npp.cu then gets
#                        PP_HAVE_NPP and the command links libnppc, libnppif and libnppist
# Left undefined, each is looked for: a .wheels/ folder of the source tree (filled by
# scripts/bench_wheels.sh), the toolkit (NPP), then the Python site-packages' nvidia/cu13
# (pip's nvidia-cuda-cccl and nvidia-npp). Set one to the empty string to build without it.
# bench/peer_*.cu are globbed into the command with the other bench sources; without their
# dependency they compile to stubs, and the bench names the missing peer in its notes.
# Only the command uses these; the library never does.

if(NOT (TARGET parprim_cli AND PP_HAVE_CUDA))
  return()
endif()

set(_pp_site "")
find_program(PP_PYTHON3 NAMES python3 python)
if(PP_PYTHON3)
  execute_process(
    COMMAND ${PP_PYTHON3} -c
      "import site; print(';'.join(site.getsitepackages() + [site.getusersitepackages()]))"
    OUTPUT_VARIABLE _pp_site OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
set(_pp_wheels ${CMAKE_CURRENT_SOURCE_DIR}/.wheels)

# The first directory of ARGN that `probe` accepts (probe(dir result) sets result to a
# non-empty value), or the empty string, into out.
function(pp_first_found out probe)
  foreach(dir ${ARGN})
    cmake_language(CALL ${probe} ${dir} _r)
    if(_r)
      set(${out} ${dir} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()

# The directory the cache variable `var` names (set by hand, or found above) run through
# `probe`: its result into out (and out_libs), or a fatal error naming what is missing.
function(pp_probe_given var probe what out)
  cmake_language(CALL ${probe} ${${var}} _r)
  if(NOT _r)
    message(FATAL_ERROR "${var}=${${var}}: no ${what} there; set it to another directory "
                        "or to the empty string")
  endif()
  set(${out} ${_r} PARENT_SCOPE)
  set(${out}_libs ${_r_libs} PARENT_SCOPE)
endfunction()

# ---- CCCL >= 3.3 for cub::DeviceTopK -------------------------------------------------------
# CUB_VERSION (cub/version.cuh) is MMMmmpp: 300300 is 3.3.0. out: that number when dir holds
# cub/device/device_topk.cuh and it is at least 300300, else empty.
function(pp_cccl_probe dir out)
  set(${out} "" PARENT_SCOPE)
  if(EXISTS ${dir}/cub/version.cuh AND EXISTS ${dir}/cub/device/device_topk.cuh)
    file(STRINGS ${dir}/cub/version.cuh _v REGEX "^#define CUB_VERSION [0-9]+")
    string(REGEX REPLACE "^#define CUB_VERSION ([0-9]+).*" "\\1" _v "${_v}")
    if(_v GREATER_EQUAL 300300)
      set(${out} ${_v} PARENT_SCOPE)
    endif()
  endif()
endfunction()

if(NOT DEFINED PP_CCCL_NEW_INCLUDE)
  set(_cands ${_pp_wheels}/cccl/nvidia/cu13/include/cccl)
  foreach(sp ${_pp_site})
    list(APPEND _cands ${sp}/nvidia/cu13/include/cccl)
  endforeach()
  pp_first_found(_found pp_cccl_probe ${_cands})
  set(PP_CCCL_NEW_INCLUDE "${_found}" CACHE PATH
      "CCCL >= 3.3 headers for the bench's cub::DeviceTopK peer (empty: none)")
endif()

set(PP_BENCH_GPU_PEERS_FOUND "")
set(PP_BENCH_GPU_PEERS_MISSING "")
set(_topk_src ${CMAKE_CURRENT_SOURCE_DIR}/bench/peer_cub_topk.cu)
if(PP_CCCL_NEW_INCLUDE)
  pp_probe_given(PP_CCCL_NEW_INCLUDE pp_cccl_probe
                 "CCCL >= 3.3 (cub/device/device_topk.cuh and CUB_VERSION >= 300300)" _v)
  # Only this file sees the newer headers; its include directory is searched before the
  # toolkit's CCCL, which nvcc adds last (-isystem, nvcc.profile). CUB's versioned inline
  # namespace keeps the two CCCL versions apart in one program (bench/peer_cub_topk.cu).
  set_source_files_properties(${_topk_src} PROPERTIES
    INCLUDE_DIRECTORIES "${PP_CCCL_NEW_INCLUDE}"
    COMPILE_DEFINITIONS PP_HAVE_CUB_TOPK=1)
  math(EXPR _maj "${_v} / 100000")
  math(EXPR _min "${_v} / 100 % 1000")
  list(APPEND PP_BENCH_GPU_PEERS_FOUND "CUB DeviceTopK (CCCL ${_maj}.${_min})")
else()
  list(APPEND PP_BENCH_GPU_PEERS_MISSING "CUB DeviceTopK")
endif()

# ---- NPP -----------------------------------------------------------------------------------
# A root holds include/nppi_filtering_functions.h and libnppif in lib64/ or lib/; the
# wheels ship only the versioned files (libnppif.so.13), the toolkit the plain names too.
# out: the include directory, out_libs the libraries; both empty when root has no NPP.
function(pp_npp_probe root out)
  set(${out} "" PARENT_SCOPE)
  set(${out}_libs "" PARENT_SCOPE)
  # find_* with NO_CACHE do not search when their variable is already set, also to a value
  # inherited from the caller: start from unset names
  unset(_pp_npp_inc)
  find_path(_pp_npp_inc nppi_filtering_functions.h PATHS ${root}/include NO_DEFAULT_PATH
            NO_CACHE)
  if(NOT _pp_npp_inc)
    return()
  endif()
  set(_pp_npp_libs "")
  foreach(l nppc nppif nppist)
    unset(_pp_npp_lib)
    find_library(_pp_npp_lib NAMES ${l} lib${l}.so.13 PATHS ${root}/lib64 ${root}/lib
                 NO_DEFAULT_PATH NO_CACHE)
    if(NOT _pp_npp_lib)
      return()
    endif()
    list(APPEND _pp_npp_libs ${_pp_npp_lib})
  endforeach()
  set(${out} ${_pp_npp_inc} PARENT_SCOPE)
  set(${out}_libs ${_pp_npp_libs} PARENT_SCOPE)
endfunction()

if(NOT DEFINED PP_NPP_ROOT)
  set(_cands "")
  if(CUDAToolkit_LIBRARY_DIR)
    get_filename_component(_tk ${CUDAToolkit_LIBRARY_DIR} DIRECTORY)
    list(APPEND _cands ${_tk})
  endif()
  if(CUDAToolkit_TARGET_DIR)
    list(APPEND _cands ${CUDAToolkit_TARGET_DIR})
  endif()
  list(APPEND _cands ${_pp_wheels}/npp/nvidia/cu13)
  foreach(sp ${_pp_site})
    list(APPEND _cands ${sp}/nvidia/cu13)
  endforeach()
  pp_first_found(_found pp_npp_probe ${_cands})
  set(PP_NPP_ROOT "${_found}" CACHE PATH
      "Directory with NPP's include/ and lib/ for the bench's NPP peers (empty: none)")
endif()

if(PP_NPP_ROOT)
  pp_probe_given(PP_NPP_ROOT pp_npp_probe
                 "NPP (include/nppi_filtering_functions.h and libnppc, libnppif, libnppist in lib64/ or lib/)"
                 _inc)
  set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/bench/peer_npp.cu PROPERTIES
    INCLUDE_DIRECTORIES "${_inc}"
    COMPILE_DEFINITIONS PP_HAVE_NPP=1)
  # linked by path: the program records their sonames (libnppif.so.13, ...), which the
  # loader finds at run time in the build's RUNPATH or, on another machine, through
  # LD_LIBRARY_PATH (the toolkit's lib64, where its NPP lives)
  target_link_libraries(parprim_cli PRIVATE ${_inc_libs})
  set(_npp_ver "")
  if(EXISTS ${_inc}/npp.h)
    file(STRINGS ${_inc}/npp.h _m REGEX "^#define NPP_VER_(MAJOR|MINOR) [0-9]+")
    string(REGEX REPLACE ".*MAJOR ([0-9]+).*MINOR ([0-9]+).*" "\\1.\\2" _npp_ver "${_m}")
  endif()
  list(APPEND PP_BENCH_GPU_PEERS_FOUND "NPP ${_npp_ver} (${PP_NPP_ROOT})")
else()
  list(APPEND PP_BENCH_GPU_PEERS_MISSING NPP)
endif()

message(STATUS "parprim: GPU bench peers found: ${PP_BENCH_GPU_PEERS_FOUND}; "
               "missing: ${PP_BENCH_GPU_PEERS_MISSING}")
