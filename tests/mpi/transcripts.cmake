# MPI transparency tests (tests/mpi/transcripts.sh): plain MPI programs in C and Fortran, and
# Debian's precompiled MUMPS examples, run with and without LD_PRELOAD=liblongpipe.so; the
# transcripts must be identical, and LongPipe's statistics must show the inter-site messages.
# Included from tests/mpi/CMakeLists.txt.
find_package(MPI REQUIRED COMPONENTS C)
find_program(MPIFORT mpifort REQUIRED)

# The plain test programs: mpi.h / `use mpi` only, no LongPipe header.
add_executable(mpi_semantics ${CMAKE_CURRENT_LIST_DIR}/mpi_semantics.c)
target_link_libraries(mpi_semantics PRIVATE MPI::MPI_C)
# Fortran (`use mpi` and `use mpi_f08`) through Open MPI's own wrapper: the project does not enable
# Fortran for itself.
foreach(binding f f08)
  if(binding STREQUAL "f")
    set(source mpi_semantics.f90)
  else()
    set(source mpi_semantics_f08.f90)
  endif()
  set(program ${CMAKE_CURRENT_BINARY_DIR}/mpi_semantics_${binding})
  set(modules ${CMAKE_CURRENT_BINARY_DIR}/mpi_semantics_${binding}.mod)
  add_custom_command(OUTPUT ${program}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${modules}
    COMMAND ${MPIFORT} -O1 -Wall -Werror -J ${modules} -o ${program}
            ${CMAKE_CURRENT_LIST_DIR}/transcript.f90 ${CMAKE_CURRENT_LIST_DIR}/${source}
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/transcript.f90 ${CMAKE_CURRENT_LIST_DIR}/${source}
    COMMENT "Building the Fortran MPI test program ${source} with mpifort")
  add_custom_target(mpi_semantics_${binding}_program ALL DEPENDS ${program})
  set(mpi_semantics_${binding} ${program})
endforeach()

if(TARGET longpipe)
  set(with_front_end 0)
  set(scenarios c fortran fortran08 abort-c abort-fortran mumps)
  if(TARGET lp_mpi)
    set(with_front_end 1)
    list(APPEND scenarios unreachable-return unreachable-fatal)  # LongPipe's error reporting
  endif()
  set(transcripts_env
      "LONGPIPE_LIBRARY=$<TARGET_FILE:longpipe>;MPI_SEMANTICS_C=$<TARGET_FILE:mpi_semantics>;MPI_SEMANTICS_F=${mpi_semantics_f};MPI_SEMANTICS_F08=${mpi_semantics_f08};LONGPIPE_MPI_FRONT_END=${with_front_end}")
  set(transcripts ${CMAKE_CURRENT_LIST_DIR}/transcripts.sh)
  # One host, sites forced by LONGPIPE_MPI_SITES: no emulated link needed.
  foreach(scenario ${scenarios})
    add_test(NAME mpi.local.${scenario} COMMAND ${transcripts} local ${scenario})
    set_tests_properties(mpi.local.${scenario} PROPERTIES
      LABELS integration ENVIRONMENT "${transcripts_env}" TIMEOUT 400)
  endforeach()

  # Two sites across the emulated link (apps/mpi-sites), 5 ms each way: the tests check behaviour, not speed.
  include(LongPipeWan)
  longpipe_wan_fixture(FIXTURE mpi-transcripts-wan ARGS --delay 5)
  foreach(scenario ${scenarios})
    longpipe_wan_test(NAME mpi.two-site.${scenario} FIXTURE mpi-transcripts-wan
                      COMMAND ${transcripts} two-site ${scenario}
                      LABELS nosan TIMEOUT 500)  # mpi-sites preloads one library: no ASan runtime first
    set_property(TEST mpi.two-site.${scenario} APPEND PROPERTY ENVIRONMENT "${transcripts_env}")
    # One link instance: these tests take turns on it.
    set_property(TEST mpi.two-site.${scenario} PROPERTY RESOURCE_LOCK mpi-transcripts-wan-sites)
  endforeach()
endif()
