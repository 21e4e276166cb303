// The one request line a process sends first on the gateway's Unix socket (daemon/README.md,
// "Protocol"). Pure parsing.
#pragma once

#include <string>
#include <string_view>

namespace lpd {

constexpr std::size_t kMaxRequestLine = 512;  // bytes, with its '\n'

struct Request {
  enum class Kind { kSite, kConnect, kStatus, kInvalid } kind = Kind::kInvalid;
  std::string argument;  // CONNECT's target; for kInvalid the reason
};

// `line` without its '\n'.
Request parse_request(std::string_view line);

}  // namespace lpd
