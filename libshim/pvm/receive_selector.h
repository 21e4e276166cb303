// ReceiveSelector: what a pvm_recv/nrecv/trecv/probe call asks for, matched the way libpvm3's
// default matching function does (source or -1, tag or -1, and exactly the current context).
// The front end hands messages to libpvm3 past its usual bound until one matching the pending
// receive has gone over, so a selective receive never waits behind messages it does not want.
// Pure state, no I/O.
#pragma once

#include "message.h"

namespace lp::pvm {

struct ReceiveSelector {
  static constexpr int kAny = -1;  // PVM's wildcard for source and tag

  int source = kAny;
  int tag = kAny;
  int context = 0;

  bool matches(const Message& message) const {
    return (source == kAny || source == static_cast<int>(message.source)) && (tag == kAny || tag == message.tag) &&
           context == message.context;
  }
};

}  // namespace lp::pvm
