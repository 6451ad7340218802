# Install rules and the Debian package. Included from the top-level CMakeLists, so the
# targets it names are in scope. Paths follow GNUInstallDirs; tests and fuzz targets are never
# installed (nothing under tests/ has an install rule).
include(GNUInstallDirs)

# `clprobe trace` finds the layer relative to its own binary: the installed relative path is
# computed here, so an install under any prefix or libdir (lib, lib64, lib/x86_64-linux-gnu) works.
file(RELATIVE_PATH CLPROBE_INSTALLED_LAYER_DIR ${CMAKE_INSTALL_FULL_BINDIR}
     ${CMAKE_INSTALL_FULL_LIBDIR}/clprobe)
set_property(SOURCE src/cli/trace_command.cpp src/cli/trace_command_work.cpp APPEND PROPERTY COMPILE_DEFINITIONS
             CLPROBE_INSTALLED_LAYER_DIR="${CLPROBE_INSTALLED_LAYER_DIR}")
# Oclgrind's ICD library as found at configure time: where `trace --work` looks for it first.
find_library(CLPROBE_OCLGRIND_ICD_LIBRARY oclgrind-rt-icd PATHS /usr/lib/oclgrind /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/oclgrind)
if(CLPROBE_OCLGRIND_ICD_LIBRARY)
  set_property(SOURCE src/cli/trace_command_work.cpp APPEND PROPERTY COMPILE_DEFINITIONS
               CLPROBE_OCLGRIND_ICD_PATH="${CLPROBE_OCLGRIND_ICD_LIBRARY}")
endif()

install(TARGETS clprobe RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET clprobe_trace_layer)
  install(TARGETS clprobe_trace_layer LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/clprobe)
endif()
if(TARGET clprobe_work_counter)
  install(TARGETS clprobe_work_counter LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/clprobe)
endif()
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
file(GLOB clprobe_docs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md ${PROJECT_SOURCE_DIR}/docs/*.schema.json)
install(FILES ${clprobe_docs} DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES src/cli/completion/clprobe.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME clprobe)

# The man page, from the built binary's own help (help2man) plus every subcommand's help
# (cmake/man_page.cmake). Optional: without help2man the build goes on without a page. The
# sanitizer build skips it: nothing installs from there.
find_program(CLPROBE_HELP2MAN help2man)
if(CLPROBE_HELP2MAN AND NOT CLPROBE_SANITIZE)
  set(CLPROBE_MAN_PAGE ${CMAKE_BINARY_DIR}/clprobe.1)
  add_custom_command(
    OUTPUT ${CLPROBE_MAN_PAGE}
    COMMAND ${CMAKE_COMMAND} -DCLPROBE=$<TARGET_FILE:clprobe> -DVERSION=${PROJECT_VERSION} -DHELP2MAN=${CLPROBE_HELP2MAN}
            -DINCLUDE=${PROJECT_SOURCE_DIR}/src/cli/clprobe.h2m -DOUTPUT=${CLPROBE_MAN_PAGE}
            -DWORK_DIR=${CMAKE_BINARY_DIR}/man -P ${PROJECT_SOURCE_DIR}/cmake/man_page.cmake
    DEPENDS clprobe ${PROJECT_SOURCE_DIR}/src/cli/clprobe.h2m ${PROJECT_SOURCE_DIR}/cmake/man_page.cmake
    COMMENT "Generating the clprobe(1) man page with help2man"
    VERBATIM)
  add_custom_target(clprobe_man ALL DEPENDS ${CLPROBE_MAN_PAGE})
  # OPTIONAL: a build of the clprobe target alone still installs (.ci/package.sh builds the page).
  install(FILES ${CLPROBE_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 OPTIONAL)
  set(CLPROBE_MAN_STATUS "yes (${CLPROBE_HELP2MAN})")
elseif(CLPROBE_SANITIZE)
  set(CLPROBE_MAN_STATUS "no (sanitizer build)")
else()
  message(STATUS "help2man not found: the clprobe(1) man page is not built (apt install help2man)")
  set(CLPROBE_MAN_STATUS "no (help2man not found)")
endif()

# `cpack -G DEB` in the build folder: a package that `apt install ./clprobe_*.deb` installs on a
# machine without a compiler. dpkg-shlibdeps (dpkg-dev) computes the library dependencies from the
# installed binary and layer, so an OpenBLAS-less build does not depend on libopenblas.
set(CPACK_PACKAGE_NAME clprobe)
set(CPACK_PACKAGE_VENDOR "clprobe")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION
    "clprobe measures a server's OpenCL stack layer by layer (system, topology, transfers, kernels,\n"
    "workloads) and explains in a ranked report why OpenCL work is slow there. It also traces\n"
    "an unmodified OpenCL program through an OpenCL layer and compares saved reports.")
string(REPLACE ";" "" CPACK_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CLPROBE_PACKAGE_CONTACT "clprobe maintainers <maintainers@clprobe.dev>"
    CACHE STRING "The Maintainer field of the Debian package")
set(CPACK_PACKAGE_CONTACT "${CLPROBE_PACKAGE_CONTACT}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://clprobe.dev")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libOpenCL (ocl-icd) comes through shlibdeps; a driver it can load is only recommended, since
# the machine's own vendor ICD serves as well as PoCL.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "pocl-opencl-icd | opencl-icd")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_GENERATOR DEB)
include(CPack)
