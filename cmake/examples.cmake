# examples/: one short C program per family, linked as a user links them (the shared
# library, parprim::parprim), and run by ctest (label `examples`) on small inputs.
set(PP_EXAMPLES reduce_scan sort_numbers topk_numbers histogram_image blur_image nbody_energy
    dist_sort)
foreach(ex ${PP_EXAMPLES})
  add_executable(example_${ex} examples/${ex}.c)
  set_target_properties(example_${ex} PROPERTIES OUTPUT_NAME ${ex}
                        RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/examples)
  target_link_libraries(example_${ex} PRIVATE parprim::parprim m)
  target_compile_options(example_${ex} PRIVATE ${PP_C_WARNINGS})
endforeach()

if(PP_BUILD_TESTS)
  set(PP_EXAMPLE_DIR ${CMAKE_CURRENT_BINARY_DIR}/examples)
  set(PP_NUMBERS ${CMAKE_CURRENT_SOURCE_DIR}/examples/data/numbers.txt)
  # name, then the command line; each program checks its own answer and exits non-zero
  # when it is wrong
  function(pp_example name)
    add_test(NAME example_${name} COMMAND ${ARGN} WORKING_DIRECTORY ${PP_EXAMPLE_DIR})
    set_tests_properties(example_${name} PROPERTIES LABELS examples TIMEOUT 120
                         ENVIRONMENT OMP_WAIT_POLICY=passive)
  endfunction()
  pp_example(reduce_scan example_reduce_scan)
  pp_example(sort_numbers example_sort_numbers ${PP_NUMBERS})
  pp_example(topk_numbers example_topk_numbers 5 ${PP_NUMBERS})
  pp_example(histogram_image example_histogram_image)
  pp_example(nbody_energy example_nbody_energy 256 500)
  # the blurred test card is read back: PGM out, then PGM in
  pp_example(blur_image example_blur_image blurred.pgm)
  pp_example(blur_image_file example_blur_image blurred.pgm blurred_again.pgm 1.5)
  pp_example(histogram_image_file example_histogram_image blurred.pgm)
  set_tests_properties(example_blur_image PROPERTIES FIXTURES_SETUP example_blurred)
  set_tests_properties(example_blur_image_file example_histogram_image_file PROPERTIES
                       FIXTURES_REQUIRED example_blurred)

  # The distributed sort runs on two processes under MPI. Until the library is built with
  # its MPI engine (or NCCL for a GPU build) every rank exits 77: skipped, not passed.
  if(NOT MPIEXEC_EXECUTABLE)
    find_package(MPI QUIET COMPONENTS C)
  endif()
  if(MPIEXEC_EXECUTABLE)
    set(PP_MPIEXEC_FLAGS ${MPIEXEC_PREFLAGS})
    execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE PP_MPIEXEC_VERSION
                    ERROR_QUIET)
    if(PP_MPIEXEC_VERSION MATCHES "Open MPI|OpenRTE")
      # two ranks on a machine that may have fewer cores
      list(APPEND PP_MPIEXEC_FLAGS --oversubscribe)
    endif()
    # CPU ranks: two CUDA ranks on a machine with one GPU would share it, which NCCL refuses
    pp_example(dist_sort ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${PP_MPIEXEC_FLAGS}
               $<TARGET_FILE:example_dist_sort> 20000 cpu ${MPIEXEC_POSTFLAGS})
    # Open MPI refuses to start as root (CI runs as root) unless told twice; one OpenMP
    # thread per rank, as the ranks share the cores. Under AddressSanitizer leaks are not
    # checked here: Open MPI leaves allocations behind in components it has unloaded by
    # the time LeakSanitizer reports, where no suppression can name them.
    set_tests_properties(example_dist_sort PROPERTIES SKIP_RETURN_CODE 77 ENVIRONMENT
      "OMP_WAIT_POLICY=passive;OMP_NUM_THREADS=1;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1")
  endif()
endif()
