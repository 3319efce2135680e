# The Debian package (cpack -G DEB in the build directory) and the consumer tests: an
# installed tree, and the package unpacked, used by projects outside this one the way
# docs/linking.md says.

# ---- Debian package --------------------------------------------------------------------
# One package, `parprim`: the shared and static libraries, the header, the pkg-config files,
# the CMake package and the `parprim` command, under /usr. The maintainer and the
# dependencies may be given on the cmake command line (-DCPACK_DEBIAN_PACKAGE_MAINTAINER=...;
# -DCPACK_DEBIAN_PACKAGE_DEPENDS=... adds to what dpkg-shlibdeps finds, or replaces the list
# by hand).
set(CPACK_PACKAGE_NAME parprim)
set(CPACK_PACKAGE_VENDOR parprim)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "data-parallel primitives for NVIDIA GPUs and CPUs, from C")
set(CPACK_PACKAGE_DESCRIPTION
    "Reduce, scan, compaction, histogram, sort, merge, top-k, SGEMM, image convolution and N-body from plain C, on a GPU (CUDA) or any CPU (OpenMP), with the same API. Holds the shared and static libraries, parprim.h, pkg-config files (parprim, parprim-static), the CMake package (find_package(parprim)) and the parprim command.")
set(CPACK_GENERATOR DEB)
# installed with DESTDIR, so the install step sees the real prefix (/usr) and writes it
# into the pkg-config files
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
if(NOT DEFINED CPACK_DEBIAN_PACKAGE_MAINTAINER)
  set(CPACK_DEBIAN_PACKAGE_MAINTAINER "parprim maintainers <maintainers@parprim.invalid>")
