// liblongpipe.so's own entry point for tools: which library and wire protocol is loaded.
#include "wire/wire_frame.h"

extern "C" __attribute__((visibility("default"))) int longpipe_protocol_version() {
  return lp::kProtocolVersion;
}
