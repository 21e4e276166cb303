#include "config/gateway_config.h"

#include <cctype>
#include <fstream>
#include <sstream>

#include "config.h"
#include "relay/names.h"
#include "relay/relay.h"

namespace lpd {
namespace {

constexpr std::size_t kMaxLine = 4096;
constexpr std::size_t kMaxPeers = 256;
constexpr std::size_t kMaxSocketPath = 107;  // sun_path, with its terminating NUL

struct Line {
  const std::string& file;
  int number;
  std::string key;
  [[noreturn]] void fail(const std::string& problem) const {
    throw ConfigFileError(file + ":" + std::to_string(number) + ": " + key + ": " + problem);
  }
};

std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> words;
  std::istringstream in{std::string(text)};
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// "16M", "65536", "1G", "512K" (binary multiples).
std::size_t parse_size(const Line& line, const std::string& text, std::size_t low, std::size_t high) {
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  const std::string suffix = text.substr(digits);
  std::size_t unit = 1;
  if (suffix == "K" || suffix == "k") unit = 1u << 10;
  else if (suffix == "M" || suffix == "m") unit = 1u << 20;
  else if (suffix == "G" || suffix == "g") unit = 1u << 30;
  else if (!suffix.empty()) line.fail("'" + text + "' is not a size (a number, optionally with K, M or G)");
  if (digits == 0 || digits > 12) line.fail("'" + text + "' is not a size (a number, optionally with K, M or G)");
  const std::size_t value = std::stoull(text.substr(0, digits)) * unit;
  if (value < low || value > high) {
    line.fail(text + " is out of range (" + std::to_string(low) + " to " + std::to_string(high) + ")");
  }
  return value;
}

void check_engine(const Line& line, const std::map<std::string, std::string>& variables) {
  try {
    lp::Config::from_variables(variables);
  } catch (const std::exception& e) {
    line.fail(e.what());
  }
}

// Whether `name` is one of the engine's settings (those `longpipe config` lists).
bool engine_setting(const std::string& name) {
  static const std::string described = "\n" + lp::Config{}.describe();
  return described.find("\n" + name + "=") != std::string::npos;
}

// Routes go through a direct peer to a site that is none (one relay hop, no loop); relays join two
// direct peers.
void check_routes(const GatewayConfig& config, const std::vector<int>& relay_lines) {
  const auto peer_line = [&](const std::string& site) {
    for (const auto& peer : config.peers) {
      if (peer.site == site) return peer.line;
    }
    return 0;
  };
  for (const auto& route : config.routes) {
    const Line line{config.file, route.line, "route"};
    if (route.site == config.site) line.fail("site " + route.site + " is this gateway's own site");
    if (route.site == route.via) line.fail("site " + route.site + " routed via itself (a loop)");
    if (peer_line(route.site) != 0) {
      line.fail("site " + route.site + " is a direct peer (line " + std::to_string(peer_line(route.site)) + "): route it or peer it, not both");
    }
    if (route.via == config.site) line.fail("via " + route.via + ", this gateway's own site (a loop)");
    if (peer_line(route.via) == 0) {
      line.fail("via " + route.via + ", which is not a direct peer (a peer line): a stream crosses one relay at most");
    }
  }
  for (std::size_t i = 0; i < config.relays.size(); ++i) {
    const Line line{config.file, relay_lines[i], "relay"};
    for (const std::string& site : {config.relays[i].first, config.relays[i].second}) {
      if (site == config.site) line.fail("site " + site + " is this gateway's own site (a relay joins two other sites)");
      if (peer_line(site) == 0) line.fail("site " + site + " is not a direct peer (a peer line)");
    }
  }
}

}  // namespace

std::map<std::string, std::string> GatewayConfig::engine_variables() const {
  std::map<std::string, std::string> variables = gateway_engine_defaults();
  variables["LONGPIPE_LISTEN"] = listen;
  variables["LONGPIPE_KEY_FILE"] = key_file;
  for (const auto& [name, value] : engine) variables[name] = value;
  return variables;
}

std::map<std::string, std::string> GatewayConfig::peer_map() const {
  std::map<std::string, std::string> map;
  for (const Peer& peer : peers) map[peer.site] = peer.address;
  return map;
}

std::map<std::string, std::string> GatewayConfig::route_map() const {
  std::map<std::string, std::string> map;
  for (const Route& route : routes) map[route.site] = route.via;
  return map;
}

GatewayConfig parse_config(std::string_view text, const std::string& file) {
  GatewayConfig config;
  config.file = file;
  std::map<std::string, int> seen;  // single-valued keys -> line
  std::vector<int> relay_lines;
  int number = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    std::string_view raw = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (raw.size() > kMaxLine) Line{file, number, "line"}.fail("longer than " + std::to_string(kMaxLine) + " bytes");
    if (const auto hash = raw.find('#'); hash != std::string_view::npos) raw = raw.substr(0, hash);
    const std::vector<std::string> words = words_of(raw);
    if (words.empty()) continue;
    const Line line{file, number, words[0]};
    const std::string& key = words[0];
    const std::vector<std::string> args(words.begin() + 1, words.end());
    const bool single = key != "peer" && key != "engine" && key != "allow-uid" && key != "route" && key != "relay";
    if (single) {
      if (seen.contains(key)) line.fail("given twice (first on line " + std::to_string(seen[key]) + ")");
      seen[key] = number;
      if (args.size() != 1) line.fail("takes one value, not " + std::to_string(args.size()));
    }
    if (key == "site") {
      if (!valid_site_name(args[0])) line.fail("'" + args[0] + "' is not a site name (1-32 of A-Z a-z 0-9 _ -)");
      config.site = args[0];
    } else if (key == "socket") {
      if (args[0].front() != '/') line.fail("'" + args[0] + "' is not an absolute path");
      if (args[0].size() > kMaxSocketPath) line.fail("longer than " + std::to_string(kMaxSocketPath) + " bytes");
      config.socket = args[0];
    } else if (key == "listen") {
      if (!parse_host_port(args[0])) line.fail("'" + args[0] + "' is not host:port");
      check_engine(line, {{"LONGPIPE_LISTEN", args[0]}});
      config.listen = args[0];
    } else if (key == "key-file") {
      check_engine(line, {{"LONGPIPE_KEY_FILE", args[0]}});
      config.key_file = args[0];
    } else if (key == "stream-window") {
      config.stream_window = parse_size(line, args[0], RelayLimits::kMinWindow, RelayLimits::kMaxWindow);
    } else if (key == "max-streams") {
      config.max_streams = parse_size(line, args[0], 1, 65536);
    } else if (key == "peer") {
      if (args.size() != 2) line.fail("takes a site name and its gateway's host:port (or dial-in)");
      if (!valid_site_name(args[0])) line.fail("'" + args[0] + "' is not a site name (1-32 of A-Z a-z 0-9 _ -)");
      if (args[1] != "dial-in" && !parse_host_port(args[1])) line.fail("'" + args[1] + "' is not host:port (or dial-in)");
      for (const auto& peer : config.peers) {
        if (peer.site == args[0]) line.fail("site " + args[0] + " is given twice (first on line " + std::to_string(peer.line) + ")");
      }
      if (config.peers.size() >= kMaxPeers) line.fail("more than " + std::to_string(kMaxPeers) + " peers");
      config.peers.push_back({args[0], args[1] == "dial-in" ? "" : args[1], number});
    } else if (key == "route") {
      if (args.size() != 3 || args[1] != "via") line.fail("takes SITE via PEER");
      for (const std::string& name : {args[0], args[2]}) {
        if (!valid_site_name(name)) line.fail("'" + name + "' is not a site name (1-32 of A-Z a-z 0-9 _ -)");
      }
      for (const auto& route : config.routes) {
        if (route.site == args[0]) line.fail("site " + args[0] + " is routed twice (first on line " + std::to_string(route.line) + ")");
      }
      config.routes.push_back({args[0], args[2], number});
    } else if (key == "relay") {
      if (args.size() != 2) line.fail("takes two site names");
      for (const std::string& name : args) {
        if (!valid_site_name(name)) line.fail("'" + name + "' is not a site name (1-32 of A-Z a-z 0-9 _ -)");
      }
      if (args[0] == args[1]) line.fail("names site " + args[0] + " twice (a relay joins two sites)");
      config.relays.emplace_back(args[0], args[1]);
      relay_lines.push_back(number);
    } else if (key == "allow-uid") {
      if (args.empty()) line.fail("takes one or more uids");
      for (const auto& uid : args) {
        if (uid.empty() || uid.size() > 10 || uid.find_first_not_of("0123456789") != std::string::npos ||
            std::stoull(uid) > 0xfffffffeull) {
          line.fail("'" + uid + "' is not a uid");
        }
        config.allow_uids.push_back(static_cast<uid_t>(std::stoull(uid)));
      }
    } else if (key == "engine") {
      if (args.size() != 1) line.fail("takes one LONGPIPE_NAME=value");
      const auto equals = args[0].find('=');
      const std::string name = args[0].substr(0, equals);
      if (equals == std::string::npos || name.rfind("LONGPIPE_", 0) != 0) line.fail("'" + args[0] + "' is not LONGPIPE_NAME=value");
      if (name == "LONGPIPE_LISTEN" || name == "LONGPIPE_KEY" || name == "LONGPIPE_KEY_FILE" || name == "LONGPIPE_CONFIG") {
        line.fail(name + " comes from the gateway's own keys (listen, key-file), not an engine line");
      }
      if (!engine_setting(name)) line.fail(name + " is not an engine setting (`longpipe config` lists them)");
      if (config.engine.contains(name)) line.fail(name + " is given twice");
      std::map<std::string, std::string> alone = gateway_engine_defaults();
      alone[name] = args[0].substr(equals + 1);
      check_engine(line, alone);
      config.engine[name] = args[0].substr(equals + 1);
    } else {
      line.fail("unknown key (site, socket, listen, key-file, peer, route, relay, stream-window, max-streams, allow-uid, engine)");
    }
  }
  for (const char* required : {"site", "socket", "listen", "key-file"}) {
    if (!seen.contains(required)) throw ConfigFileError(file + ": " + required + ": missing (required)");
  }
  for (const auto& peer : config.peers) {
    if (peer.site == config.site) {
      Line{file, peer.line, "peer"}.fail("site " + peer.site + " is this gateway's own site");
    }
  }
  check_routes(config, relay_lines);
  try {
    lp::Config::from_variables(config.engine_variables());
  } catch (const std::exception& e) {
    throw ConfigFileError(file + ": engine settings together: " + e.what());
  }
  return config;
}

GatewayConfig read_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigFileError(path + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().size() > (1u << 20)) throw ConfigFileError(path + ": larger than 1 MiB");
  return parse_config(text.str(), path);
}

}  // namespace lpd
