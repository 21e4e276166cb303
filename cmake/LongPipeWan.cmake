# LongPipeWan: ctest fixtures that bring up emulated sites joined by emulated links (netem/wan).
#
#   include(LongPipeWan)
#   longpipe_wan_fixture(FIXTURE <name> ARGS <netem/wan up arguments...>)
#       Two tests, <name>.wan-up (FIXTURES_SETUP) and <name>.wan-down (FIXTURES_CLEANUP: ctest runs it
#       even when the tests in between fail). The link's instance is unique to the fixture AND the build
#       tree, so build/, build-asan/ and other engineers' trees can run their tests at the same time.
#       ARGS may be `--sites SPEC,... --hosts K` for the multi-site mode (netem/README.md); tests
#       then reach hosts with `${LONGPIPE_WAN} exec s<S>-gw|s<S>-h<K> ...`.
#   longpipe_wan_test(NAME <test> FIXTURE <name> COMMAND <cmd...> [LABELS ...] [TIMEOUT s])
#       A test that requires the fixture, labelled integration, run with LP_WAN_INSTANCE set so that
#       `${LONGPIPE_WAN} exec a|b CMD...` inside COMMAND reaches that fixture's link.
#   longpipe_gateways_fixture(FIXTURE <name> LINK <wan fixture> DIR <dir>)
#       Two tests, <wan fixture>.gateways-up and .gateways-down, that start and stop a longpiped in
#       every site of that fixture's link (netem/gateways; configs, sockets and logs in DIR): the
#       fixture <name>, which requires the link's and is torn down before it.
#   longpipe_wan_instance(<out-var> <fixture>)
#       The instance name of a fixture (namespaces lp-<instance>-site-a / lp-<instance>-site-b).
#
# Variables: LONGPIPE_WAN is the path of netem/wan, for use in COMMANDs.

get_filename_component(LONGPIPE_WAN "${CMAKE_CURRENT_LIST_DIR}/../netem/wan" ABSOLUTE)

# Instance names become part of namespace names: lower-case letters, digits and '-', at most 32 chars.
set(_LONGPIPE_WAN_FIXTURE_NAME_CHARS 24)

function(longpipe_wan_instance out_var fixture)
  string(TOLOWER "${fixture}" name)
  string(REGEX REPLACE "[^a-z0-9]+" "-" name "${name}")
  string(REGEX REPLACE "^-+|-+$" "" name "${name}")
  string(SUBSTRING "${name}" 0 ${_LONGPIPE_WAN_FIXTURE_NAME_CHARS} name)
  # The build tree's hash keeps build/ and build-asan/ (and other people's trees) apart.
  string(SHA1 tree_hash "${CMAKE_BINARY_DIR}")
  string(SUBSTRING "${tree_hash}" 0 6 tree_hash)
  set(${out_var} "${name}-${tree_hash}" PARENT_SCOPE)
endfunction()

function(longpipe_wan_fixture)
  cmake_parse_arguments(PARSE_ARGV 0 WAN "" "FIXTURE" "ARGS")
  if(NOT WAN_FIXTURE)
    message(FATAL_ERROR "longpipe_wan_fixture: FIXTURE <name> is required")
  endif()
  longpipe_wan_instance(instance "${WAN_FIXTURE}")
  set(env "LONGPIPE_BUILD_DIR=${CMAKE_BINARY_DIR}")

  # Labelled nosan: a selection by label (the sanitizer trees' -LE nosan) leaves a link nobody
  # selected down, and ctest adds the setup and clean-up of every selected test's fixture anyway.
  add_test(NAME ${WAN_FIXTURE}.wan-up COMMAND ${LONGPIPE_WAN} up --instance ${instance} ${WAN_ARGS})
  set_tests_properties(${WAN_FIXTURE}.wan-up PROPERTIES
    FIXTURES_SETUP ${WAN_FIXTURE} LABELS "integration;nosan" ENVIRONMENT "${env}" TIMEOUT 60)

  add_test(NAME ${WAN_FIXTURE}.wan-down COMMAND ${LONGPIPE_WAN} down --instance ${instance})
  set_tests_properties(${WAN_FIXTURE}.wan-down PROPERTIES
    FIXTURES_CLEANUP ${WAN_FIXTURE} LABELS "integration;nosan" ENVIRONMENT "${env}" TIMEOUT 60)
endfunction()

function(longpipe_wan_test)
  cmake_parse_arguments(PARSE_ARGV 0 WAN "" "NAME;FIXTURE;TIMEOUT" "COMMAND;LABELS")
  if(NOT WAN_NAME OR NOT WAN_FIXTURE OR NOT WAN_COMMAND)
    message(FATAL_ERROR "longpipe_wan_test: NAME, FIXTURE and COMMAND are required")
  endif()
  longpipe_wan_instance(instance "${WAN_FIXTURE}")
  add_test(NAME ${WAN_NAME} COMMAND ${WAN_COMMAND})
  set_tests_properties(${WAN_NAME} PROPERTIES
    FIXTURES_REQUIRED ${WAN_FIXTURE}
    LABELS "integration;${WAN_LABELS}"
    ENVIRONMENT "LP_WAN_INSTANCE=${instance};LONGPIPE_BUILD_DIR=${CMAKE_BINARY_DIR};LONGPIPE_WAN=${LONGPIPE_WAN}")
  if(WAN_TIMEOUT)
    set_tests_properties(${WAN_NAME} PROPERTIES TIMEOUT ${WAN_TIMEOUT})
  endif()
endfunction()

function(longpipe_gateways_fixture)
  cmake_parse_arguments(PARSE_ARGV 0 GW "" "FIXTURE;LINK;DIR" "")
  if(NOT GW_FIXTURE OR NOT GW_LINK OR NOT GW_DIR)
    message(FATAL_ERROR "longpipe_gateways_fixture: FIXTURE, LINK and DIR are required")
  endif()
  get_filename_component(gateways ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../netem/gateways ABSOLUTE)
  longpipe_wan_instance(instance "${GW_LINK}")
  set(env "LONGPIPE_BUILD_DIR=${CMAKE_BINARY_DIR};LP_WAN_INSTANCE=${instance}")
  # The daemon's path by its target's place (daemon/ is added after tests/: no generator expression).
  add_test(NAME ${GW_LINK}.gateways-up
           COMMAND ${gateways} --instance ${instance} up --dir ${GW_DIR} --daemon ${CMAKE_BINARY_DIR}/daemon/longpiped)
  set_tests_properties(${GW_LINK}.gateways-up PROPERTIES
    FIXTURES_SETUP ${GW_FIXTURE} FIXTURES_REQUIRED ${GW_LINK}
    LABELS "integration;nosan" ENVIRONMENT "${env}" TIMEOUT 60)
  add_test(NAME ${GW_LINK}.gateways-down COMMAND ${gateways} --instance ${instance} down)
  set_tests_properties(${GW_LINK}.gateways-down PROPERTIES
    FIXTURES_CLEANUP ${GW_FIXTURE} FIXTURES_REQUIRED ${GW_LINK}
    LABELS "integration;nosan" ENVIRONMENT "${env}" TIMEOUT 60)
endfunction()
