# The parprim command's image formats and plots (cmake/image_libs.cmake), and its tests:
# every file it reads or writes, each failure it must survive.
include(${CMAKE_CURRENT_LIST_DIR}/image_libs.cmake)
if(NOT DEFINED PP_CLI_IMAGE_LIBS)
  message(FATAL_ERROR
    "parprim: the parprim command needs libpng, libjpeg and cairo (found: PNG ${PNG_FOUND}, "
    "JPEG ${JPEG_FOUND}, cairo ${PP_CAIRO_FOUND}). On Debian or Ubuntu: apt-get install "
    "pkg-config libpng-dev libjpeg-dev libcairo2-dev. Or build the library alone with "
    "-DPP_BUILD_TOOLS=OFF.")
endif()
target_link_libraries(parprim_cli PRIVATE ${PP_CLI_IMAGE_LIBS})

if(PP_BUILD_TESTS)
  enable_testing()
  # Writes the test images (PNG of every colour type and depth, JPEG, PGM/PPM) with the
  # libraries' encoders, with the counts and pixels they must decode to. Named test_* so
  # that scripts/carry.sh packs it with the test programs for the GPU machine.
  add_executable(test_cli_imgen tests/cli_testimg.c)
  target_link_libraries(test_cli_imgen PRIVATE ${PP_IMAGE_LIBS} m)
  target_compile_options(test_cli_imgen PRIVATE ${PP_C_WARNINGS})
  foreach(t files images messages progress)
    add_test(NAME cli_${t} COMMAND ${CMAKE_COMMAND}
             -DCLI=$<TARGET_FILE:parprim_cli> -DIMG=$<TARGET_FILE:test_cli_imgen>
             -DWORK=${CMAKE_CURRENT_BINARY_DIR}/cli_${t}
             -P ${CMAKE_CURRENT_SOURCE_DIR}/tests/cli_${t}.cmake)
    # LSAN_OPTIONS: for a sanitizer build (CI's), fontconfig's process-long cache is not
    # the command's leak (tests/cli_lsan.supp); other builds ignore it
    set_tests_properties(cli_${t} PROPERTIES LABELS cpu TIMEOUT 300 SKIP_REGULAR_EXPRESSION "SKIP:"
      ENVIRONMENT "PARPRIM_BACKEND=cpu;OMP_WAIT_POLICY=passive;LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/tests/cli_lsan.supp")
  endforeach()
endif()
