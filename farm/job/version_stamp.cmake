# cmake -DSOURCE=DIR -DOUT=FILE -DVERSION=X.Y.Z -P version_stamp.cmake: writes the build's version
# and source commit as C++ string literals, at every build but touching FILE only when they
# changed (so a commit recompiles one file, and an unchanged tree nothing). A tree without git (a
# source tarball, a Debian build) says "unknown".
set(commit "unknown")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SOURCE}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE}" describe --always --dirty --abbrev=12
                  OUTPUT_VARIABLE described RESULT_VARIABLE failed OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT failed AND described)
    set(commit "${described}")
  endif()
endif()
set(text "#define FARM_VERSION \"${VERSION}\"\n#define FARM_COMMIT \"${commit}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" before)
else()
  set(before "")
endif()
if(NOT before STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
