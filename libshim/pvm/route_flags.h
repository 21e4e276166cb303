// Meaning of lp::Message::flags for messages the PVM front end hands to the engine.
#pragma once

#include <cstdint>

namespace lp::pvm {

// The sender's earlier messages to this destination went through the pvmd: the receiver holds this
// message until the sender's route marker (sent through the pvmd after them) has arrived, so that
// order between the two tasks holds across the switch.
inline constexpr std::uint32_t kFlagAfterPvmdRoute = 1u << 0;
// Not an application message: the answer to a hello (see FrontEnd), naming the sender's endpoint.
inline constexpr std::uint32_t kFlagHelloAnswer = 1u << 1;

}  // namespace lp::pvm
