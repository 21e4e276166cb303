# What an installed LongPipe is, beyond the programs' own install() rules (libshim/, daemon/): the
# installed `longpipe` command, the documents, the manual pages, the examples, and the Debian
# packages CPack makes of it all (packaging/README.md). Every install() rule names its component,
# which is its Debian package: liblongpipe, longpipe or longpiped.

# The installed command: packaging/longpipe.in, with the library and longpipe-config found relative
# to the command's own folder, so that the tree works wherever it is installed.
file(RELATIVE_PATH LP_BIN_TO_LIBDIR /${CMAKE_INSTALL_BINDIR} /${CMAKE_INSTALL_LIBDIR})
file(RELATIVE_PATH LP_BIN_TO_LIBEXECDIR /${CMAKE_INSTALL_BINDIR} /${CMAKE_INSTALL_LIBEXECDIR})
file(READ packaging/run_commands.sh LP_RUN_COMMANDS)   # the run and mpirun commands, shared with ./longpipe
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS packaging/run_commands.sh)
configure_file(packaging/longpipe.in ${PROJECT_BINARY_DIR}/packaging/longpipe @ONLY)
install(PROGRAMS ${PROJECT_BINARY_DIR}/packaging/longpipe DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT longpipe)

# The documents that go with an installed LongPipe, and the examples.
install(FILES LICENSE README.md CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT longpipe)
install(FILES packaging/examples/settings.conf DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT longpipe)
install(FILES packaging/examples/site.conf DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/longpiped/examples
        COMPONENT longpiped)

# The manual pages, one folder per section (docs/man/README.md), with the project's version filled
# in, compressed as Debian's policy asks (man reads them either way). gzip -n: no name or time in
# the header, so that the same sources give the same bytes.
foreach(page longpipe.1:longpipe longpipe.7:longpipe longpiped.8:longpiped)
  string(REPLACE ":" ";" page ${page})
  list(GET page 1 component)
  list(GET page 0 page)
  string(REGEX REPLACE "^.*\\.([1-9])$" "\\1" section ${page})
  configure_file(docs/man/${page} ${PROJECT_BINARY_DIR}/docs/man/${page} @ONLY)
  execute_process(COMMAND gzip -9nc ${PROJECT_BINARY_DIR}/docs/man/${page}
                  OUTPUT_FILE ${PROJECT_BINARY_DIR}/docs/man/${page}.gz COMMAND_ERROR_IS_FATAL ANY)
  install(FILES ${PROJECT_BINARY_DIR}/docs/man/${page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section}
          COMPONENT ${component})
endforeach()

# --- Debian packages (cpack -G DEB in the build tree) ---------------------------------------------

set(LP_PACKAGES liblongpipe longpipe longpiped)
# A site that builds its own packages names itself: cmake -DLP_MAINTAINER="Name <address>".
set(LP_MAINTAINER "LongPipe authors <longpipe@users.noreply.github.com>" CACHE STRING
    "Maintainer field of the Debian packages (Name <address>)")

# Each package's /usr/share/doc/PACKAGE/copyright and changelog.gz (a native package's Debian
# changelog: one entry for this version, dated by the last commit so that a rebuild gives the same
# bytes). Only packages carry them (EXCLUDE_FROM_ALL: a component install, not cmake --install).
execute_process(COMMAND git -C ${PROJECT_SOURCE_DIR} log -1 --format=%aD
                OUTPUT_VARIABLE LP_CHANGELOG_DATE OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE git_status ERROR_QUIET)
if(NOT git_status EQUAL 0 OR LP_CHANGELOG_DATE STREQUAL "")
  string(TIMESTAMP LP_CHANGELOG_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
endif()
foreach(package IN LISTS LP_PACKAGES)
  set(LP_PACKAGE ${package})
  set(folder ${PROJECT_BINARY_DIR}/packaging/doc/${package})
  configure_file(packaging/changelog.in ${folder}/changelog @ONLY)
  execute_process(COMMAND gzip -9nc ${folder}/changelog OUTPUT_FILE ${folder}/changelog.gz
                  COMMAND_ERROR_IS_FATAL ANY)
  install(FILES packaging/copyright ${folder}/changelog.gz DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${package}
          COMPONENT ${package} EXCLUDE_FROM_ALL)
endforeach()

set(CPACK_GENERATOR DEB)
# cpack (and make install) package what the build tree holds: their preinstall step does not build
# every target (all the tests) first. Build the programs, then run cpack.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
set(CPACK_PACKAGE_NAME longpipe)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${LP_MAINTAINER})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL ${LP_PACKAGES})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${LP_MAINTAINER})
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # dpkg-shlibdeps: libc6, libssl3, libstdc++6, ...

set(CPACK_DEBIAN_LIBLONGPIPE_PACKAGE_NAME liblongpipe)
set(CPACK_DEBIAN_LIBLONGPIPE_PACKAGE_SECTION libs)
set(CPACK_COMPONENT_LIBLONGPIPE_DESCRIPTION
  "preload library for fast PVM and MPI across long-delay links
LongPipe makes existing, already compiled PVM 3.4 and Open MPI programs
fast across wide-area links with long round trips, such as a geostationary
satellite hop, without changing, recompiling or relinking them.
.
This package holds the library programs preload (LD_PRELOAD): it carries
messages between sites over its own authenticated, encrypted sessions with
a window of messages in flight. The longpipe package starts programs with it.")

set(CPACK_DEBIAN_LONGPIPE_PACKAGE_NAME longpipe)
set(CPACK_DEBIAN_LONGPIPE_PACKAGE_SECTION net)
set(CPACK_DEBIAN_LONGPIPE_PACKAGE_DEPENDS "liblongpipe (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_LONGPIPE_PACKAGE_RECOMMENDS "openmpi-bin | pvm")
set(CPACK_DEBIAN_LONGPIPE_PACKAGE_SUGGESTS longpiped)
set(CPACK_COMPONENT_LONGPIPE_DESCRIPTION
  "run PVM and MPI programs fast across long-delay links
LongPipe makes existing, already compiled PVM 3.4 and Open MPI programs
fast across wide-area links with long round trips, such as a geostationary
satellite hop, without changing, recompiling or relinking them.
.
This package holds the longpipe command: 'longpipe run' starts a PVM
program and 'longpipe mpirun' an MPI job with the library preloaded on
every host, and 'longpipe config' shows the settings. Manual pages
longpipe(1) and longpipe(7).")

set(CPACK_DEBIAN_LONGPIPED_PACKAGE_NAME longpiped)
set(CPACK_DEBIAN_LONGPIPED_PACKAGE_SECTION net)
set(CPACK_COMPONENT_LONGPIPED_DESCRIPTION
  "LongPipe site gateway
LongPipe makes existing, already compiled PVM 3.4 and Open MPI programs
fast across wide-area links with long round trips, such as a geostationary
satellite hop.
.
This package holds longpiped, the gateway of one site: it keeps warm,
authenticated sessions to the other sites' gateways and forwards local
processes' streams over them, with the systemd unit template
longpiped@.service.")

include(CPack)
