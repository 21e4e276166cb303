// Relay: routes through a third site and the reverse mode's checks. A stream relayed here is a
// pair of spliced streams (one from the origin's gateway, one of our own to the final site's),
// without a local socket: bytes pass from one's receive queue to the other's send queue as far as
// that queue has room, so each half's credit holds the other's peer back (relay.h).
#include <algorithm>

#include "relay/frame.h"
#include "relay/relay.h"

namespace lpd {

void Relay::set_relays(const std::vector<std::pair<std::string, std::string>>& pairs) { relays_ = pairs; }

std::size_t Relay::relayed_count() const {
  return static_cast<std::size_t>(
      std::count_if(streams_.begin(), streams_.end(), [](const auto& entry) { return entry.second.spliced && !entry.second.mine; }));
}

std::uint32_t Relay::new_id(const std::string& site) {
  while (keys_.contains(Key{site, true, next_id_}) || next_id_ == 0) ++next_id_;
  return next_id_++;
}

std::string Relay::usable(const std::string& site) const {
  const auto peer = peers_.find(site);
  if (peer == peers_.end()) return "unknown site " + site;
  if (!peer->second.down_reason.empty()) {
    return "site " + site + "'s gateway is unreachable (" + peer->second.down_reason + ")";
  }
  if (peer->second.dial_in && (!peer->second.up || peer->second.endpoint.empty())) {
    return "site " + site + "'s gateway dials in and is not connected (no HELLO from it)";
  }
  return "";
}

void Relay::open_relayed(const std::string& from, std::uint32_t id, const Target& target) {
  const std::string& to = target.site;
  std::string why;
  const bool allowed = std::any_of(relays_.begin(), relays_.end(), [&](const auto& pair) {
    return (pair.first == from && pair.second == to) || (pair.first == to && pair.second == from);
  });
  if (to == from) {
    why = "a relaying loop: site " + to + " is the stream's own origin";
  } else if (to == site_) {
    why = "site " + to + " is the relaying gateway itself";
  } else if (!allowed) {
    why = "site " + site_ + " does not relay between " + from + " and " + to + " (no 'relay " + from + " " + to + "' line)";
  } else if (!peers_.contains(to)) {
    why = "site " + to + " is not a direct peer of " + site_ + " (a stream crosses one relay at most)";
  } else if (!usable(to).empty()) {
    why = usable(to);
  } else if (streams_.size() + 2 > limits_.max_streams) {
    why = "too many streams at " + site_ + " (" + std::to_string(limits_.max_streams) + ")";
  }
  if (!why.empty()) {
    control(from, make_frame(FrameKind::kClose, id, kOpenedByReceiver, 1, "relay refused: " + why));
    log("refused to relay a stream from " + from + " to " + to + "/" + target.address.text() + ": " + why);
    return;
  }
  Stream& in = add_stream(from, false, id, to + "/" + target.address.text());
  in.credit_known = true;
  in.peer_window = peers_.at(from).window;
  in.connected = true;
  in.spliced = true;
  const Handle in_handle = in.handle;
  Stream& out = add_stream(to, true, new_id(to), target.address.text());
  out.connected = true;
  out.open_pending = true;
  out.spliced = true;
  out.partner = in_handle;
  if (const std::size_t window = peers_.at(to).window; window > 0) {
    out.credit_known = true;
    out.peer_window = window;
  }
  find(in_handle)->partner = out.handle;
  log("stream " + std::to_string(in_handle) + " from " + from + " relayed to " + to + "/" + target.address.text() +
      " as stream " + std::to_string(out.handle));
  refresh(out);
}

void Relay::pass_on(Stream& from) {
  Stream* to = from.partner != 0 ? find(from.partner) : nullptr;
  if (to != nullptr && !to->local_eof) {
    const std::size_t room = limits_.outbound_buffer - std::min(limits_.outbound_buffer, to->out.size());
    const std::size_t n = std::min(room, from.in.size());
    if (n > 0) {
      std::vector<std::byte> bytes;
      from.in.take(n, bytes);
      to->out.append(bytes);
      from.written += n;  // as if written to a socket: CREDIT goes back to the sender
      refresh(*to);
      refresh(from);
    }
  }
  maybe_finish(from);  // may end `from`
}

}  // namespace lpd
