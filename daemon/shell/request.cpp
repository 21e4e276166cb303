#include "shell/request.h"

namespace lpd {

Request parse_request(std::string_view line) {
  constexpr std::string_view kPrefix = "LONGPIPE-GATEWAY/1 ";
  if (line.substr(0, kPrefix.size()) != kPrefix) return {Request::Kind::kInvalid, "not LONGPIPE-GATEWAY/1"};
  const std::string_view rest = line.substr(kPrefix.size());
  if (rest == "SITE") return {Request::Kind::kSite, ""};
  if (rest == "STATUS" || rest == "STATUS json") return {Request::Kind::kStatus, ""};
  constexpr std::string_view kConnect = "CONNECT ";
  if (rest.substr(0, kConnect.size()) == kConnect) {
    return {Request::Kind::kConnect, std::string(rest.substr(kConnect.size()))};
  }
  return {Request::Kind::kInvalid, "unknown request (SITE, CONNECT <site>/<host>:<port>, STATUS)"};
}

}  // namespace lpd
