// A connected pair of blocking, close-on-exec TCP sockets over IPv4 loopback: lp-perf's plain-TCP
// baseline, and the engine's socket tests (tests/core). Not part of liblongpipe.
#pragma once

#include "file_descriptor.h"

namespace lp {

struct LoopbackPair {
  FileDescriptor client;
  FileDescriptor server;
};
LoopbackPair connect_loopback_pair();

}  // namespace lp
