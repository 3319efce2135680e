#!/bin/sh
# run.sh MODE WORKDIR — one consumer test (cmake/packaging.cmake sets the environment):
#   install            cmake --install of the build tree into $PP_PREFIX, afresh
#   pkgconfig_shared   cc app.c $(pkg-config --cflags --libs parprim) + rpath, as documented
#   pkgconfig_static   cc app.c $(pkg-config --cflags --static --libs parprim-static)
#   cmake_c            find_package(parprim) from project(... C): shared and static
#   cmake_cxx          the same from project(... CXX), app.cpp
#   deb                cpack -G DEB, dpkg -x into an empty folder, an example built against
#                      it with pkg-config and with the CMake package, and the command run
# Exit 0 passed, 77 skipped (a tool missing), anything else failed.
set -eu
mode=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
# `make test` runs ctest from make: its jobserver is not ours
unset MAKEFLAGS MFLAGS MAKELEVEL || true

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "skipped: $*" >&2; exit 77; }
run() { echo "+ $*"; "$@"; }
need_pkg_config() { [ -n "${PKG_CONFIG:-}" ] && [ -x "$PKG_CONFIG" ] || skip "no pkg-config"; }

# the static line must carry what the build links, and nothing it does not
check_static_flags() { # $1: the flags pkg-config gave
  case "$PP_CUDA:$1" in
    ON:*-lcudadevrt*-lcudart*|ON:*-lcudart*-lcudadevrt*) ;;
    ON:*) fail "a CUDA build's static flags lack -lcudadevrt or -lcudart: $1" ;;
    *:*cuda*) fail "a CPU-only build's static flags name CUDA: $1" ;;
  esac
}

# $1 program: it must load libparprim from $2 (shared) or not at all (static)
check_links() {
  needed=$(readelf -d "$1" | grep NEEDED || true)
  if [ "$2" = static ]; then
    case "$needed" in *libparprim*) fail "$1 needs a shared libparprim" ;; esac
  else
    ldd "$1" | grep "libparprim.so" | grep -q "$2/" || fail "$1 does not load $2/libparprim.so: $(ldd "$1" | grep parprim)"
  fi
}

# $1 project dir, $2 build dir, $3 prefix path: configure, build, run both programs
cmake_consumer() {
  compiler="-DCMAKE_C_COMPILER=$CC"
  flags="-DCMAKE_C_FLAGS=$CFLAGS"
  if [ "$(basename "$1")" = cmake_cxx ]; then
    [ -n "$CXX" ] || skip "no C++ compiler"
    compiler="-DCMAKE_CXX_COMPILER=$CXX"
    flags="-DCMAKE_CXX_FLAGS=$CXXFLAGS"
  fi
  cuda_root=""
  [ -n "$PP_CUDA_ROOT" ] && cuda_root="-DCUDAToolkit_ROOT=$PP_CUDA_ROOT"
  run "$CMAKE" -S "$1" -B "$2" -G "$PP_GENERATOR" -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_PREFIX_PATH=$3" -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON \
    "$compiler" "$flags" "-DCMAKE_EXE_LINKER_FLAGS=$LDFLAGS" $cuda_root
  grep -q "^parprim_DIR:PATH=$3/" "$2/CMakeCache.txt" || fail "found parprim elsewhere: $(grep ^parprim_DIR "$2/CMakeCache.txt")"
  run "$CMAKE" --build "$2"
  check_links "$2/app_shared" "$3/$PP_LIBDIR"
  check_links "$2/app_static" static
  run "$2/app_shared"
  run "$2/app_static"
}

rm -rf "$work"
mkdir -p "$work"
cd "$work"
lib="$PP_PREFIX/$PP_LIBDIR"
case "$mode" in
install)
  rm -rf "$PP_PREFIX"
  run "$CMAKE" --install "$PP_BUILD" --prefix "$PP_PREFIX" >install.log || { cat install.log; exit 1; }
  for f in "$lib/libparprim.so" "$lib/libparprim.a" "$PP_PREFIX/include/parprim.h" \
           "$lib/pkgconfig/parprim.pc" "$lib/pkgconfig/parprim-static.pc" \
           "$lib/cmake/parprim/parprimConfig.cmake"; do
    [ -e "$f" ] || fail "not installed: $f"
  done
  ;;
