#include "message.h"

#include "wire/wire_frame.h"

namespace lp {
namespace {

void put32(std::byte* out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<std::byte>(v >> (24 - 8 * i));
}

std::uint32_t get32(const std::byte* in) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<std::uint8_t>(in[i]);
  return v;
}

}  // namespace

std::vector<std::byte> pack_message(Message message) {
  std::vector<std::byte> packed = std::move(message.body);
  const std::size_t body = packed.size();
  packed.resize(body + kMessageTrailerSize);
  std::byte* trailer = packed.data() + body;
  put32(trailer + 0, message.source);
  put32(trailer + 4, message.destination);
  put32(trailer + 8, static_cast<std::uint32_t>(message.tag));
  put32(trailer + 12, static_cast<std::uint32_t>(message.context));
  put32(trailer + 16, message.flags);
  return packed;
}

Message unpack_message(std::vector<std::byte> packed) {
  if (packed.size() < kMessageTrailerSize) throw MalformedFrame("message shorter than its header");
  const std::size_t body = packed.size() - kMessageTrailerSize;
  const std::byte* trailer = packed.data() + body;
  Message message;
  message.source = get32(trailer + 0);
  message.destination = get32(trailer + 4);
  message.tag = static_cast<std::int32_t>(get32(trailer + 8));
  message.context = static_cast<std::int32_t>(get32(trailer + 12));
  message.flags = get32(trailer + 16);
  packed.resize(body);
  message.body = std::move(packed);
  return message;
}

}  // namespace lp
