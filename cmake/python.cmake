# python.cmake — the Python extension module parprim._parprim (python/src/_parprim.c).
#
# Two ways in:
#  - a wheel build (scikit-build-core sets SKBUILD; python/pyproject.toml points it at the
#    repository root): the module links the static library and is installed into the
#    wheel's parprim/ package, in the "python" install component only, so the library's own
#    install rules (headers, pkg-config, CMake package) stay out of the wheel;
#  - a development build with tests: the module and the pure-Python files are assembled in
#    <build>/python/parprim/ and ctest's python_pytest runs pytest against them on the CPU
#    backend. What is missing to do so (Python headers, numpy, scipy, pytest) makes the test
#    skip with the reason printed, never pass.

function(pp_python_module target)
  file(GLOB PP_PY_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/python/src/*.c)
  Python3_add_library(${target} MODULE WITH_SOABI ${PP_PY_SOURCES})
  set_target_properties(${target} PROPERTIES OUTPUT_NAME _parprim C_VISIBILITY_PRESET hidden)
  target_link_libraries(${target} PRIVATE parprim_static)
  # Python.h declares functions with unused parameters in its inline helpers on some versions
  target_compile_options(${target} PRIVATE ${PP_C_WARNINGS} -Wno-unused-parameter)
  if(PP_HAVE_CUDA)
    # the module orders streams with events and finds a pointer's device (cudart's C API)
    target_compile_definitions(${target} PRIVATE PPY_HAVE_CUDA=1)
    target_link_libraries(${target} PRIVATE CUDA::cudart)
  endif()
  # the static library's symbols (and cudadevrt's) stay inside the module
  target_link_options(${target} PRIVATE "LINKER:--exclude-libs,ALL")
endfunction()

if(SKBUILD)
  find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module)
  pp_python_module(parprim_python)
  install(TARGETS parprim_python LIBRARY DESTINATION parprim COMPONENT python)
elseif(PP_BUILD_TESTS)
  find_package(Python3 COMPONENTS Interpreter Development.Module)
  if(Python3_Interpreter_FOUND AND Python3_Development.Module_FOUND)
    pp_python_module(parprim_python)
    set(PP_PY_DIR ${CMAKE_BINARY_DIR}/python)
    set_target_properties(parprim_python PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${PP_PY_DIR}/parprim)
    file(GLOB PP_PY_FILES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/python/parprim/*)
    add_custom_command(TARGET parprim_python POST_BUILD
      COMMAND ${CMAKE_COMMAND} -E copy_if_different ${PP_PY_FILES} ${PP_PY_DIR}/parprim/)
    add_test(NAME python_pytest
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/python/tests/ctest_pytest.py
             WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
    set(PP_PY_ENV "PYTHONPATH=${PP_PY_DIR};PARPRIM_BACKEND=cpu;OMP_WAIT_POLICY=passive")
    # A sanitizer build instruments the module too; python itself is not, so the runtimes
    # must be loaded first (LD_PRELOAD), and the interpreter's by-design leaks at exit are
    # not reported.
    set(PP_PY_PRELOAD "")
    foreach(san address:asan undefined:ubsan)
      string(REPLACE ":" ";" san ${san})
      list(GET san 0 flag)
      list(GET san 1 lib)
      if(CMAKE_C_FLAGS MATCHES "-fsanitize=[a-z,]*${flag}")
        execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=lib${lib}.so
                        OUTPUT_VARIABLE path OUTPUT_STRIP_TRAILING_WHITESPACE)
        if(NOT IS_ABSOLUTE "${path}")
          message(FATAL_ERROR "python.cmake: ${CMAKE_C_COMPILER} does not say where lib${lib}.so is, "
                              "which python_pytest must preload under -fsanitize=${flag}")
        endif()
        list(APPEND PP_PY_PRELOAD ${path})
      endif()
    endforeach()
    if(PP_PY_PRELOAD)
      string(REPLACE ";" ":" PP_PY_PRELOAD "${PP_PY_PRELOAD}")
      list(APPEND PP_PY_ENV "LD_PRELOAD=${PP_PY_PRELOAD}" "ASAN_OPTIONS=detect_leaks=0")
    endif()
    set_tests_properties(python_pytest PROPERTIES SKIP_RETURN_CODE 77 LABELS "cpu;python"
      TIMEOUT 600 ENVIRONMENT "${PP_PY_ENV}")
  else()
    add_test(NAME python_pytest COMMAND ${CMAKE_COMMAND} -E echo
             "SKIP: python_pytest needs a Python 3 interpreter with its development headers (Python3_Development.Module not found)")
    set_tests_properties(python_pytest PROPERTIES SKIP_REGULAR_EXPRESSION "SKIP:" LABELS "cpu;python")
  endif()
endif()
