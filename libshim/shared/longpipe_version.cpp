// liblongpipe.so's own C API (include/longpipe.h): which library and wire protocol is loaded.
#include "longpipe.h"

#include "wire/wire_frame.h"

const char* longpipe_version() { return LONGPIPE_VERSION; }

int longpipe_protocol_version() { return lp::kProtocolVersion; }
