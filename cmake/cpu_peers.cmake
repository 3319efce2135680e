# The CPU peers of `parprim bench --backend cpu`, each built into the command when found
# and named as missing otherwise (bench/peer_cpu_*.cpp compile to stubs without them):
#   OpenBLAS   cblas_sgemm                           PP_PEER_OPENBLAS
#   OpenCV     cv::filter2D, sepFilter2D, calcHist   PP_PEER_OPENCV   (core, imgproc)
#   TBB        the standard library's parallel       PP_PEER_TBB      (libstdc++'s
#              algorithms (std::execution::par)                        backend for them)
# Only the command links them; the library never does (except OpenBLAS for its own SGEMM,
# cmake/cpu_blas.cmake, included from here so one line of CMakeLists.txt brings both).
include(${CMAKE_CURRENT_LIST_DIR}/cpu_blas.cmake)

option(PP_BENCH_CPU_PEERS "Build OpenBLAS, OpenCV and TBB into parprim bench when found" ON)
if(TARGET parprim_cli AND PP_BENCH_CPU_PEERS)
  set(PP_CPU_PEERS_FOUND "")
  set(PP_CPU_PEERS_MISSING "")

  if(NOT PP_HAVE_CBLAS)
    find_path(PP_OPENBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas x86_64-linux-gnu)
    find_library(PP_OPENBLAS_LIBRARY NAMES openblas)
  endif()
  if(PP_OPENBLAS_INCLUDE_DIR AND PP_OPENBLAS_LIBRARY)
    target_compile_definitions(parprim_cli PRIVATE PP_PEER_OPENBLAS=1)
    target_include_directories(parprim_cli SYSTEM PRIVATE ${PP_OPENBLAS_INCLUDE_DIR})
    target_link_libraries(parprim_cli PRIVATE ${PP_OPENBLAS_LIBRARY})
    list(APPEND PP_CPU_PEERS_FOUND OpenBLAS)
  else()
    list(APPEND PP_CPU_PEERS_MISSING OpenBLAS)
  endif()

  find_package(OpenCV QUIET COMPONENTS core imgproc)
  if(OpenCV_FOUND)
    target_compile_definitions(parprim_cli PRIVATE PP_PEER_OPENCV=1)
    target_include_directories(parprim_cli SYSTEM PRIVATE ${OpenCV_INCLUDE_DIRS})
    target_link_libraries(parprim_cli PRIVATE opencv_core opencv_imgproc)
    list(APPEND PP_CPU_PEERS_FOUND "OpenCV ${OpenCV_VERSION}")
  else()
    list(APPEND PP_CPU_PEERS_MISSING OpenCV)
  endif()

  find_package(TBB QUIET COMPONENTS tbb)
  if(TBB_FOUND)
    target_compile_definitions(parprim_cli PRIVATE PP_PEER_TBB=1)
    target_link_libraries(parprim_cli PRIVATE TBB::tbb)
    list(APPEND PP_CPU_PEERS_FOUND "TBB ${TBB_VERSION}")
  else()
    list(APPEND PP_CPU_PEERS_MISSING TBB)
  endif()
  # the peers are C++17 (std::execution); the rest of the command stays C11
  set_property(TARGET parprim_cli PROPERTY CXX_STANDARD 17)
  set_property(TARGET parprim_cli PROPERTY CXX_STANDARD_REQUIRED ON)
  message(STATUS "parprim: CPU bench peers found: ${PP_CPU_PEERS_FOUND}; missing: ${PP_CPU_PEERS_MISSING}")
endif()
