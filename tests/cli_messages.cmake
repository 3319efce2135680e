# What the command says: topk's header and indices, the filter-file reader's errors, the
# hints and limits in its messages, units, column alignment, --quiet.
include(${CMAKE_CURRENT_LIST_DIR}/cli_common.cmake)

run(0 CMD ${IMG} make ${WORK})
run(0 CMD ${IMG} noise ${WORK}/noise.u8 200 50)

# topk prints rank, value and index under a header; each index holds its value
run(0 OUT "\nrank\tvalue\tindex\n1\t" CMD ${CLI} topk noise.u8 --type u8 --k 5)
string(REGEX MATCHALL "\n[1-5]\t[0-9]+\t[0-9]+" rows "${RUN_OUT}")
list(LENGTH rows nrows)
if(NOT nrows EQUAL 5)
  message(FATAL_ERROR "topk --k 5 printed ${nrows} result rows:\n${RUN_OUT}")
endif()
foreach(r ${rows})
  string(REGEX MATCH "\t([0-9]+)\t([0-9]+)" _ "${r}")
  set(value ${CMAKE_MATCH_1})
  file(READ ${WORK}/noise.u8 byte OFFSET ${CMAKE_MATCH_2} LIMIT 1 HEX)
  math(EXPR byte "0x${byte}")
  if(NOT byte EQUAL value)
    message(FATAL_ERROR "topk: index ${CMAKE_MATCH_2} holds ${byte}, printed ${value}")
  endif()
endforeach()
run(0 CMD ${CLI} topk noise.u8 --type u8 --k 3 --indices --smallest --quiet)
# with --out: the values raw in FILE, the indices as uint64 in FILE.idx
run(0 OUT "wrote k\\.bin and k\\.bin\\.idx" CMD ${CLI} topk noise.u8 --type u8 --k 3 --out k.bin)
file(SIZE ${WORK}/k.bin vsize)
file(SIZE ${WORK}/k.bin.idx isize)
if(NOT vsize EQUAL 3 OR NOT isize EQUAL 24)
  message(FATAL_ERROR "topk --k 3 --out: ${vsize} and ${isize} bytes, want 3 and 24")
endif()
file(READ ${WORK}/k.bin.idx idx HEX LIMIT 8)
string(REGEX REPLACE "(..)(..)(..)(..)(..)(..)(..)(..)" "\\8\\7\\6\\5\\4\\3\\2\\1" idx "${idx}")
math(EXPR idx "0x${idx}")
file(READ ${WORK}/noise.u8 byte OFFSET ${idx} LIMIT 1 HEX)
file(READ ${WORK}/k.bin first LIMIT 1 HEX)
if(NOT byte STREQUAL first)
  message(FATAL_ERROR "topk --out: index ${idx} holds 0x${byte}, the first value is 0x${first}")
endif()

# the filter-file reader: each defect an error naming the file and the line
function(bad_filter_file name content want)
  write_text(${name} "${content}")
  run(1 ERR "${want}" CMD ${CLI} conv g8.png o.pgm --filter ${name})
endfunction()
string(REPEAT "1" 200 long)
bad_filter_file(long.txt "1 1\n${long}\n" "long\\.txt:2: a token longer than 127")
bad_filter_file(huge.txt "1 2\n1e99 1\n" "huge\\.txt:2: '1e99' does not fit in a float")
bad_filter_file(inf.txt "1 1 inf\n" "does not fit in a float")
bad_filter_file(extra.txt "1 1\n0.5 0.5\n" "extra\\.txt:2: more than the 1 weights")
bad_filter_file(empty.txt "" "empty\\.txt is empty")
bad_filter_file(comments.txt "# only a comment\n   \n#another\n" "comments\\.txt is empty")
bad_filter_file(few.txt "2 2\n1 2 3\n" "4 weights expected for 2x2, 3 found")
bad_filter_file(word.txt "1 1\nabc\n" "word\\.txt:2: 'abc' is not a number")
bad_filter_file(side.txt "4098 1\n" "width '4098' is not a whole number 1\\.\\.4097")
# a valid file (comments beside the numbers) filters as the built-in 3 x 3 box does
write_text(box3.txt "# 3 x 3 mean\n3 3 # width height\n0.111111111 0.111111111 0.111111111\n0.111111111 0.111111111 0.111111111#row 2\n0.111111111 0.111111111 0.111111111\n")
run(0 CMD ${CLI} conv p6_8.ppm file.ppm --filter box3.txt)
run(0 CMD ${CLI} conv p6_8.ppm builtin.ppm --filter box:3)
run(0 CMD ${IMG} cmp file.ppm builtin.ppm 1)

