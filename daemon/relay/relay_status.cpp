// Relay: its state as one JSON object (the STATUS request, `./longpipe status`).
#include <cstdio>

#include "json_text.h"
#include "relay/relay.h"

namespace lpd {
namespace {

using lp::json_string;

std::string hex(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

std::string Relay::status_json() const {
  std::string out = "{\"site\":" + json_string(site_) + ",\"instance\":\"" + hex(instance_) + "\"";
  out += ",\"streams\":" + std::to_string(streams_.size());
  out += ",\"streams_opened\":" + std::to_string(streams_opened_);
  out += ",\"max_streams\":" + std::to_string(limits_.max_streams);
  out += ",\"stream_window\":" + std::to_string(limits_.stream_window);
  out += ",\"refused_frames\":" + std::to_string(refused_frames_);
  out += ",\"routes\":{";
  for (auto route = routes_.begin(); route != routes_.end(); ++route) {
    out += (route == routes_.begin() ? "" : ",") + json_string(route->first) + ":" + json_string(route->second);
  }
  out += "},\"relays\":[";
  for (std::size_t i = 0; i < relays_.size(); ++i) {
    out += (i ? ",[" : "[") + json_string(relays_[i].first) + "," + json_string(relays_[i].second) + "]";
  }
  // Each stream relayed here: from the origin's site to the final one, and the bytes passed on.
  out += "],\"relayed_streams\":[";
  bool first_relayed = true;
  for (const auto& [handle, stream] : streams_) {
    if (!stream.spliced || stream.mine) continue;
    const auto partner = streams_.find(stream.partner);
    out += first_relayed ? "{" : ",{";
    first_relayed = false;
    out += "\"from\":" + json_string(stream.site) + ",\"target\":" + json_string(stream.target);
    out += ",\"to\":" + (partner != streams_.end() ? json_string(partner->second.site) : std::string("null"));
    out += ",\"bytes_forward\":" + std::to_string(stream.written);
    out += ",\"bytes_back\":" + std::to_string(partner != streams_.end() ? partner->second.written : 0) + "}";
  }
  out += "]";
  out += ",\"peers\":[";
  bool first = true;
  for (const auto& [name, peer] : peers_) {
    if (name == site_) continue;
    std::size_t streams = 0, queued_out = 0, queued_in = 0;
    for (const auto& [handle, stream] : streams_) {
      if (stream.site != name) continue;
      ++streams;
      queued_out += stream.out.size();
      queued_in += stream.in.size();
    }
    out += first ? "" : ",";
    first = false;
    out += "{\"site\":" + json_string(name) + ",\"endpoint\":" + json_string(peer.endpoint);
    out += ",\"mode\":" + std::string(peer.dial_in ? "\"dial-in\"" : "\"dial\"");
    out += ",\"up\":" + std::string(peer.up ? "true" : "false");
    out += ",\"instance\":" + (peer.instance ? "\"" + hex(*peer.instance) + "\"" : std::string("null"));
    out += ",\"streams\":" + std::to_string(streams);
    out += ",\"queued_to_peer_bytes\":" + std::to_string(queued_out);
    out += ",\"queued_to_local_bytes\":" + std::to_string(queued_in);
    out += ",\"frames_sent\":" + std::to_string(peer.frames_sent);
    out += ",\"frames_received\":" + std::to_string(peer.frames_received);
    out += ",\"bytes_sent\":" + std::to_string(peer.bytes_sent);
    out += ",\"bytes_received\":" + std::to_string(peer.bytes_received);
    out += ",\"blocked\":" + std::string(peer.blocked ? "true" : "false");
    if (!peer.down_reason.empty()) out += ",\"down_reason\":" + json_string(peer.down_reason);
    out += "}";
  }
  return out + "]}";
}

}  // namespace lpd
