# Integration tests of the engine across the emulated link (labels integration;engine), plus
# checks of the configuration errors. Included by tests/core/CMakeLists.txt.
add_executable(lp-engine-probe ${CMAKE_CURRENT_LIST_DIR}/engine_probe_itest.cpp)
target_link_libraries(lp-engine-probe PRIVATE lp_core)
set_target_properties(lp-engine-probe PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
# A key holder sending garbage after a valid handshake (raw_peer.h): test tooling, not shipped.
add_executable(lp-garbage-peer ${CMAKE_CURRENT_LIST_DIR}/garbage_peer_itest.cpp)
target_link_libraries(lp-garbage-peer PRIVATE lp_core_internals)
set_target_properties(lp-garbage-peer PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

# What this file's tests (labels engine) run besides the link emulator and lp-perf.
longpipe_thread_test_targets(lp-engine-probe lp-garbage-peer longpipe-config lp-perf lp-linkemu)

include(LongPipeWan)
set(engine_itest ${CMAKE_CURRENT_LIST_DIR}/engine_itest.sh)
# A short emulated delay (20 ms each way) and a rate limit, as tests use.
longpipe_wan_fixture(FIXTURE engine-link ARGS --delay 20 --rate 50)
foreach(check reset reset-striped spill spill-large dial-storm wrong-key garbage garbage-authenticated dead-peer outage restart flood paused freeze)
  longpipe_wan_test(NAME core.engine-${check} FIXTURE engine-link COMMAND ${engine_itest} ${check}
                    LABELS engine TIMEOUT 180)
  # One link: these tests must not overlap (same port, ss -K by port).
  set_tests_properties(core.engine-${check} PROPERTIES RESOURCE_LOCK engine-link)
endforeach()

# The datagram carrier on its own link: 5 % loss and reordering each way (jitter 3 ms may reorder).
longpipe_wan_fixture(FIXTURE datagram-link ARGS --delay 20 --jitter 3 --reorder --loss 5 --rate 50)
longpipe_wan_test(NAME core.engine-datagram FIXTURE datagram-link COMMAND ${engine_itest} datagram
                  LABELS engine TIMEOUT 300)

# A bad LONGPIPE_* value is refused with a message naming the variable and the range.
add_test(NAME core.config-errors COMMAND ${CMAKE_COMMAND}
  -DCONFIG_TOOL=$<TARGET_FILE:longpipe-config> -P ${CMAKE_CURRENT_LIST_DIR}/config_errors_itest.cmake)
set_tests_properties(core.config-errors PROPERTIES LABELS "unit;engine")

# Warm start across the emulated link: a second fresh process reads the path cache the first wrote
# and judges it by the rule; a disagreeing, damaged or old entry is not used (checked through the
# statistics).
# Not in the ASan tree (nosan; TSan still runs it): the cache file's rules (damaged and old lines,
# mode 0600, off) are core.path_cache_test's there, and the engine reading, judging, seeding from
# and writing the cache on real sockets is core.auto-carrier's.
longpipe_wan_fixture(FIXTURE path-link ARGS --delay 25 --rate 50)
longpipe_wan_test(NAME core.path-warm-start FIXTURE path-link COMMAND ${CMAKE_CURRENT_LIST_DIR}/path_cache_itest.sh
                  LABELS engine nosan TIMEOUT 180)

# LONGPIPE_CARRIER=auto decided by the dialler (carrier_choice.h): tcp from the first byte on a new
# path (spill streams, 0.5-RTT data), datagrams on a known one, and the fallbacks. 50 ms each way:
# the shortest round trip auto takes for a long path (kAutoMinRtt, 100 ms).
longpipe_wan_fixture(FIXTURE auto-link ARGS --delay 110 --rate 50)
longpipe_wan_test(NAME core.auto-carrier FIXTURE auto-link COMMAND ${CMAKE_CURRENT_LIST_DIR}/auto_carrier_itest.sh
                  LABELS engine TIMEOUT 180)

# TCP Fast Open (LONGPIPE_FAST_OPEN): a second fresh process's connections carry HELLO in the SYN
# and the acceptor takes it; off at either end, nothing changes but that (checked through the statistics).
longpipe_wan_fixture(FIXTURE fast-open-link ARGS --delay 25 --rate 50)
longpipe_wan_test(NAME core.fast-open FIXTURE fast-open-link COMMAND ${CMAKE_CURRENT_LIST_DIR}/fast_open_itest.sh
                  LABELS engine TIMEOUT 120)
