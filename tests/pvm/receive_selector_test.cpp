// ReceiveSelector: the front end's view of which message a pending receive wants (libpvm3's default
// matching), and the ArrivalGate's size, which bounds how far the front end reads ahead.
#include "receive_selector.h"

#include <catch2/catch.hpp>

#include "arrival_gate.h"
#include "route_flags.h"

using lp::Message;
using lp::pvm::ArrivalGate;
using lp::pvm::ReceiveSelector;

namespace {

Message message_from(std::uint32_t source, int tag, int context) {
  Message message;
  message.source = source;
  message.destination = 0x40001;
  message.tag = tag;
  message.context = context;
  return message;
}

}  // namespace

TEST_CASE("a selector matches source and tag, each or both wildcards, in exactly its context") {
  const Message message = message_from(0x40002, 7, 0);
  CHECK(ReceiveSelector{0x40002, 7, 0}.matches(message));
  CHECK(ReceiveSelector{-1, 7, 0}.matches(message));
  CHECK(ReceiveSelector{0x40002, -1, 0}.matches(message));
  CHECK(ReceiveSelector{-1, -1, 0}.matches(message));
  CHECK_FALSE(ReceiveSelector{0x40003, 7, 0}.matches(message));
  CHECK_FALSE(ReceiveSelector{0x40002, 8, 0}.matches(message));
  CHECK_FALSE(ReceiveSelector{-1, -1, 0x40005}.matches(message));  // another context never matches
}

TEST_CASE("the gate's size counts held and ready messages until they are taken") {
  ArrivalGate gate;
  CHECK(gate.size() == 0);
  CHECK_FALSE(gate.has_ready());
  gate.admit(message_from(0x40002, 1, 0));
  Message after_switch = message_from(0x40003, 1, 0);
  after_switch.flags = lp::pvm::kFlagAfterPvmdRoute;
  gate.admit(after_switch);  // held until 0x40003's route marker
  CHECK(gate.size() == 2);
  CHECK(gate.has_ready());
  CHECK(gate.next_ready());
  CHECK(gate.size() == 1);
  CHECK_FALSE(gate.has_ready());  // only the held one is left
  gate.marker_arrived(0x40003);
  CHECK(gate.has_ready());
  CHECK(gate.next_ready()->source == 0x40003);
  CHECK(gate.size() == 0);
}
