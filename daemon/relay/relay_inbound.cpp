// Relay: frames from peer gateways, and peers given up on. Every field is checked before use; a
// frame that breaks the rules is refused (counted and logged) or resets only its own stream.
#include <cstdio>

#include "relay/frame.h"
#include "relay/relay.h"

namespace lpd {
namespace {

// "<site> <16 hex digits>"
bool parse_hello(const std::string& body, std::string& site, std::uint64_t& instance) {
  const auto space = body.find(' ');
  if (space == std::string::npos || body.size() - space - 1 != 16) return false;
  site = body.substr(0, space);
  if (!valid_site_name(site)) return false;
  instance = 0;
  for (char c : body.substr(space + 1)) {
    int digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    else if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    if (digit < 0) return false;
    instance = instance * 16 + static_cast<std::uint64_t>(digit);
  }
  return true;
}

std::string hex(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

lp::Message Relay::hello_frame(bool answer) const {
  return make_frame(FrameKind::kHello, 0, answer ? kHelloAnswer : 0, static_cast<std::int32_t>(limits_.stream_window),
                    site_ + " " + hex(instance_));
}

void Relay::refuse(const std::string& from, const std::string& why) {
  ++refused_frames_;
  log("refused a frame from " + from + ": " + why);
}

void Relay::on_frame(const std::string& endpoint, const lp::Message& frame) {
  if (frame.tag == static_cast<std::int32_t>(FrameKind::kHello)) {
    on_hello(endpoint, frame);
    return;
  }
  const auto known = sites_by_endpoint_.find(endpoint);
  if (known == sites_by_endpoint_.end()) {
    refuse(endpoint, "not a configured peer gateway (no HELLO)");
    return;
  }
  deliver(known->second, frame);
}

void Relay::deliver(const std::string& site, const lp::Message& frame) {
  Peer& peer = peers_.at(site);
  if (site != site_) {
    ++peer.frames_received;
    if (frame.tag == static_cast<std::int32_t>(FrameKind::kData)) peer.bytes_received += frame.body.size();
  }
  switch (static_cast<FrameKind>(frame.tag)) {
    case FrameKind::kOpen:
      on_open(site, frame);
      return;
    case FrameKind::kData:
    case FrameKind::kCredit:
    case FrameKind::kClose:
      on_stream_frame(site, frame);
      return;
    default:
      refuse(site, "unknown frame kind " + std::to_string(frame.tag));
  }
}

void Relay::on_hello(const std::string& endpoint, const lp::Message& frame) {
  std::string site;
  std::uint64_t instance = 0;
  if (frame.body.size() > 64 || !parse_hello(printable(frame), site, instance)) {
    refuse(endpoint, "malformed HELLO");
    return;
  }
  const auto peer_it = peers_.find(site);
  if (site == site_ || peer_it == peers_.end()) {
    refuse(endpoint, "HELLO from site " + site + ", not a configured peer");
    return;
  }
  const auto window = static_cast<std::size_t>(frame.context);
  if (frame.context < 0 || window < RelayLimits::kMinWindow || window > RelayLimits::kMaxWindow) {
    refuse(endpoint, "HELLO with stream window " + std::to_string(frame.context) + " out of range");
    return;
  }
  const auto mapped = sites_by_endpoint_.find(endpoint);
  if (mapped != sites_by_endpoint_.end() && mapped->second != site) {
    refuse(endpoint, "HELLO as site " + site + " from the gateway of site " + mapped->second);
    return;
  }
  Peer& peer = peer_it->second;
  if (peer.dial_in && peer.endpoint != endpoint) {
    // A dial-in peer is where its HELLO comes from; frames go back on the session it opened.
    if (!peer.endpoint.empty()) sites_by_endpoint_.erase(peer.endpoint);
    peer.endpoint = endpoint;
  }
  sites_by_endpoint_[endpoint] = site;
  if (peer.instance && *peer.instance != instance) {
    log("peer " + site + " restarted (instance " + hex(instance) + ")");
    reset_site(site, "peer gateway " + site + " restarted");
  }
  if ((frame.flags & kHelloAnswer) == 0) peer.hello_answer_pending = true;
  if (!peer.up) log("peer " + site + " up at " + endpoint + " (instance " + hex(instance) + ")");
  peer.instance = instance;
  peer.window = window;
  peer.up = true;
  if (!peer.down_reason.empty()) {
    peer.down_reason.clear();
    peer.blocked = false;  // a new process of the peer, or a retried one: the engine sends to it again
    peer.refused = false;
  }
  for (auto& [handle, stream] : streams_) {
    if (stream.site != site || stream.credit_known) continue;
    stream.credit_known = true;
    stream.peer_window = window;
    refresh(stream);
  }
}

void Relay::on_open(const std::string& site, const lp::Message& frame) {
  const std::uint32_t id = frame.source;
  auto reply = [&](const std::string& reason) {
    control(site, make_frame(FrameKind::kClose, id, kOpenedByReceiver, 1, reason));
  };
  if ((frame.flags & kOpenedByReceiver) != 0) {
    refuse(site, "OPEN marked as opened by its receiver");
    return;
  }
  if (keys_.contains(Key{site, false, id})) {
    refuse(site, "OPEN of stream " + std::to_string(id) + ", which is open");
    return;
  }
  const Peer& peer = peers_.at(site);
  const std::string body = frame.body.size() <= 300 ? printable(frame) : "";
  if (body.find('/') != std::string::npos && peer.window != 0) {
    if (const auto target = parse_target(body)) {
      open_relayed(site, id, *target);
    } else {
      reply("bad endpoint");
      refuse(site, "OPEN with a bad endpoint");
    }
    return;
  }
  const auto address = parse_host_port(body);
  if (peer.window == 0) {
    reply("no HELLO from " + site + " before its OPEN");
  } else if (streams_.size() >= limits_.max_streams) {
    reply("too many streams at " + site_ + " (" + std::to_string(limits_.max_streams) + ")");
    log("refused a stream from " + site + ": too many streams");
  } else if (!address) {
    reply("bad endpoint");
    refuse(site, "OPEN with a bad endpoint");
  } else {
    Stream& stream = add_stream(site, false, id, address->text());
    stream.credit_known = true;
    stream.peer_window = peer.window;
    local_.push_back(LocalAction{LocalAction::Kind::kDial, stream.handle, *address, false, {}});
    log("stream " + std::to_string(stream.handle) + " from " + site + " to " + stream.target + " opened");
  }
}

void Relay::on_stream_frame(const std::string& site, const lp::Message& frame) {
  const bool mine = (frame.flags & kOpenedByReceiver) != 0;
  const auto kind = static_cast<FrameKind>(frame.tag);
  const auto key = keys_.find(Key{site, mine, frame.source});
  if (key == keys_.end()) {
    // Frames still on their way when a stream ended are normal; data for a stream that does not
    // exist gets a reset, so that its sender stops.
    if (kind == FrameKind::kData) {
      control(site, make_frame(FrameKind::kClose, frame.source, mine ? 0 : kOpenedByReceiver, 1, "no such stream"));
    }
    return;
  }
  Stream& stream = streams_.at(key->second);
  if (kind == FrameKind::kData) {
    const std::uint64_t allowed = limits_.stream_window + stream.grants_sent - stream.received;
    if (stream.fin_received) {
      refuse(site, "data after the end of stream " + std::to_string(stream.handle));
      end_stream(stream, true, "peer " + site + " sent data after the end", true);
    } else if (frame.body.size() > allowed) {
      refuse(site, "stream " + std::to_string(stream.handle) + " beyond its window");
      end_stream(stream, true, "peer " + site + " exceeded the stream window", true);
    } else {
      stream.in.append(frame.body);
      stream.received += frame.body.size();
      dirty_.push_back(stream.handle);
      if (stream.spliced) pass_on(stream);
    }
  } else if (kind == FrameKind::kCredit) {
    if (frame.context <= 0 || stream.granted + static_cast<std::uint64_t>(frame.context) > stream.sent) {
      refuse(site, "CREDIT " + std::to_string(frame.context) + " for stream " + std::to_string(stream.handle));
      end_stream(stream, true, "peer " + site + " granted credit for bytes never sent", true);
    } else {
      stream.granted += static_cast<std::uint64_t>(frame.context);
      refresh(stream);
    }
  } else if (frame.context == 1) {
    end_stream(stream, true, "reset by " + site + ": " + printable(frame), false);
  } else if (frame.context == 0) {
    if (stream.fin_received) return;
    stream.fin_received = true;
    dirty_.push_back(stream.handle);
    maybe_finish(stream);
  } else {
    refuse(site, "CLOSE with context " + std::to_string(frame.context));
  }
}

void Relay::on_peer_failed(const std::string& endpoint, const std::string& reason, bool refused) {
  const auto known = sites_by_endpoint_.find(endpoint);
  if (known == sites_by_endpoint_.end()) {
    log("engine gave up on " + endpoint + " (no site): " + reason);
    return;
  }
  const std::string site = known->second;
  Peer& peer = peers_.at(site);
  if (peer.up || !refused) log("peer " + site + " down: " + reason);
  peer.up = false;
  reset_site(site, "gateway session to " + site + " lost: " + reason);
  if (refused) {
    peer.down_reason = reason;  // cleared by its next HELLO
    peer.blocked = true;        // no frames for it while blocked
    peer.refused = true;
    peer.control.clear();
  } else if (!peer.dial_in) {
    peer.hello_pending = true;  // a fresh session: ask who is there (a dial-in peer asks us)
  }
}

std::vector<std::pair<std::string, std::string>> Relay::refused_peers() const {
  std::vector<std::pair<std::string, std::string>> refused;
  for (const auto& [site, peer] : peers_) {
    if (peer.refused && !peer.endpoint.empty()) refused.emplace_back(site, peer.endpoint);
  }
  return refused;
}

void Relay::retry_refused(const std::string& site) {
  const auto found = peers_.find(site);
  if (found == peers_.end() || !found->second.refused) return;
  Peer& peer = found->second;
  log("peer " + site + ": trying again (down: " + peer.down_reason + ")");
  peer.refused = false;
  peer.blocked = false;
  if (!peer.dial_in) peer.hello_pending = true;
}

}  // namespace lpd
