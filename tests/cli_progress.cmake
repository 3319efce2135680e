# Progress on stderr: drawn when stderr is a terminal and the work lasts over a second,
# silenced by --quiet, never drawn into a pipe. The terminal is script(1)'s (util-linux);
# without it the test says SKIP (ctest shows it skipped, not passed).
include(${CMAKE_CURRENT_LIST_DIR}/cli_common.cmake)

find_program(SCRIPT script)
if(NOT SCRIPT)
  message("SKIP: cli_progress needs script(1) from util-linux to give the command a terminal")
  return()
endif()

# nbody steps until a run lasts at least 2 s (timestamps have whole seconds: 3 apart)
set(steps 25)
while(TRUE)
  string(TIMESTAMP t0 "%s")
  execute_process(COMMAND ${SCRIPT} -qec "\"${CLI}\" nbody --n 1024 --steps ${steps} --every 1" /dev/null
                  WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE tty ERROR_VARIABLE err)
  string(TIMESTAMP t1 "%s")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nbody under script(1): exit ${rc}\n${tty}${err}")
  endif()
  math(EXPR took "${t1} - ${t0}")
  if(took GREATER_EQUAL 3)
    break()
  endif()
  math(EXPR steps "${steps} * 2")
  if(steps GREATER 1000000)
    message(FATAL_ERROR "nbody --n 1024 never lasted 2 s")
  endif()
endwhile()
if(NOT tty MATCHES "parprim nbody: [0-9]+% \\([0-9]+ of ${steps} steps\\), [0-9]+ s, about [0-9]+ s left")
  message(FATAL_ERROR "a ${took} s nbody run on a terminal drew no progress line:\n${tty}")
endif()
# the same run with --quiet, and into a pipe: no progress
execute_process(COMMAND ${SCRIPT} -qec "\"${CLI}\" nbody --n 1024 --steps ${steps} --every 1 --quiet" /dev/null
                WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE tty)
if(NOT rc EQUAL 0 OR tty MATCHES "s left" OR NOT tty MATCHES "${steps} steps on")
  message(FATAL_ERROR "nbody --quiet on a terminal: exit ${rc}, want 0 and no progress:\n${tty}")
endif()
run(0 NOERR CMD ${CLI} nbody --n 1024 --steps ${steps} --every 1)
