// The process's side of the site gateway's Unix socket (longpiped; docs/engine/gateway.md).
// Every connection starts with one request line of at most kMaxGatewayLine bytes:
//   "LONGPIPE-GATEWAY/1 SITE\n"               -> "OK <site>\n", then the gateway closes
//   "LONGPIPE-GATEWAY/1 CONNECT <endpoint>\n" -> "OK\n" and a byte stream to <endpoint>, or
//                                                "ERR <reason>\n" and the gateway closes
// The gateway answers CONNECT at once, so stream bytes may follow the request line unanswered.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "file_descriptor.h"

namespace lp {

inline constexpr std::size_t kMaxGatewayLine = 512;  // request or answer, with its '\n'
// How long the engine waits for the gateway to name its site.
inline constexpr std::chrono::milliseconds kGatewaySiteTimeout{2000};

std::string gateway_site_request();
std::string gateway_connect_request(const std::string& endpoint);

// An answer line without its '\n': OK (with the text after "OK ", if any) or ERR with the reason.
struct GatewayAnswer {
  bool ok = false;
  std::string text;  // OK: what followed "OK " ("" for a bare OK); ERR: the reason
};
// nullopt: not a line of the protocol.
std::optional<GatewayAnswer> parse_gateway_answer(const std::string& line);

// A non-blocking Unix stream connection to the gateway at `path`. Throws SystemError whose text
// names LONGPIPE_GATEWAY and the path.
FileDescriptor connect_to_gateway(const std::string& path);

// Asks the gateway at `path` for its site's name (SITE), waiting at most `timeout`. Throws
// SystemError (no gateway there) or ConfigError (no valid answer in time), naming LONGPIPE_GATEWAY.
std::string ask_gateway_site(const std::string& path, std::chrono::milliseconds timeout = kGatewaySiteTimeout);

}  // namespace lp
