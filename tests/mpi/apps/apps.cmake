# Third-party MPI programs precompiled by Debian (lammps, scalapack-mpi-test, netpipe-openmpi,
# mumps-test) across the two emulated sites, with Open MPI alone and under LD_PRELOAD=liblongpipe.so
# (run_app.sh).
# Included from tests/mpi/CMakeLists.txt.
include(LongPipeWan)
longpipe_wan_fixture(FIXTURE mpi-apps-wan ARGS --delay 5)
foreach(app lammps scalapack-qr scalapack-llt netpipe mumps-laplace)
  longpipe_wan_test(NAME mpi.apps.${app} FIXTURE mpi-apps-wan
                    COMMAND ${CMAKE_CURRENT_LIST_DIR}/run_app.sh ${app}
                    LABELS nosan TIMEOUT 400)  # mpi-sites preloads one library: no ASan runtime first
  set_property(TEST mpi.apps.${app} APPEND PROPERTY
               ENVIRONMENT "LONGPIPE_LIBRARY=$<TARGET_FILE:longpipe>")
  # Two jobs of four ranks each at once would only slow each other down on the link and the CPU.
  set_property(TEST mpi.apps.${app} PROPERTY RESOURCE_LOCK mpi-apps-wan-sites)
endforeach()
