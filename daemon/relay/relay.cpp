// Relay: the local side, the streams' life and the outputs. Frames from peers: relay_inbound.cpp;
// the status: relay_status.cpp.
#include "relay/relay.h"

#include <algorithm>
#include <utility>

#include "relay/frame.h"

namespace lpd {

Relay::Relay(std::string site, std::uint64_t instance, RelayLimits limits)
    : site_(std::move(site)), instance_(instance), limits_(limits) {
  // Stream ids start at a point of the instance id: a restarted gateway's new streams are unlikely
  // to meet frames its peers still send for its old ones.
  next_id_ = static_cast<std::uint32_t>(instance_ & 0x7fffffffu) | 1u;
  Peer& self = peers_[site_];
  self.hello_pending = false;
  self.up = true;
  self.instance = instance_;
  self.window = limits_.stream_window;
}

void Relay::set_peers(const std::map<std::string, std::string>& peers) {
  for (auto it = peers_.begin(); it != peers_.end();) {
    const std::string name = it->first;
    if (name == site_) {
      ++it;
      continue;
    }
    const auto wanted = peers.find(name);
    const bool same = wanted != peers.end() && (wanted->second.empty() ? it->second.dial_in
                                                                         : !it->second.dial_in && wanted->second == it->second.endpoint);
    if (same) {
      ++it;
      continue;
    }
    reset_site(name, wanted == peers.end() ? "site removed from the config" : "site's gateway address changed");
    std::erase_if(sites_by_endpoint_, [&](const auto& entry) { return entry.second == name; });
    log("peer " + name + " removed");
    it = peers_.erase(it);
  }
  for (const auto& [name, endpoint] : peers) {
    if (name == site_ || peers_.contains(name)) continue;
    Peer& peer = peers_[name];
    if (endpoint.empty()) {
      // Dial-in: nothing goes to it before its HELLO says where it is.
      peer.dial_in = true;
      peer.hello_pending = false;
      log("peer " + name + " dials in");
      continue;
    }
    peer.endpoint = endpoint;
    sites_by_endpoint_[endpoint] = name;
    log("peer " + name + " at " + endpoint);
  }
}

Relay::Connected Relay::connect(std::string_view text) {
  const auto target = parse_target(text);
  if (!target) return {0, "bad endpoint (want <site>/<host>:<port>)"};
  // A routed site: the stream goes to the relaying peer, its OPEN names the final site.
  const auto route = routes_.find(target->site);
  const std::string hop = route == routes_.end() ? target->site : route->second;
  const auto peer = peers_.find(hop);
  if (peer == peers_.end()) return {0, "unknown site " + target->site};
  if (std::string why = usable(hop); !why.empty()) {
    return {0, route == routes_.end() ? why : why + ", through which site " + target->site + " is routed"};
  }
  if (streams_.size() >= limits_.max_streams) {
    return {0, "too many streams (" + std::to_string(limits_.max_streams) + ")"};
  }
  Stream& stream = add_stream(hop, true, new_id(hop), route == routes_.end() ? target->address.text() : std::string(text));
  stream.connected = true;
  stream.open_pending = true;
  if (peer->second.window > 0) {
    stream.credit_known = true;
    stream.peer_window = peer->second.window;
  }
  log("stream " + std::to_string(stream.handle) + " to " + std::string(text) + " opened");
  refresh(stream);
  return {stream.handle, ""};
}

Relay::Stream& Relay::add_stream(const std::string& site, bool mine, std::uint32_t id, std::string target) {
  const Handle handle = next_handle_++;
  Stream& stream = streams_[handle];
  stream.handle = handle;
  stream.site = site;
  stream.mine = mine;
  stream.id = id;
  stream.target = std::move(target);
  keys_[Key{site, mine, id}] = handle;
  ++streams_opened_;
  return stream;
}

Relay::Stream* Relay::find(Handle handle) {
  const auto it = streams_.find(handle);
  return it == streams_.end() ? nullptr : &it->second;
}

const Relay::Stream* Relay::find(Handle handle) const {
  const auto it = streams_.find(handle);
  return it == streams_.end() ? nullptr : &it->second;
}

std::size_t Relay::read_budget(Handle handle) const {
  const Stream* stream = find(handle);
  if (!stream || !stream->connected || stream->local_eof || stream->spliced) return 0;
  return limits_.outbound_buffer - std::min(limits_.outbound_buffer, stream->out.size());
}

void Relay::on_local_data(Handle handle, std::span<const std::byte> bytes) {
  Stream* stream = find(handle);
  if (!stream || stream->local_eof) return;
  stream->out.append(bytes);
  refresh(*stream);
  dirty_.push_back(handle);
}

void Relay::on_local_eof(Handle handle) {
  Stream* stream = find(handle);
  if (!stream || stream->local_eof) return;
  stream->local_eof = true;
  refresh(*stream);
  dirty_.push_back(handle);
}

void Relay::on_local_reset(Handle handle, const std::string& reason) {
  if (Stream* stream = find(handle)) end_stream(*stream, true, reason, true);
}

void Relay::on_dialled(Handle handle) {
  Stream* stream = find(handle);
  if (!stream || stream->connected) return;
  stream->connected = true;
  dirty_.push_back(handle);
  refresh(*stream);
  maybe_finish(*stream);
}

std::span<const std::byte> Relay::pending_output(Handle handle) const {
  const Stream* stream = find(handle);
  if (!stream || !stream->connected || stream->spliced) return {};  // a spliced one has no socket
  return stream->in.front();
}

void Relay::on_written(Handle handle, std::size_t bytes) {
  Stream* stream = find(handle);
  if (!stream || stream->spliced) return;
  bytes = std::min(bytes, stream->in.size());
  stream->in.consume(bytes);
  stream->written += bytes;
  dirty_.push_back(handle);
  refresh(*stream);
  maybe_finish(*stream);
}

void Relay::end_stream(Stream& stream, bool reset, const std::string& reason, bool tell_peer) {
  if (reset && tell_peer) {
    control(stream.site, make_frame(FrameKind::kClose, stream.id, stream.mine ? 0 : kOpenedByReceiver, 1, reason));
  }
  if (!stream.spliced) {
    LocalAction close{LocalAction::Kind::kClose, stream.handle, {}, reset, {}};
    if (reset && stream.connected) stream.in.take(stream.in.size(), close.last_bytes);
    local_.push_back(std::move(close));
  }
  log("stream " + std::to_string(stream.handle) + (stream.mine ? " to " : " from ") + stream.site +
      (stream.mine ? "/" : " to ") + stream.target + (stream.spliced ? " (relayed)" : "") + " closed: " + reason +
      " (" + std::to_string(stream.sent) + " bytes sent, " + std::to_string(stream.received) + " received)");
  keys_.erase(Key{stream.site, stream.mine, stream.id});
  const Handle handle = stream.handle, partner = stream.partner;
  streams_.erase(handle);  // `stream` is gone
  if (Stream* other = partner != 0 ? find(partner) : nullptr) {
    other->partner = 0;
    // A reset of either half resets both; a half that ended whole leaves the other to finish.
    if (reset) end_stream(*other, true, reason, true);
  }
}

void Relay::reset_site(const std::string& site, const std::string& reason) {
  const auto peer = peers_.find(site);
  if (peer == peers_.end()) return;
  // After a restart the peer's new instance knows none of these streams: telling it would only
  // risk naming one of its new streams by an old id. After a failure the peer may still hold them.
  const bool tell_peer = reason.find("restarted") == std::string::npos;
  if (!tell_peer) peer->second.control.clear();
  std::vector<Handle> gone;
  for (const auto& [handle, stream] : streams_) {
    if (stream.site == site) gone.push_back(handle);
  }
  for (Handle handle : gone) {
    if (Stream* stream = find(handle)) end_stream(*stream, true, reason, tell_peer);  // a partner may be gone
  }
  peer->second.ready.clear();
}

void Relay::control(const std::string& site, lp::Message frame) {
  const auto peer = peers_.find(site);
  if (peer == peers_.end() || peer->second.control.size() >= RelayLimits::kMaxControlQueue) return;
  peer->second.control.push_back(std::move(frame));
}

bool Relay::wants_transmit(const Stream& stream) const {
  if (stream.open_pending) return true;
  if (stream.written - stream.grants_sent >= std::max<std::size_t>(1, limits_.stream_window / 4)) return true;
  if (stream.credit_known && !stream.out.empty() && stream.send_credit() > 0) return true;
  return stream.local_eof && stream.out.empty() && !stream.fin_sent;
}

void Relay::refresh(Stream& stream) {
  if (stream.queued || !wants_transmit(stream)) return;
  const auto peer = peers_.find(stream.site);
  if (peer == peers_.end()) return;
  peer->second.ready.push_back(stream.handle);
  stream.queued = true;
}

std::optional<lp::Message> Relay::stream_frame(Stream& stream) {
  const std::uint32_t flags = stream.mine ? 0 : kOpenedByReceiver;
  if (stream.open_pending) {
    stream.open_pending = false;
    return make_frame(FrameKind::kOpen, stream.id, flags, 0, stream.target);
  }
  const std::uint64_t grant = stream.written - stream.grants_sent;
  if (grant >= std::max<std::size_t>(1, limits_.stream_window / 4)) {
    stream.grants_sent = stream.written;
    return make_frame(FrameKind::kCredit, stream.id, flags, static_cast<std::int32_t>(grant), "");
  }
  const std::size_t n = std::min({stream.out.size(), stream.send_credit(), limits_.max_data_frame});
  if (stream.credit_known && n > 0) {
    lp::Message frame = make_frame(FrameKind::kData, stream.id, flags, 0, "");
    frame.body.reserve(n + lp::kMessageTrailerSize);
    stream.out.take(n, frame.body);
    stream.sent += n;
    dirty_.push_back(stream.handle);
    if (Stream* partner = stream.spliced && stream.partner != 0 ? find(stream.partner) : nullptr) pass_on(*partner);
    return frame;
  }
  if (stream.local_eof && stream.out.empty() && !stream.fin_sent) {
    stream.fin_sent = true;
    return make_frame(FrameKind::kClose, stream.id, flags, 0, "end");
  }
  return std::nullopt;
}

std::optional<lp::Message> Relay::next_frame(const std::string& site, Peer& peer) {
  if ((peer.hello_pending || peer.hello_answer_pending) && site != site_) {
    const bool answer = !peer.hello_pending;
    peer.hello_pending = peer.hello_answer_pending = false;
    return hello_frame(answer);
  }
  if (!peer.control.empty()) {
    lp::Message frame = std::move(peer.control.front());
    peer.control.pop_front();
    return frame;
  }
  while (!peer.ready.empty()) {
    const Handle handle = peer.ready.front();
    peer.ready.pop_front();
    Stream* stream = find(handle);
    if (!stream) continue;
    stream->queued = false;
    auto frame = stream_frame(*stream);
    if (!frame) continue;
    refresh(*stream);  // to the back of the line if it has more
    maybe_finish(*stream);
    return frame;
  }
  return std::nullopt;
}

void Relay::maybe_finish(Stream& stream) {
  if (stream.fin_received && stream.in.empty() && stream.connected && !stream.shutdown_done) {
    stream.shutdown_done = true;
    if (!stream.spliced) {
      local_.push_back(LocalAction{LocalAction::Kind::kShutdownWrite, stream.handle, {}, false, {}});
    } else if (Stream* partner = stream.partner != 0 ? find(stream.partner) : nullptr) {
      partner->local_eof = true;  // the FIN goes on after the last byte
      refresh(*partner);
    }
  }
  if (stream.fin_sent && stream.shutdown_done) end_stream(stream, false, "ended", false);
}

std::optional<Transmit> Relay::poll_transmit() {
  for (;;) {
    bool produced = false;
    // One frame per site in turn, starting after the site served last.
    auto start = peers_.upper_bound(cursor_);
    for (std::size_t i = 0; i < peers_.size(); ++i, ++start) {
      if (start == peers_.end()) start = peers_.begin();
      const std::string site = start->first;
      Peer& peer = start->second;
      if (peer.blocked || (site != site_ && peer.endpoint.empty())) continue;  // a dial-in peer not heard yet
      auto frame = next_frame(site, peer);
      if (!frame) continue;
      cursor_ = site;
      ++peer.frames_sent;
      if (static_cast<FrameKind>(frame->tag) == FrameKind::kData) peer.bytes_sent += frame->body.size();
      if (site != site_) return Transmit{site, peer.endpoint, std::move(*frame)};
      deliver(site_, *frame);  // our own site: the frame's receiver is this relay
      produced = true;
      break;
    }
    if (!produced) return std::nullopt;
  }
}

void Relay::set_blocked(const std::string& site, bool blocked) {
  const auto peer = peers_.find(site);
  if (peer != peers_.end()) peer->second.blocked = blocked;
}

std::optional<LocalAction> Relay::poll_local() {
  if (local_.empty()) return std::nullopt;
  LocalAction action = std::move(local_.front());
  local_.pop_front();
  return action;
}

std::vector<Handle> Relay::take_dirty() {
  std::vector<Handle> dirty = std::exchange(dirty_, {});
  std::sort(dirty.begin(), dirty.end());
  dirty.erase(std::unique(dirty.begin(), dirty.end()), dirty.end());
  return dirty;
}

std::vector<std::string> Relay::take_log() { return std::exchange(log_, {}); }

}  // namespace lpd
