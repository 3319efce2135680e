# Every file the command writes goes through a temporary file and a rename: a write that
# fails (here: past `ulimit -f`, as on a full disk) leaves the old file whole and no
# temporary behind; the output may be the input; an output that cannot be written is
# refused before the work starts. Inputs are read to their end (/proc files report size 0).
include(${CMAKE_CURRENT_LIST_DIR}/cli_common.cmake)

# 300 x 300 random bytes: 90 kB that no compressor shrinks under the limits below (`ulimit
# -f` counts 512-byte blocks in dash and 1024-byte ones in bash: 40 is 20 or 40 kB)
run(0 CMD ${IMG} noise ${WORK}/big.pgm 300 300)
file(COPY_FILE ${WORK}/big.pgm ${WORK}/big.orig)

# conv writing over its own input, killed by the file size limit: input intact
run(fail ERR "big\\.pgm.*[Ff]ile too large.*left as it was"
    CMD sh -c "ulimit -f 40 && exec \"$0\" conv big.pgm big.pgm --filter box:3" ${CLI})
same_files(big.pgm big.orig)
no_temporaries()
# and to PNG
run(0 CMD ${CLI} conv big.pgm big.png --filter box:1)
file(COPY_FILE ${WORK}/big.png ${WORK}/big.png.orig)
run(fail ERR "[Ff]ile too large" CMD sh -c "ulimit -f 40 && exec \"$0\" conv big.pgm big.png --filter gauss:2" ${CLI})
same_files(big.png big.png.orig)
no_temporaries()
# the same command without the limit replaces the file, output = input
run(0 OUT "-> big\\.pgm" CMD ${CLI} conv big.pgm big.pgm --filter box:3)
different_files(big.pgm big.orig)
run(0 OUT "300 x 300, 1 channel" CMD ${CLI} histogram big.pgm)
no_temporaries()

# sort --out FILE where FILE is the input, under the limit: the input keeps every byte
file(COPY_FILE ${WORK}/big.orig ${WORK}/v.u8)
run(fail ERR "writing 'v\\.u8'.*[Ff]ile too large"
    CMD sh -c "ulimit -f 40 && exec \"$0\" sort v.u8 --type u8 --out v.u8" ${CLI})
same_files(v.u8 big.orig)
no_temporaries()
file(SIZE ${WORK}/v.u8 size)
run(0 OUT "sorted ${size} u8" CMD ${CLI} sort v.u8 --type u8 --out v.u8)
run(0 CMD ${CLI} sort big.orig --type u8 --out v2.u8)
same_files(v.u8 v2.u8)
different_files(v.u8 big.orig)

# topk --out and the histogram plot under the limit
run(0 CMD ${CLI} histogram big.orig --type u8 --bins 256 --plot plot.png)
file(COPY_FILE ${WORK}/plot.png ${WORK}/plot.orig)
run(fail ERR "plot\\.png.*[Ff]ile too large"
    CMD sh -c "ulimit -f 2 && exec \"$0\" histogram big.orig --type u8 --bins 7 --plot plot.png" ${CLI})
same_files(plot.png plot.orig)
no_temporaries()

# outputs that cannot be written fail before any work: nothing sorted, nothing printed
run(1 NOOUT ERR "cannot write '/nonexistent/x': No such file"
    CMD ${CLI} sort v.u8 --type u8 --out /nonexistent/x)
run(1 NOOUT ERR "/nonexistent/k" CMD ${CLI} topk v.u8 --type u8 --k 3 --out /nonexistent/k)
run(1 NOOUT ERR "/nonexistent/p\\.png" CMD ${CLI} histogram big.orig --plot /nonexistent/p.png)
run(1 NOOUT ERR "/nonexistent/o\\.png" CMD ${CLI} conv big.orig /nonexistent/o.png --filter box:3)
run(1 NOOUT ERR "folder" CMD ${CLI} sort v.u8 --type u8 --out ${WORK})
run(1 ERR "frame_00000\\.png" CMD ${CLI} nbody --n 8 --steps 1 --frames ${WORK}/big.orig)

# a symbolic link as output: its target is written, the link stays
file(CREATE_LINK ${WORK}/v2.u8 ${WORK}/link.u8 SYMBOLIC)
run(0 CMD ${CLI} sort big.orig --type u8 --desc --out link.u8)
if(NOT IS_SYMLINK ${WORK}/link.u8)
  message(FATAL_ERROR "the output link.u8 was replaced by a file, want the link kept")
endif()
different_files(v2.u8 v.u8)

# files whose size stat() reports as 0 are read to their end
run(0 OUT "sorted [1-9][0-9]* u8" CMD ${CLI} sort /proc/self/status --type u8 --out proc.sorted)
run(0 OUT "counted [1-9][0-9]* " CMD ${CLI} histogram /proc/self/status --type u8 --bins 16)
# a folder as input
run(1 ERR "folder" CMD ${CLI} sort ${WORK} --type u8 --out x.u8)

# nbody frames go through the same writes
run(0 OUT "wrote 3 frames" CMD ${CLI} nbody --n 64 --steps 2 --every 1 --size 32 --frames frames)
run(0 OUT "32 x 32, 3 channels" CMD ${CLI} histogram frames/frame_00002.png)
no_temporaries()
