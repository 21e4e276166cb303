// Message: what front ends hand to the engine and get back. Its header fields mean whatever the
// front end says (PVM: task ids, tag, context); the engine only carries them.
//
// On the wire and inside the ARQ a message is one byte string: the body followed by a 20-byte
// trailer (source, destination, tag, context, flags; big-endian). A trailer rather than a header
// lets both ends add and strip it in place, without copying the body.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lp {

// Bytes the engine appends to a body on send: give Message::body this much spare capacity
// (body.reserve(n + kMessageTrailerSize)) and send() packs the header without copying the body.
constexpr std::size_t kMessageTrailerSize = 20;

struct Message {
  std::uint32_t source = 0;
  std::uint32_t destination = 0;
  std::int32_t tag = 0;
  std::int32_t context = 0;
  std::uint32_t flags = 0;
  std::vector<std::byte> body;
  // Filled on receipt: the local_endpoint() of the engine that sent it (ignored by send()).
  std::string peer_endpoint;
};

// Body + trailer, consuming the message's body vector.
std::vector<std::byte> pack_message(Message message);
// The inverse; throws MalformedFrame if the bytes are shorter than a trailer.
Message unpack_message(std::vector<std::byte> packed);

}  // namespace lp