pkgconfig_shared)
  need_pkg_config
  export PKG_CONFIG_PATH="$lib/pkgconfig"
  [ "$($PKG_CONFIG --variable=prefix parprim)" = "$PP_PREFIX" ] ||
    fail "pkg-config finds another parprim: $($PKG_CONFIG --variable=prefix parprim)"
  [ "$($PKG_CONFIG --modversion parprim)" = "$PP_VERSION" ] || fail "parprim.pc's version"
  # shellcheck disable=SC2046,SC2086
  run $CC $CFLAGS "$here/app.c" $($PKG_CONFIG --cflags --libs parprim) \
    "-Wl,-rpath,$($PKG_CONFIG --variable=libdir parprim)" $LDFLAGS -o app
  check_links ./app "$lib"
  run ./app
  ;;
pkgconfig_static)
  need_pkg_config
  export PKG_CONFIG_PATH="$lib/pkgconfig"
  flags=$($PKG_CONFIG --static --libs parprim-static)
  check_static_flags "$flags"
  # shellcheck disable=SC2046,SC2086
  run $CC $CFLAGS "$here/app.c" $($PKG_CONFIG --cflags parprim-static) $flags $LDFLAGS -o app
  check_links ./app static
  run ./app
  # without --static the file gives the same complete line
  [ "$($PKG_CONFIG --libs parprim-static)" = "$flags" ] || fail "parprim-static.pc's line depends on --static"
  ;;
cmake_c|cmake_cxx)
  cmake_consumer "$here/$mode" "$work/build" "$PP_PREFIX"
  ;;
deb)
  command -v dpkg >/dev/null || skip "no dpkg"
  run "$CPACK" -G DEB --config "$PP_BUILD/CPackConfig.cmake" -B "$work/out" >cpack.log ||
    { cat cpack.log; exit 1; }
  deb=$(ls "$work"/out/*.deb)
  dpkg-deb -f "$deb" Package Version Architecture Maintainer Depends Recommends
  [ "$(dpkg-deb -f "$deb" Version)" = "$PP_VERSION" ] || fail "package version"
  case "$(dpkg-deb -f "$deb" Depends)" in *libgomp1*) ;; *) fail "no dependency on libgomp1" ;; esac
  run dpkg -x "$deb" "$work/root"
  usr="$work/root/usr"
  for f in "$PP_LIBDIR/libparprim.so.0" "$PP_LIBDIR/libparprim.a" include/parprim.h \
           "$PP_LIBDIR/pkgconfig/parprim.pc" "$PP_LIBDIR/pkgconfig/parprim-static.pc" \
           "$PP_LIBDIR/cmake/parprim/parprimConfig.cmake"; do
    [ -e "$usr/$f" ] || fail "not in the package: /usr/$f"
  done
  grep -q "^prefix=/usr$" "$usr/$PP_LIBDIR/pkgconfig/parprim.pc" || fail "parprim.pc's prefix is not /usr"
  if [ "$PP_TOOLS" = ON ]; then
    [ -x "$usr/bin/parprim" ] || fail "not in the package: /usr/bin/parprim"
    run "$usr/bin/parprim" help >/dev/null
  fi
  if [ -n "${PKG_CONFIG:-}" ] && [ -x "$PKG_CONFIG" ]; then
    # the files say /usr; the unpacked tree is elsewhere
    export PKG_CONFIG_PATH="$usr/$PP_LIBDIR/pkgconfig"
    pc="$PKG_CONFIG --define-variable=prefix=$usr"
    # shellcheck disable=SC2046,SC2086
    run $CC $CFLAGS "$PP_SOURCE/examples/sort_numbers.c" $($pc --cflags --libs parprim) \
      "-Wl,-rpath,$($pc --variable=libdir parprim)" $LDFLAGS -o sort_numbers
    check_links ./sort_numbers "$usr/$PP_LIBDIR"
    run ./sort_numbers "$PP_SOURCE/examples/data/numbers.txt" >sorted.txt
    # shellcheck disable=SC2046,SC2086
    run $CC $CFLAGS "$PP_SOURCE/examples/reduce_scan.c" $($pc --cflags parprim-static) \
      $($pc --static --libs parprim-static) $LDFLAGS -o reduce_scan
    check_links ./reduce_scan static
    run ./reduce_scan
  fi
  cmake_consumer "$here/cmake_c" "$work/cmake_c" "$usr"
  need_pkg_config # the pkg-config half did not run: not a pass
  ;;
*)
  fail "unknown mode $mode"
  ;;
esac
echo "consumer $mode: passed"
