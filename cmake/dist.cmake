# dist.cmake — the engines of distributed contexts (src/dist), each optional:
#   MPI  (CPU ranks, and CUDA ranks started with id NULL): FindMPI's C component, e.g.
#        Debian's libopenmpi-dev;
#   NCCL (CUDA ranks; only with the CUDA backend): the CUDA toolkit's copy (nccl.h and
#        libnccl.so beside the toolkit), NCCL_HOME, or the pip wheel nvidia-nccl-cu13
#        (python3 -c "import nvidia.nccl" gives the folder holding include/ and lib/).
# Without one of them the library still builds and the distributed functions that need it
# return PP_ERR_UNSUPPORTED naming what is missing.
#
# Included right after parprim_objects is defined. Sets:
#   PP_DIST_LIBS     the libraries the library targets link (cmake/dist_link.cmake links
#                    them once parprim and parprim_static exist)
#   PP_DIST_PC_LIBS  the same for parprim.pc's Libs.private ("-L... -lnccl -lmpi")
#   PP_HAVE_MPI, PP_HAVE_NCCL (ON/OFF), PP_MPI_INCLUDE_DIRS

option(PP_ENABLE_MPI "Build the MPI engine of distributed contexts when MPI is found" ON)
option(PP_ENABLE_NCCL "Build the NCCL engine of distributed contexts when NCCL is found" ON)

set(PP_DIST_LIBS "")
set(PP_DIST_PC_LIBS "")
set(PP_HAVE_MPI OFF)
set(PP_HAVE_NCCL OFF)

if(PP_ENABLE_MPI)
  find_package(MPI QUIET COMPONENTS C)
  if(MPI_C_FOUND)
    set(PP_HAVE_MPI ON)
    set(PP_MPI_INCLUDE_DIRS ${MPI_C_INCLUDE_DIRS})
    target_compile_definitions(parprim_objects PRIVATE PP_HAVE_MPI=1)
    target_include_directories(parprim_objects SYSTEM PRIVATE ${MPI_C_INCLUDE_DIRS})
    list(APPEND PP_DIST_LIBS ${MPI_C_LIBRARIES})
    foreach(l ${MPI_C_LIBRARIES})
      get_filename_component(d ${l} DIRECTORY)
      get_filename_component(n ${l} NAME_WE)
      string(REGEX REPLACE "^lib" "" n ${n})
      string(APPEND PP_DIST_PC_LIBS " -L${d} -l${n}")
    endforeach()
  endif()
endif()

if(PP_ENABLE_NCCL AND PP_HAVE_CUDA)
  set(pp_nccl_hints ${CUDAToolkit_LIBRARY_ROOT} ${CUDAToolkit_TARGET_DIR})
  if(DEFINED ENV{NCCL_HOME})
    list(APPEND pp_nccl_hints $ENV{NCCL_HOME})
  endif()
  find_package(Python3 QUIET COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    execute_process(
      COMMAND ${Python3_EXECUTABLE} -c "import nvidia.nccl as m; print(list(m.__path__)[0])"
      OUTPUT_VARIABLE pp_nccl_wheel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
      RESULT_VARIABLE pp_nccl_wheel_rc)
    if(pp_nccl_wheel_rc EQUAL 0 AND pp_nccl_wheel)
      list(APPEND pp_nccl_hints ${pp_nccl_wheel})
    endif()
  endif()
  find_path(PP_NCCL_INCLUDE_DIR nccl.h
            HINTS ${CUDAToolkit_INCLUDE_DIRS} PATHS ${pp_nccl_hints} PATH_SUFFIXES include)
  # the wheel ships libnccl.so.2 only
  find_library(PP_NCCL_LIBRARY NAMES nccl libnccl.so.2
               HINTS ${CUDAToolkit_LIBRARY_DIR} PATHS ${pp_nccl_hints} PATH_SUFFIXES lib lib64)
  if(PP_NCCL_INCLUDE_DIR AND PP_NCCL_LIBRARY)
    set(PP_HAVE_NCCL ON)
    target_compile_definitions(parprim_objects PRIVATE PP_HAVE_NCCL=1)
    target_include_directories(parprim_objects SYSTEM PRIVATE ${PP_NCCL_INCLUDE_DIR})
    list(APPEND PP_DIST_LIBS ${PP_NCCL_LIBRARY})
    get_filename_component(d ${PP_NCCL_LIBRARY} DIRECTORY)
    string(APPEND PP_DIST_PC_LIBS " -L${d} -lnccl")
  endif()
endif()

string(STRIP "${PP_DIST_PC_LIBS}" PP_DIST_PC_LIBS)
message(STATUS "parprim: distributed engines: MPI ${PP_HAVE_MPI}, NCCL ${PP_HAVE_NCCL}")