# conv's filter names and limits
run(2 ERR "'blur': no such file, and not a built-in filter \\(gauss:SIGMA, box:N, sharpen"
    CMD ${CLI} conv g8.png o.pgm --filter blur)
run(2 ERR "SIGMA a number in \\(0, 600.: 3601 taps" CMD ${CLI} conv g8.png o.pgm --filter gauss:601)
run(0 CMD ${CLI} conv g8.png o.pgm --filter gauss:600 --quiet)
run(2 ERR "\\.png, \\.pgm, \\.ppm" NOOUT CMD ${CLI} conv g8.png o.jpg --filter box:3)

# nbody: values named, floats checked as floats, usage errors exit 2; units and plurals
run(2 ERR "--n 2\\^62 is too large \\(at most [0-9]+\\)" CMD ${CLI} nbody --n 2^62)
run(2 ERR "bad --dt '1e99'" CMD ${CLI} nbody --n 8 --steps 1 --dt 1e99)
run(2 ERR "bad --softening '1e40'" CMD ${CLI} nbody --n 8 --steps 1 --softening 1e40)
run(0 OUT "1 body, 1 step on" NOT_OUT "1 bodies|0\\.00 [A-Z]*FLOP" NOERR
    CMD ${CLI} nbody --n 1 --steps 1)
run(0 OUT "64 bodies, 3 steps on .*: [1-9][0-9.]* ([kMGTP] )?interactions/s, [1-9][0-9.]* [kMGTP]?FLOP/s"
    NOERR CMD ${CLI} nbody --n 64 --steps 3)

# histogram: a range whose width overflows a double is a usage error
run(2 ERR "finite" CMD ${CLI} histogram noise.u8 --type u8 --lo -1e308 --hi 1e308)

# --quiet everywhere progress is shown; with stderr not a terminal nothing is drawn anyway
run(0 NOERR CMD ${CLI} sort noise.u8 --type u8 --out s.u8 --quiet)
run(0 NOERR CMD ${CLI} sort noise.u8 --type u8 --out s.u8)
run(0 NOERR CMD ${CLI} histogram noise.u8 --type u8 --quiet)
run(0 NOERR CMD ${CLI} nbody --n 16 --steps 4 --quiet)

# demo: every row's columns start where the header's do
run(0 CMD ${CLI} demo --backend cpu --n 1000)
string(REPLACE "\n" ";" lines "${RUN_OUT}")
set(col -1)
foreach(l ${lines})
  if(l MATCHES "^primitive " OR l MATCHES " (OK|MISMATCH|ERROR|not implemented|no reference)$")
    string(FIND "${l}" " cpu " at)
    if(l MATCHES "^primitive ")
      string(FIND "${l}" " backend " at)
    endif()
    if(col EQUAL -1)
      set(col ${at})
    elseif(NOT at EQUAL col)
      message(FATAL_ERROR "demo: misaligned row (backend column at ${at}, header's at ${col}):\n${l}")
    endif()
  endif()
endforeach()
if(col EQUAL -1)
  message(FATAL_ERROR "demo printed no table:\n${RUN_OUT}")
endif()
run(0 OUT "\nstep +1 .* [1-9][0-9.]* ([kMGTP] )?interactions/s  [0-9.e+-]+ ms/step\n" NOT_OUT " 0\\.0 G"
    CMD ${CLI} nbody --n 64 --steps 1 --every 1)
