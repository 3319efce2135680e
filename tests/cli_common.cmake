# Shared by tests/cli_*.cmake, run by ctest as `cmake -DCLI=parprim -DIMG=test_cli_imgen
# -DWORK=dir -P tests/cli_NAME.cmake`. Each check runs one command and fails the test with
# the command, its exit status and its output when an expectation does not hold.
cmake_minimum_required(VERSION 3.24) # the policies of the project, in -P mode too
if(NOT CLI OR NOT IMG OR NOT WORK)
  message(FATAL_ERROR "run with -DCLI=<parprim> -DIMG=<test_cli_imgen> -DWORK=<folder>")
endif()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

# run(RC [OUT regex] [ERR regex] [NOOUT] [NOERR] [NOT_OUT regex] [NOT_ERR regex] CMD args...)
# RC: the exit status wanted (a number, or "fail" for any non-zero). The output is left in
# ${RUN_OUT} and ${RUN_ERR} for further checks.
function(run want)
  cmake_parse_arguments(R "NOOUT;NOERR" "OUT;ERR;NOT_OUT;NOT_ERR" "CMD" ${ARGN})
  execute_process(COMMAND ${R_CMD} WORKING_DIRECTORY ${WORK}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(what "${R_CMD}\n  exit ${rc}\n  stdout: ${out}\n  stderr: ${err}")
  if(want STREQUAL "fail")
    if(rc EQUAL 0)
      message(FATAL_ERROR "want a failure, got success: ${what}")
    endif()
  elseif(NOT rc EQUAL want)
    message(FATAL_ERROR "want exit ${want}: ${what}")
  endif()
  # the same three checks on each stream: OUT / ERR a regex it must match, NOT_OUT /
  # NOT_ERR one it must not, NOOUT / NOERR nothing at all
  foreach(S OUT ERR)
    string(TOLOWER ${S} s)
    if(DEFINED R_${S} AND NOT ${s} MATCHES "${R_${S}}")
      message(FATAL_ERROR "std${s} does not match '${R_${S}}': ${what}")
    endif()
    if(DEFINED R_NOT_${S} AND ${s} MATCHES "${R_NOT_${S}}")
      message(FATAL_ERROR "std${s} matches '${R_NOT_${S}}': ${what}")
    endif()
    if(R_NO${S} AND NOT ${s} STREQUAL "")
      message(FATAL_ERROR "want nothing on std${s}: ${what}")
    endif()
  endforeach()
  set(RUN_OUT "${out}" PARENT_SCOPE)
  set(RUN_ERR "${err}" PARENT_SCOPE)
endfunction()

function(same_files a b)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/${a} ${WORK}/${b}
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${a} and ${b} differ")
  endif()
endfunction()

function(different_files a b)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/${a} ${WORK}/${b}
                  RESULT_VARIABLE rc)
  if(rc EQUAL 0)
    message(FATAL_ERROR "${a} and ${b} are the same, want them different")
  endif()
endfunction()

# No temporary file of a safe write ("NAME.XXXXXX") is left in WORK.
function(no_temporaries)
  file(GLOB all RELATIVE ${WORK} ${WORK}/*)
  foreach(f ${all})
    if(f MATCHES "\\.[A-Za-z0-9]{6}$" AND NOT f MATCHES "\\.(sorted|source)$")
      message(FATAL_ERROR "a temporary file was left behind: ${WORK}/${f}")
    endif()
  endforeach()
endfunction()

function(write_text name text)
  file(WRITE ${WORK}/${name} "${text}")
endfunction()
