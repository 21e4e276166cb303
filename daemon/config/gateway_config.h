// GatewayConfig: longpiped's config file (daemon/README.md, "Config"): one `key value...` per line,
// `#` starts a comment. Every error names the file, the line and the key.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lpd {

// what(): "FILE:LINE: KEY: problem" (or "FILE: problem" for what no one line holds).
class ConfigFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct GatewayConfig {
  struct Peer {
    std::string site;
    std::string address;  // "host:port" of its gateway's `listen`; empty: `dial-in` (it dials us)
    int line = 0;
  };
  struct Route {  // `route SITE via PEER`: streams to SITE go through PEER's gateway
    std::string site, via;
    int line = 0;
  };
  std::string file;
  std::string site;
  std::string socket;
  std::string listen;
  std::string key_file;
  std::vector<Peer> peers;
  std::vector<Route> routes;
  std::vector<std::pair<std::string, std::string>> relays;  // `relay SITE SITE`: pairs relayed here
  std::size_t stream_window = 16u << 20;
  std::size_t max_streams = 1024;
  std::vector<uid_t> allow_uids;  // empty: the gateway's own uid and root
  std::map<std::string, std::string> engine;  // LONGPIPE_* from `engine` lines

  // The engine's variables (lp::Config::from_variables): the gateway's defaults for long-haul
  // sessions, `listen`, `key-file`, then the `engine` lines.
  std::map<std::string, std::string> engine_variables() const;
  std::map<std::string, std::string> peer_map() const;  // a dial-in peer's address is ""
  std::map<std::string, std::string> route_map() const;
};

// The defaults the gateway gives its engine (an `engine` line overrides them): a dead-peer timeout
// of minutes, since a gateway-to-gateway outage must lose nothing (a restarted peer is noticed by
// its HELLO at once); no silent-path limit, since a peer gateway is long-lived and an outage of any
// length ends (the session keeps probing and redialling with the engine's capped back-off, and two
// gateways never both give up on each other over a silence); and a short linger at exit.
inline const std::map<std::string, std::string>& gateway_engine_defaults() {
  static const std::map<std::string, std::string> defaults = {
      {"LONGPIPE_DEAD_PEER_MS", "300000"},
      {"LONGPIPE_SILENT_PATH_MS", "0"},
      {"LONGPIPE_LINGER_MS", "1000"},
  };
  return defaults;
}

// Parses `text` (the contents of `file`); checks the engine settings with lp::Config (which reads
// the key file). Throws ConfigFileError.
GatewayConfig parse_config(std::string_view text, const std::string& file);
// Reads and parses `path`.
GatewayConfig read_config(const std::string& path);

}  // namespace lpd
