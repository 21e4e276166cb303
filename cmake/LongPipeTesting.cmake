# Helpers shared by the build's folders.

# Adds every subfolder of the current folder that has a CMakeLists.txt (parts appear as they are built).
function(longpipe_add_subfolders)
  file(GLOB dirs LIST_DIRECTORIES true CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*)
  foreach(dir IN LISTS dirs)
    if(EXISTS ${dir}/CMakeLists.txt)
      add_subdirectory(${dir})
    endif()
  endforeach()
endfunction()

# longpipe_catch_tests(PREFIX p LIBRARIES libs... LABELS labels... [TIMEOUT s]): every *_test.cpp in
# the current folder becomes one Catch2 binary <p>_<name>, registered with ctest as <p>.<name>.
function(longpipe_catch_tests)
  cmake_parse_arguments(ARG "" "PREFIX;TIMEOUT" "LIBRARIES;LABELS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cpp)
  foreach(source IN LISTS sources)
    get_filename_component(name ${source} NAME_WE)
    add_executable(${ARG_PREFIX}_${name} ${source})
    target_link_libraries(${ARG_PREFIX}_${name} PRIVATE ${ARG_LIBRARIES} lp_catch_main)
    add_test(NAME ${ARG_PREFIX}.${name} COMMAND ${ARG_PREFIX}_${name})
    set_tests_properties(${ARG_PREFIX}.${name} PROPERTIES LABELS "${ARG_LABELS}")
    if(ARG_TIMEOUT)
      set_tests_properties(${ARG_PREFIX}.${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT})
    endif()
  endforeach()
endfunction()
