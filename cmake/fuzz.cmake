# Fuzzing harnesses (libFuzzer, https://llvm.org/docs/LibFuzzer.html), one executable per
# harness, built only with -DPP_FUZZ=ON and clang (scripts/fuzz.sh configures such a build
# and runs them):
#   fuzz_api      random sequences of library calls against the CPU backend (fuzz/fuzz_api.c)
#   fuzz_image    the command's image decoders (cli/image_io.c, libpng and libjpeg)
#   fuzz_filter   the command's filter-file reader (cli/filter_file.c)
#   fuzz_raw      the command's raw-array reader (cli/raw_file.c)
# A harness is added only when its source is in the tree. The library objects are built
# with -fsanitize=fuzzer-no-link (coverage for the fuzzer, no main) plus AddressSanitizer
# and UndefinedBehaviorSanitizer, so a finding inside the library is caught where it happens.
option(PP_FUZZ "Build the libFuzzer harnesses (clang only; see scripts/fuzz.sh)" OFF)

if(PP_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "parprim: PP_FUZZ needs clang (libFuzzer), not ${CMAKE_C_COMPILER_ID}: "
                        "cmake -DCMAKE_C_COMPILER=clang -DPP_FUZZ=ON ...")
  endif()
  if(PP_HAVE_CUDA)
    message(FATAL_ERROR "parprim: PP_FUZZ builds the CPU backend only: add -DPP_ENABLE_CUDA=OFF")
  endif()
  # pointer-overflow is left out: with n == 0 the API allows NULL data, and the CPU
  # backend's loops form `p + 0` from it, which C11 leaves undefined (6.5.6p8) and clang's
  # check reports, though no byte is touched; ASan still catches every access out of bounds
  set(PP_FUZZ_SAN -fsanitize=address,undefined -fno-sanitize=pointer-overflow
                  -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g)
  # The library's warnings are made errors by the gcc builds; here clang's own (unused
  # functions that macros stamp out for every type, `omp simd` loops it cannot vectorize
  # under the sanitizers) stay warnings, so a fuzzing build never fails on them.
  target_compile_options(parprim_objects PRIVATE -fsanitize=fuzzer-no-link ${PP_FUZZ_SAN}
                         -Wno-error -Wno-pass-failed)

  # pp_fuzz_harness(name SOURCES files... [LIBS libs...])
  function(pp_fuzz_harness name)
    cmake_parse_arguments(F "" "" "SOURCES;LIBS" ${ARGN})
    foreach(src ${F_SOURCES})
      if(NOT EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${src})
        message(STATUS "parprim: fuzz harness ${name} left out (${src} is not in the tree)")
        return()
      endif()
    endforeach()
    add_executable(${name} ${F_SOURCES})
    target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cli
                                               ${CMAKE_CURRENT_SOURCE_DIR}/include)
    target_compile_options(${name} PRIVATE ${PP_C_WARNINGS} -fsanitize=fuzzer ${PP_FUZZ_SAN})
    target_link_options(${name} PRIVATE -fsanitize=fuzzer ${PP_FUZZ_SAN})
    target_link_libraries(${name} PRIVATE ${F_LIBS})
    set_property(GLOBAL APPEND PROPERTY PP_FUZZ_HARNESSES ${name})
  endfunction()

  pp_fuzz_harness(fuzz_api SOURCES fuzz/fuzz_api.c LIBS parprim_static)
  pp_fuzz_harness(fuzz_filter SOURCES fuzz/fuzz_filter.c cli/filter_file.c LIBS m)
  pp_fuzz_harness(fuzz_raw SOURCES fuzz/fuzz_raw.c cli/raw_file.c)
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_image.c)
    # the codecs the command links (PP_IMAGE_LIBS: libpng, libjpeg), found by the command's
    # own CMake file, which the fuzzing build (no tools) does not include otherwise
    if(NOT DEFINED PP_IMAGE_LIBS AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/cmake/image_libs.cmake)
      include(${CMAKE_CURRENT_SOURCE_DIR}/cmake/image_libs.cmake)
    endif()
    if(DEFINED PP_IMAGE_LIBS)
      pp_fuzz_harness(fuzz_image SOURCES fuzz/fuzz_image.c cli/image_io.c LIBS ${PP_IMAGE_LIBS})
    else()
      message(STATUS "parprim: fuzz harness fuzz_image left out (no libpng/libjpeg found)")
    endif()
  endif()

  # the list scripts/fuzz.sh runs, one name a line
  get_property(PP_FUZZ_LIST GLOBAL PROPERTY PP_FUZZ_HARNESSES)
  string(REPLACE ";" "\n" PP_FUZZ_LINES "${PP_FUZZ_LIST}")
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/fuzz_harnesses.txt "${PP_FUZZ_LINES}\n")
endif()
