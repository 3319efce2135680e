# CBLAS for the CPU backend's SGEMM: when the build finds OpenBLAS (Debian: libopenblas-dev,
# its pthread or its OpenMP flavour, whichever the alternatives system points libopenblas.so
# at), src/cpu/sgemm.c calls cblas_sgemm and keeps its own packed kernel as the fallback for
# builds without it. docs/benchmarks/cpu.md has the measurements behind the choice.
#
# OpenBLAS rather than any CBLAS: the backend sets OpenBLAS's thread count to the context's
# before each call (openblas_set_num_threads), so the two thread pools never run more
# threads than the context asked for. The library is linked by its path: the shared library
# keeps it private, the static one passes it on, and the pkg-config files and the CMake
# package get it from the link interface (pp_link_flags in CMakeLists.txt) as -lopenblas.
# A Python wheel (scikit-build) must not depend on the build machine's OpenBLAS: there the
# default is the own kernel.
if(SKBUILD)
  set(pp_cblas_default OFF)
else()
  set(pp_cblas_default ON)
endif()
option(PP_ENABLE_CBLAS "Let the CPU backend's SGEMM call OpenBLAS's cblas_sgemm when found"
       ${pp_cblas_default})

set(PP_HAVE_CBLAS OFF)
if(PP_ENABLE_CBLAS)
  find_path(PP_OPENBLAS_INCLUDE_DIR cblas.h openblas_config.h
            PATH_SUFFIXES openblas x86_64-linux-gnu aarch64-linux-gnu)
  find_library(PP_OPENBLAS_LIBRARY NAMES openblas)
  if(PP_OPENBLAS_INCLUDE_DIR AND PP_OPENBLAS_LIBRARY)
    include(CheckSymbolExists)
    set(CMAKE_REQUIRED_INCLUDES ${PP_OPENBLAS_INCLUDE_DIR})
    set(CMAKE_REQUIRED_LIBRARIES ${PP_OPENBLAS_LIBRARY})
    set(CMAKE_REQUIRED_QUIET ON)
    check_symbol_exists(openblas_set_num_threads "cblas.h" PP_OPENBLAS_THREADS_API)
    unset(CMAKE_REQUIRED_INCLUDES)
    unset(CMAKE_REQUIRED_LIBRARIES)
    unset(CMAKE_REQUIRED_QUIET)
    if(PP_OPENBLAS_THREADS_API)
      set(PP_HAVE_CBLAS ON)
    endif()
  endif()
endif()

if(PP_HAVE_CBLAS)
  file(STRINGS "${PP_OPENBLAS_INCLUDE_DIR}/openblas_config.h" pp_ob_version
       REGEX "#define OPENBLAS_VERSION")
  string(REGEX REPLACE ".*\"[ ]*([^\"]*[^ \"])[ ]*\".*" "\\1" pp_ob_version "${pp_ob_version}")
  message(STATUS "parprim: CPU SGEMM calls cblas_sgemm (${pp_ob_version}, ${PP_OPENBLAS_LIBRARY})")
  target_compile_definitions(parprim_objects PRIVATE PP_HAVE_CBLAS=1)
  target_include_directories(parprim_objects SYSTEM PRIVATE ${PP_OPENBLAS_INCLUDE_DIR})
  target_link_libraries(parprim PRIVATE ${PP_OPENBLAS_LIBRARY})
  target_link_libraries(parprim_static PUBLIC ${PP_OPENBLAS_LIBRARY})
  if(TARGET parprim_cli)
    # `parprim info` names the SGEMM the CPU backend runs; the command built from the
    # library objects (CUDA, static) links OpenBLAS itself
    target_compile_definitions(parprim_cli PRIVATE PP_CPU_SGEMM_NAME="cblas_sgemm, ${pp_ob_version}")
    target_link_libraries(parprim_cli PRIVATE ${PP_OPENBLAS_LIBRARY})
  endif()
else()
  message(STATUS "parprim: CPU SGEMM is parprim's own kernel (no OpenBLAS found)")
endif()
