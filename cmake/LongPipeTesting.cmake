# Helpers shared by the build's folders.

# longpipe_catch_tests(PREFIX p LIBRARIES libs... LABELS labels... [TIMEOUT s] TESTS names...): each
# named test <name>.cpp in the current folder becomes one Catch2 binary <p>_<name>, registered with
# ctest as <p>.<name>. Tests are listed, not globbed: a renamed or missing source fails the
# configure instead of silently dropping its test.
function(longpipe_catch_tests)
  cmake_parse_arguments(ARG "" "PREFIX;TIMEOUT" "LIBRARIES;LABELS;TESTS" ${ARGN})
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
    add_test(NAME ${ARG_PREFIX}.${name} COMMAND ${ARG_PREFIX}_${name})
    set_tests_properties(${ARG_PREFIX}.${name} PROPERTIES LABELS "${ARG_LABELS}")
    if(ARG_TIMEOUT)
      set_tests_properties(${ARG_PREFIX}.${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT})
    endif()
  endforeach()
endfunction()
