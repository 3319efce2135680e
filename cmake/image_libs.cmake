# The image and plot libraries of the parprim command, found once for the command and for
# the image fuzzing harness (which builds without the tools):
#   PP_IMAGE_LIBS       libpng and libjpeg: cli/image_io.c's codecs
#   PP_CLI_IMAGE_LIBS   the same plus cairo: what the whole command links
# libpng and libjpeg(-turbo) are the reference codecs of their formats and cairo draws
# text, lines and fills into PNG or SVG; all three are kept up by their projects and
# packaged by every distribution (Debian: libpng-dev libjpeg-dev libcairo2-dev).
# They are required to build the command (not the library, which uses none of them): one
# code path, which the tests cover whole, instead of a command whose formats depend on
# what the build machine happened to have.
# Sets PP_IMAGE_LIBS only when libpng and libjpeg are both found, PP_CLI_IMAGE_LIBS only
# when cairo is too; cmake/cli_deps.cmake stops the configuration when the command lacks
# one.
if(NOT PP_IMAGE_LIBS_SEARCHED)
  set(PP_IMAGE_LIBS_SEARCHED ON)
  find_package(PNG)
  find_package(JPEG)
  find_package(PkgConfig)
  if(PkgConfig_FOUND)
    pkg_check_modules(PP_CAIRO IMPORTED_TARGET cairo)
  endif()
  if(PNG_FOUND AND JPEG_FOUND)
    set(PP_IMAGE_LIBS PNG::PNG JPEG::JPEG)
    if(PP_CAIRO_FOUND)
      set(PP_CLI_IMAGE_LIBS PNG::PNG JPEG::JPEG PkgConfig::PP_CAIRO)
    endif()
  endif()
endif()
