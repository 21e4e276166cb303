# Helpers shared by the build's folders.

# How ctest runs every Catch2 binary (Catch2 2.13): `--warn NoAssertions` fails a test case that
# checked nothing, such as one that returned early because its precondition did not hold.
set(LONGPIPE_CATCH_ARGS --warn NoAssertions)

# longpipe_thread_test_targets(TARGET...): executables that tests labelled engine or frontend run
# (the TSan tree's selection in ./longpipe test). The target thread-tests builds them all and no
# more, so that the TSan tree compiles only what its tests use; a test of those labels whose
# executable is not listed fails there on the missing file. Catch2 tests of those labels
# (longpipe_catch_tests) are listed by themselves, but not the single_thread ones TSan skips.
function(longpipe_thread_test_targets)
  set_property(GLOBAL APPEND PROPERTY LONGPIPE_THREAD_TEST_TARGETS ${ARGN})
endfunction()

# longpipe_catch_tests(PREFIX p LIBRARIES libs... LABELS labels... [TIMEOUT s] [ARGS args...] TESTS names...): each
# named test <name>.cpp in the current folder becomes one Catch2 binary <p>_<name>, registered with
# ctest as <p>.<name>. Tests are listed, not globbed: a renamed or missing source fails the
# configure instead of silently dropping its test. Each runs with LONGPIPE_CATCH_ARGS (a test case,
# or a generator's run of it, that asserts nothing fails) and ARGS (e.g. a test spec).
function(longpipe_catch_tests)
  cmake_parse_arguments(ARG "" "PREFIX;TIMEOUT" "LIBRARIES;LABELS;TESTS;ARGS" ${ARGN})
  if(NOT ARG_TESTS)
    message(FATAL_ERROR "longpipe_catch_tests(PREFIX ${ARG_PREFIX} ...): list the tests (TESTS name_test ...)")
  endif()
  foreach(name IN LISTS ARG_TESTS)
    set(source ${CMAKE_CURRENT_SOURCE_DIR}/${name}.cpp)
    if(NOT EXISTS ${source})
      message(FATAL_ERROR "longpipe_catch_tests: ${source} is missing (test ${ARG_PREFIX}.${name})")
    endif()
    add_executable(${ARG_PREFIX}_${name} ${source})
    target_link_libraries(${ARG_PREFIX}_${name} PRIVATE ${ARG_LIBRARIES} lp_catch_main)
    add_test(NAME ${ARG_PREFIX}.${name} COMMAND ${ARG_PREFIX}_${name} ${LONGPIPE_CATCH_ARGS} ${ARG_ARGS})
    set_tests_properties(${ARG_PREFIX}.${name} PROPERTIES LABELS "${ARG_LABELS}")
    if(("engine" IN_LIST ARG_LABELS OR "frontend" IN_LIST ARG_LABELS) AND NOT "single_thread" IN_LIST ARG_LABELS)
      longpipe_thread_test_targets(${ARG_PREFIX}_${name})
    endif()
    if(ARG_TIMEOUT)
      set_tests_properties(${ARG_PREFIX}.${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT})
    endif()
  endforeach()
endfunction()

# longpipe_isolate_test_cache(): called first in each test folder's CMakeLists.txt. At the end of
# the folder it gives every test there a cache folder of the build tree's own (XDG_CACHE_HOME), so
# the warm-start cache that sessions write when they end (libshim/core/path/path_cache.h) is not the
# user's ~/.cache/longpipe/paths: a test run must not teach the user's later programs the paths it
# emulated (a 50 ms "site-b"), and build/ and build-asan/ running side by side must not share one
# file. Tests of the cache itself name their own file with LONGPIPE_PATH_CACHE, which comes first.
function(longpipe_isolate_test_cache)
  cmake_language(DEFER CALL _longpipe_isolate_test_cache_here)
endfunction()

function(_longpipe_isolate_test_cache_here)
  get_property(tests DIRECTORY PROPERTY TESTS)
  if(tests)
    set_property(TEST ${tests} APPEND PROPERTY ENVIRONMENT_MODIFICATION
      "XDG_CACHE_HOME=set:${CMAKE_BINARY_DIR}/test-cache")
  endif()
endfunction()
