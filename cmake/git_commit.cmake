# Writes the source tree's commit into a header, at every build (cmake -P, from src/CMakeLists.txt),
# so a commit made after configuring is not reported stale. Outside a git checkout of this very
# tree (a tarball, a Debian source package, even one unpacked inside another repository) the
# commit is "unknown" and the build goes on.
#   -DSOURCE_DIR=<tree> -DOUTPUT=<header> [-DGIT=<git executable>]
set(commit "unknown")
if(GIT)
  execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} rev-parse --show-toplevel
                  OUTPUT_VARIABLE toplevel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(rc EQUAL 0)
    get_filename_component(toplevel "${toplevel}" REALPATH)
    get_filename_component(source "${SOURCE_DIR}" REALPATH)
  endif()
  if(rc EQUAL 0 AND toplevel STREQUAL source)
    execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} describe --always --dirty --abbrev=12
                    OUTPUT_VARIABLE described OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
    if(rc EQUAL 0 AND described)
      set(commit "${described}")
    endif()
  endif()
endif()
set(content "#pragma once\n// Generated at build time by cmake/git_commit.cmake.\nnamespace clprobe {\ninline constexpr const char* git_commit = \"${commit}\";\n}\n")
# Rewritten only when the commit changed, so an unchanged tree recompiles nothing.
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" previous)
endif()
if(NOT previous STREQUAL content)
  file(WRITE "${OUTPUT}" "${content}")
endif()
