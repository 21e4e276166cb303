// Config: reading the environment and LONGPIPE_CONFIG files through the settings' table
// (settings.h), the socket buffers and congestion controls that follow, `longpipe config`'s text.
#include "config.h"

#include <cstdlib>
#include <sstream>

#include "config/settings.h"
#include "settings_registry.h"
#include "job_key.h"
#include "wire/wire_frame.h"

namespace lp {
namespace {

// Socket buffers smaller than this help nobody (Linux's own default is 128 KiB for receive).
constexpr std::size_t kMinimumSocketBuffer = 64u << 10;
// Socket buffers as multiples of the bandwidth-delay product (see Config::effective_*_buffer).
constexpr double kReceiveBufferBdps = 2.0;
// The kernel doubles a requested send buffer for its bookkeeping; 0.7 BDP requested lets about one
// BDP of data be in flight, which fills the path without overfilling a one-BDP queue (2 BDP does,
// with many retransmissions).
constexpr double kSendBufferBdps = 0.7;

using namespace config_settings;

}  // namespace

double Config::bdp_bytes() const { return bandwidth_mbit * 1e6 / 8.0 * static_cast<double>(rtt.count()) / 1000.0; }

namespace {
std::size_t buffer_or_bdp_multiple(std::size_t explicit_size, double bdp_bytes, double multiple) {
  if (explicit_size != 0) return explicit_size;
  const auto size = static_cast<std::size_t>(multiple * bdp_bytes);
  return size < kMinimumSocketBuffer ? kMinimumSocketBuffer : size;
}
}  // namespace

std::size_t Config::effective_receive_buffer() const {
  return buffer_or_bdp_multiple(receive_buffer, bdp_bytes(), kReceiveBufferBdps);
}

std::string Config::congestion_for_stream(std::size_t stream) const {
  std::vector<std::string> names;
  std::stringstream list(congestion);
  for (std::string name; std::getline(list, name, ',');) names.push_back(name);
  if (names.empty()) return "system";
  // A spill stream carries what the small-message stream's window cannot yet: its congestion
  // control, so that a burst that fits its window leaves at once (cubic does not pace).
  return names[(stream >= kFirstSpillStream ? 0 : stream) % names.size()];
}

std::size_t Config::effective_send_buffer() const {
  return buffer_or_bdp_multiple(send_buffer, bdp_bytes(), kSendBufferBdps);
}

Config Config::from_variables(const std::map<std::string, std::string>& given) {
  std::map<std::string, std::string> variables;
  if (auto file = given.find(std::string(kPrefix) + "CONFIG"); file != given.end() && !file->second.empty()) {
    variables = read_config_file(file->second);
  }
  for (const auto& [name, value] : given) variables[name] = value;  // the environment wins

  // Unknown LONGPIPE_* names are typos until proven otherwise: say so, with the nearest known name;
  // and the other parts' values are checked here too, so that a bad one stops the program at start.
  settings::check(variables);

  Config config;
  if (auto file = variables.find(std::string(kPrefix) + "KEY_FILE"); file != variables.end()) {
    if (variables.count(std::string(kPrefix) + "KEY") != 0) {
      throw ConfigError("LONGPIPE_KEY and LONGPIPE_KEY_FILE are both set: set one of them");
    }
    config.key = read_key_file(file->second);
  }
  for (const auto& setting : config_settings::settings()) {
    if (auto found = variables.find(std::string(kPrefix) + setting.name); found != variables.end()) {
      setting.parse(config, found->second);
    }
  }

  // Relations between values.
  if (config.rto_min > config.rto_max) {
    throw ConfigError("LONGPIPE_RTO_MIN_MS (" + std::to_string(config.rto_min.count()) +
                      ") must not exceed LONGPIPE_RTO_MAX_MS (" + std::to_string(config.rto_max.count()) + ")");
  }
  if (config.rto_initial < config.rto_min || config.rto_initial > config.rto_max) {
    throw ConfigError("LONGPIPE_RTO_INITIAL_MS (" + std::to_string(config.rto_initial.count()) +
                      ") must lie between LONGPIPE_RTO_MIN_MS and LONGPIPE_RTO_MAX_MS");
  }
  if (config.connect_retry_initial > config.connect_retry_max) {
    throw ConfigError("LONGPIPE_CONNECT_RETRY_MS must not exceed LONGPIPE_CONNECT_RETRY_MAX_MS");
  }
  if (config.keepalive_interval >= config.dead_peer_timeout) {
    throw ConfigError("LONGPIPE_KEEPALIVE_MS (" + std::to_string(config.keepalive_interval.count()) +
                      ") must be shorter than LONGPIPE_DEAD_PEER_MS (" +
                      std::to_string(config.dead_peer_timeout.count()) + ")");
  }
  if (config.max_message > config.window_bytes) {
    throw ConfigError("LONGPIPE_MAX_MESSAGE (" + std::to_string(config.max_message) +
                      ") must not exceed LONGPIPE_WINDOW_BYTES (" + std::to_string(config.window_bytes) +
                      "): one message must fit in the window");
  }
  if (!config.gateway.empty() && config.carrier == CarrierChoice::kUdp) {
    throw ConfigError("LONGPIPE_CARRIER=udp with LONGPIPE_GATEWAY (" + config.gateway +
                      "): a gateway forwards TCP streams only; use tcp or auto");
  }
  return config;
}

Config Config::from_environment() { return from_variables(settings::variables_in_environment()); }

std::string Config::describe() const {
  std::ostringstream out;
  const Config defaults;
  for (const auto& setting : config_settings::settings()) {
    const std::string value = setting.show(*this);
    const std::string fallback = setting.show(defaults);
    out << kPrefix << setting.name << "=" << value;
    out << "    # " << setting.meaning;
    if (value != fallback) out << " (default: " << (fallback.empty() ? "empty" : fallback) << ")";
    out << "\n";
  }
  if (measured_receive_buffer() || measured_send_buffer()) {
    out << "# path measured per session (round trip at the handshake and from TCP_INFO, rate from delivery-rate "
           "samples); socket buffers sized from it";
    if (!measured_receive_buffer()) out << " (receive fixed at " << effective_receive_buffer() << " bytes)";
    if (!measured_send_buffer()) out << " (send fixed at " << effective_send_buffer() << " bytes)";
    out << "; warm-start cache "
        << (path_cache == "auto" ? std::string("$XDG_CACHE_HOME/longpipe/paths or ~/.cache/longpipe/paths") : path_cache)
        << "\n";
  } else {
    out << "# bandwidth-delay product " << static_cast<std::size_t>(bdp_bytes())
        << " bytes (LONGPIPE_BANDWIDTH x LONGPIPE_RTT); socket buffers: receive " << effective_receive_buffer()
        << ", send " << effective_send_buffer() << " bytes\n";
  }
  return out.str();
}

}  // namespace lp
