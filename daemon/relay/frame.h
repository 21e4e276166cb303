// Building and reading the gateway-to-gateway frames (relay.h describes them).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "message.h"
#include "relay/relay.h"

namespace lpd {

inline lp::Message make_frame(FrameKind kind, std::uint32_t id, std::uint32_t flags, std::int32_t context,
                              std::string_view body) {
  lp::Message frame;
  frame.source = id;
  frame.tag = static_cast<std::int32_t>(kind);
  frame.context = context;
  frame.flags = flags;
  frame.body.reserve(body.size() + lp::kMessageTrailerSize);
  for (char c : body) frame.body.push_back(static_cast<std::byte>(c));
  return frame;
}

// A body as text for logs and names: at most `limit` bytes, anything outside printable ASCII as '?'.
inline std::string printable(const lp::Message& frame, std::size_t limit = 200) {
  std::string text;
  for (std::size_t i = 0; i < frame.body.size() && i < limit; ++i) {
    const auto c = static_cast<unsigned char>(frame.body[i]);
    text.push_back(c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?');
  }
  return text;
}

}  // namespace lpd