endif()
# What the binaries load at run time. dpkg-shlibdeps (dpkg-dev) reads it from them and names
# the packages that hold each library: libgomp1, the command's libpng, libjpeg and cairo,
# MPI and NCCL when built with them, and the CUDA runtime where a package installed it.
# Without it, a list by hand. A toolkit installed from NVIDIA's runfile belongs to no
# package, so the CUDA runtime is also recommended by the name NVIDIA's packages give it
# (only recommended: a hard dependency would refuse to install beside a runfile toolkit).
# A CUDA build needs libcudart.so at run time, and the toolkit's libcudadevrt.a to link
# the static library.
find_program(PP_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(PP_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
elseif(NOT DEFINED CPACK_DEBIAN_PACKAGE_DEPENDS)
  set(PP_DEB_DEPENDS "libc6" "libgomp1")
  if(CMAKE_CXX_COMPILER_LOADED)
    list(APPEND PP_DEB_DEPENDS "libstdc++6") # the command's C++ parts, CUDA's host code
  endif()
  if(PP_BUILD_TOOLS)
    list(APPEND PP_DEB_DEPENDS "libpng16-16" "libjpeg62-turbo | libjpeg8" "libcairo2")
  endif()
  if(PP_STATIC_FLAGS MATCHES "-lmpi")
    list(APPEND PP_DEB_DEPENDS "libopenmpi3 | libopenmpi40 | libmpich12")
  endif()
  if(PP_STATIC_FLAGS MATCHES "-l:?(lib)?nccl")
    list(APPEND PP_DEB_DEPENDS "libnccl2")
  endif()
  list(JOIN PP_DEB_DEPENDS ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
endif()
if(PP_HAVE_CUDA AND NOT DEFINED CPACK_DEBIAN_PACKAGE_RECOMMENDS)
  set(PP_CUDA_DEB_VERSION "${CUDAToolkit_VERSION_MAJOR}-${CUDAToolkit_VERSION_MINOR}")
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "cuda-cudart-${PP_CUDA_DEB_VERSION}")
  if(PP_STATIC_FLAGS MATCHES "-l:?(lib)?nccl")
    # NCCL too may come from outside any package (the pip wheel, the toolkit's folder)
    string(APPEND CPACK_DEBIAN_PACKAGE_RECOMMENDS ", libnccl2")
  endif()
  set(CPACK_DEBIAN_PACKAGE_SUGGESTS "cuda-cudart-dev-${PP_CUDA_DEB_VERSION}")
endif()
include(CPack)

# ---- consumer tests ----------------------------------------------------------------------
# Each builds and runs tests/consumer/app.c (or app.cpp) outside this project, against
# the build installed into a fresh prefix (consumer_install, run once before the others):
# pkg-config shared and static, the CMake package from C and from C++ alone, and the Debian
# package unpacked with dpkg -x. They reuse the built library (`make test` builds
# everything first) and take the compiler and flags of this build, so that a sanitizer
# build's consumers link its runtime too.
if(PP_BUILD_TESTS)
  if(NOT CMAKE_CXX_COMPILER_LOADED)
    include(CheckLanguage)
    check_language(CXX)
  endif()
  find_program(PP_PKG_CONFIG NAMES pkg-config pkgconf)
  find_program(PP_DPKG dpkg)
  set(PP_CONSUMER_DIR ${CMAKE_CURRENT_BINARY_DIR}/consumer)
  set(PP_CUDA_ROOT "")
  if(PP_HAVE_CUDA)
    get_filename_component(PP_CUDA_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
  endif()
  set(PP_CONSUMER_ENV
    "PP_BUILD=${CMAKE_CURRENT_BINARY_DIR}"
    "PP_SOURCE=${CMAKE_CURRENT_SOURCE_DIR}"
    "PP_PREFIX=${PP_CONSUMER_DIR}/prefix"
    "PP_LIBDIR=${CMAKE_INSTALL_LIBDIR}"
    "PP_VERSION=${PROJECT_VERSION}"
    "PP_CUDA=${PP_HAVE_CUDA}"
    "PP_TOOLS=${PP_BUILD_TOOLS}"
    "PP_GENERATOR=${CMAKE_GENERATOR}"
    "PP_CUDA_ROOT=${PP_CUDA_ROOT}"
    "PKG_CONFIG=${PP_PKG_CONFIG}"
    "CMAKE=${CMAKE_COMMAND}"
    "CPACK=${CMAKE_CPACK_COMMAND}"
    "CC=${CMAKE_C_COMPILER}"
    "CXX=${CMAKE_CXX_COMPILER}"
    "CFLAGS=${CMAKE_C_FLAGS}"
    "CXXFLAGS=${CMAKE_CXX_FLAGS}"
    "LDFLAGS=${CMAKE_EXE_LINKER_FLAGS}"
    "OMP_WAIT_POLICY=passive")
  function(pp_consumer_test mode)
    add_test(NAME consumer_${mode}
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tests/consumer/run.sh ${mode}
                     ${PP_CONSUMER_DIR}/${mode})
    set_tests_properties(consumer_${mode} PROPERTIES LABELS consumer TIMEOUT 300
                         ENVIRONMENT "${PP_CONSUMER_ENV}" SKIP_RETURN_CODE 77
                         FIXTURES_REQUIRED consumer_prefix)
  endfunction()
  pp_consumer_test(install)
  set_tests_properties(consumer_install PROPERTIES FIXTURES_REQUIRED ""
                       FIXTURES_SETUP consumer_prefix)
  pp_consumer_test(pkgconfig_shared)
  pp_consumer_test(pkgconfig_static)
  pp_consumer_test(cmake_c)
  pp_consumer_test(cmake_cxx)
  pp_consumer_test(deb)
  # the package is made from the build tree, not the installed prefix
  set_tests_properties(consumer_deb PROPERTIES FIXTURES_REQUIRED "")
  # two tests that may each run cmake --install / cpack on the same build tree
  set_tests_properties(consumer_install consumer_deb PROPERTIES RESOURCE_LOCK pp_build_tree)
endif()
