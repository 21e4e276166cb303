# liblongpipe.so: the engine plus whichever front ends exist, as one preloadable library.
add_library(longpipe SHARED ${CMAKE_CURRENT_LIST_DIR}/shared/longpipe_version.cpp)
target_link_libraries(longpipe PRIVATE lp_core_internals)  # longpipe_version.cpp: the wire protocol version
if(TARGET lp_pvm)
  get_target_property(lp_pvm_type lp_pvm TYPE)
  if(lp_pvm_type STREQUAL "STATIC_LIBRARY")
    # Every interposed symbol must end up in the library, referenced or not.
    target_link_libraries(longpipe PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,lp_pvm>")
  else()
    target_link_libraries(longpipe PRIVATE lp_pvm)  # OBJECT library: all objects are linked
  endif()
endif()

# longpipe-config: prints the effective configuration (`./longpipe config`).
add_executable(longpipe-config ${CMAKE_CURRENT_LIST_DIR}/longpipe-config/longpipe_config.cpp)
target_link_libraries(longpipe-config PRIVATE lp_core)
set_target_properties(longpipe-config PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
