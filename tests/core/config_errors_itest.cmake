# Runs longpipe-config with bad LONGPIPE_* values: each must fail (exit 2) naming the variable
# and the accepted range; good values must be accepted and shown.
function(expect_error variable value pattern)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${variable}=${value} ${CONFIG_TOOL}
                  RESULT_VARIABLE status ERROR_VARIABLE error OUTPUT_QUIET)
  if(status EQUAL 0)
    message(FATAL_ERROR "${variable}=${value} was accepted")
  endif()
  if(NOT error MATCHES "${variable}" OR NOT error MATCHES "${pattern}")
    message(FATAL_ERROR "${variable}=${value}: the error does not name the variable and '${pattern}': ${error}")
  endif()
  message(STATUS "ok: ${variable}=${value} -> ${error}")
endfunction()

expect_error(LONGPIPE_RTO_MIN_MS abc "from 1 to")
expect_error(LONGPIPE_WINDOW_MESSAGES 0 "from 1 to")
expect_error(LONGPIPE_DEAD_PEER_MS -5 "from 100 to")
expect_error(LONGPIPE_WINDOW_FULL sometimes "block, fail, drop-oldest, keep-latest")
expect_error(LONGPIPE_RTO_BACKOFF 0.5 "from 1 to 16")
expect_error(LONGPIPE_BANDWIDTH fast "Mbit/s")
expect_error(LONGPIPE_PIN left "core")
expect_error(LONGPIPE_PATH_CACHE relative/file "auto, off, or an absolute file name")
expect_error(LONGPIPE_RTT soon "milliseconds")
expect_error(LONGPIPE_FAST_OPEN maybe "on or off")
expect_error(LONGPIPE_RTO_MINMS 5 "not a LongPipe setting")
expect_error(LONGPIPE_GATEWAY relative.sock "an absolute socket file name")

execute_process(COMMAND ${CMAKE_COMMAND} -E env LONGPIPE_RTO_MIN_MS=300 LONGPIPE_WINDOW_FULL=keep-latest ${CONFIG_TOOL}
                RESULT_VARIABLE status OUTPUT_VARIABLE output)
if(NOT status EQUAL 0 OR NOT output MATCHES "LONGPIPE_RTO_MIN_MS=300" OR NOT output MATCHES "LONGPIPE_WINDOW_FULL=keep-latest")
  message(FATAL_ERROR "good values were not accepted and shown: ${output}")
endif()

# The settings registry: a misspelt name suggests the nearest one; a front end's bad value is refused.
expect_error(LONGPIPE_WINDOW_BYTE 5 "did you mean LONGPIPE_WINDOW_BYTES[?]")
expect_error(LONGPIPE_COLLECTIVES tree "site or native")
expect_error(LONGPIPE_MPI_SITES 0,,1 "comma-separated list of site numbers")

# Plain: the user settings and what is set; --all: every setting; --json: the same as JSON.
execute_process(COMMAND ${CMAKE_COMMAND} -E env LONGPIPE_ACK_EVERY=3 ${CONFIG_TOOL} RESULT_VARIABLE status OUTPUT_VARIABLE plain)
if(NOT status EQUAL 0 OR NOT plain MATCHES "LONGPIPE_CARRIER=auto" OR NOT plain MATCHES "LONGPIPE_ACK_EVERY=3    # environment"
   OR plain MATCHES "LONGPIPE_RTO_MAX_MS")
  message(FATAL_ERROR "plain listing: user settings and set ones expected: ${plain}")
endif()
execute_process(COMMAND ${CONFIG_TOOL} --all RESULT_VARIABLE status OUTPUT_VARIABLE every)
if(NOT status EQUAL 0 OR NOT every MATCHES "LONGPIPE_RTO_MAX_MS=60000    # default" OR NOT every MATCHES "# Test hooks")
  message(FATAL_ERROR "--all does not list every setting: ${every}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env LONGPIPE_COLLECTIVES=native ${CONFIG_TOOL} --all --json
                RESULT_VARIABLE status OUTPUT_VARIABLE json)
string(JSON count LENGTH "${json}")
set(found "")
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON name GET "${json}" ${i} name)
  if(name STREQUAL "LONGPIPE_COLLECTIVES")
    string(JSON value GET "${json}" ${i} value)
    string(JSON source GET "${json}" ${i} source)
    set(found "${value} ${source}")
  endif()
endforeach()
if(NOT status EQUAL 0 OR count LESS 40 OR NOT found STREQUAL "native environment")
  message(FATAL_ERROR "--json: ${count} settings, LONGPIPE_COLLECTIVES '${found}': ${json}")
endif()
