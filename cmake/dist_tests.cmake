# dist_tests.cmake — the distributed tests under MPI. Every tests/test_dist*.c (registered
# by CMakeLists.txt as an ordinary test program, which also runs it as a one-rank job) gets
# MPI's headers and libraries, and runs on the CPU backend under mpiexec with 1, 2, 3 and 4
# ranks: odd rank counts matter, and CI's two cores are oversubscribed on purpose (one
# OpenMP thread per rank). The same programs run on GPUs by hand (docs/distributed.md):
#   mpirun -np 4 build/test_dist cuda
include(${CMAKE_CURRENT_LIST_DIR}/dist_link.cmake)

if(PP_HAVE_MPI)
  # Open MPI: root in CI containers, more ranks than cores, shared memory and loopback
  # transports only (no network in the container; CMA may be forbidden there).
  set(PP_MPI_TEST_ENV
      OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
      OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
      OMPI_MCA_rmaps_base_oversubscribe=1
      OMPI_MCA_btl=self,vader
      OMPI_MCA_btl_vader_single_copy_mechanism=none)
  file(GLOB PP_DIST_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/tests/test_dist*.c)
  foreach(src ${PP_DIST_TEST_SOURCES})
    get_filename_component(name ${src} NAME_WE)
    if(NOT TARGET ${name})
      continue()
    endif()
    target_compile_definitions(${name} PRIVATE PP_HAVE_MPI=1)
    target_include_directories(${name} SYSTEM PRIVATE ${MPI_C_INCLUDE_DIRS})
    target_link_libraries(${name} PRIVATE ${MPI_C_LIBRARIES})
    if(PP_HAVE_NCCL)
      # the test makes an NCCL communicator of its own, for pp_create_from_comm
      target_compile_definitions(${name} PRIVATE PP_TEST_NCCL=1)
      target_include_directories(${name} SYSTEM PRIVATE ${PP_NCCL_INCLUDE_DIR})
      target_link_libraries(${name} PRIVATE ${PP_NCCL_LIBRARY} CUDA::cudart)
    endif()
    foreach(test ${name}_cpu ${name}_cuda)
      if(TEST ${test})
        set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT ${PP_MPI_TEST_ENV})
      endif()
    endforeach()
    # These one-process runs start MPI in-process (a singleton), and Open MPI leaves
    # allocations behind in components it has already unloaded, which no suppression can
    # name: under AddressSanitizer they keep every memory check but the leak check.
    if(TEST ${name}_cpu)
      set_property(TEST ${name}_cpu APPEND PROPERTY ENVIRONMENT
                   "ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=0")
    endif()
    foreach(np 1 2 3 4)
      add_test(NAME ${name}_mpi${np}_cpu
               COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${MPIEXEC_PREFLAGS}
                       $<TARGET_FILE:${name}> cpu ${MPIEXEC_POSTFLAGS})
      set_tests_properties(${name}_mpi${np}_cpu PROPERTIES
                           LABELS "cpu;mpi" TIMEOUT 600 PROCESSORS ${np}
                           ENVIRONMENT "${PP_MPI_TEST_ENV}")
    endforeach()
  endforeach()
endif()
