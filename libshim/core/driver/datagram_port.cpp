#include "driver/datagram_port.h"

#include <algorithm>
#include <optional>

#include "session/connection.h"
#include "carrier/datagram/datagram_channel.h"
#include "session/endpoint.h"
#include "wire/host_port.h"
#include "session/session.h"

namespace lp {

DatagramPort::DatagramPort(const Config& config, std::uint16_t port) : carrier_(config, port) {}

void DatagramPort::refresh(Endpoint& endpoint) {
  std::map<Session*, Peer> current;
  for (const auto& [name, owned] : endpoint.sessions()) {
    Session& session = *owned;
    DatagramChannel* channel = session.datagram();
    if (channel == nullptr || !channel->keyed() || session.failed()) continue;
    auto known = peers_.find(&session);
    if (known != peers_.end() && known->second.epoch == channel->key_epoch()) {
      current.emplace(&session, known->second);
      continue;
    }
    // New keys: a new sealing connection, whose peer address may differ (a reconnect from
    // another interface). Without one, the address known before stays.
    const Connection* control = session.datagram_keys_connection();
    Peer peer;
    if (control != nullptr && control->link &&
        peer_datagram_address(control->link->poll_fd(), parse_host_port(session.peer(), true).port, peer.address)) {
      peer.epoch = channel->key_epoch();
      current.emplace(&session, peer);
    } else if (known != peers_.end()) {
      current.emplace(&session, known->second);
    }
  }
  peers_ = std::move(current);
  by_address_.clear();
  for (const auto& [session, peer] : peers_) by_address_[peer.address] = session;
}

void DatagramPort::deliver(Session& session, std::span<std::byte> bytes, std::int64_t arrival_ns,
                           Clock::time_point now, Endpoint& endpoint) {
  std::string why;
  switch (session.datagram()->on_datagram(session.arq(), bytes, arrival_ns, now, why)) {
    case DatagramChannel::Verdict::kAccepted:
      session.heard_from_peer(now);  // authentic: the path and the peer are alive
      return;
    case DatagramChannel::Verdict::kMalformed:
      endpoint.note_datagram_refused(session, true);
      return;
    case DatagramChannel::Verdict::kUnauthentic:
      endpoint.note_datagram_refused(session, false);
      return;
    case DatagramChannel::Verdict::kReplayed:
      return;  // a duplicate the network made (or a replay): the ARQ would drop it too
  }
}

std::vector<DatagramAddress> DatagramPort::handshaking_addresses(const Endpoint& endpoint) const {
  std::vector<DatagramAddress> addresses;
  for (const auto& [raw, connection] : endpoint.connections()) {
    if (connection->outgoing() || connection->state != ConnectionState::kHandshaking || !connection->link ||
        connection->peer_endpoint.empty()) {
      continue;
    }
    DatagramAddress address;
    if (peer_datagram_address(connection->link->poll_fd(), parse_host_port(connection->peer_endpoint, true).port,
                              address)) {
      addresses.push_back(address);
    }
  }
  return addresses;
}

void DatagramPort::on_readable(Endpoint& endpoint, std::vector<Message>& received) {
  refresh(endpoint);  // sessions may have gone since the last turn
  std::vector<Session*> touched;
  std::optional<std::vector<DatagramAddress>> handshaking;  // looked up once, if needed
  carrier_.receive(
      [&](const DatagramAddress& from, std::span<std::byte> bytes, std::int64_t arrival_ns) {
        auto it = by_address_.find(from);
        if (it == by_address_.end() || it->second->failed()) {
          if (!handshaking) handshaking = handshaking_addresses(endpoint);
          if (std::find(handshaking->begin(), handshaking->end(), from) != handshaking->end() &&
              pen_.hold(from, bytes, arrival_ns, Clock::now())) {
            return;  // released to its session once its IDENTIFY is accepted
          }
          ++unknown_source_;
          endpoint.note_datagram_refused_unknown();
          return;
        }
        // The time each datagram is handled, not the turn's: a turn that moves thousands of
        // datagrams lasts long enough to shorten the RTT samples of ACKs read at its end.
        deliver(*it->second, bytes, arrival_ns, Clock::now(), endpoint);
        if (touched.empty() || touched.back() != it->second) touched.push_back(it->second);
      },
      kReadBudget);
  for (Session* session : touched) session->take_received(received);
}

void DatagramPort::release_held(Endpoint& endpoint, std::vector<Message>& received) {
  if (pen_.empty()) return;
  const Clock::time_point now = Clock::now();
  pen_.expire(now);
  refresh(endpoint);  // a session keyed since the datagrams arrived
  for (const auto& [session, peer] : peers_) {
    std::vector<DatagramPen::Released> held = pen_.release(peer.address, now);
    for (DatagramPen::Released& datagram : held) deliver(*session, datagram.bytes, datagram.arrival_ns, now, endpoint);
    if (!held.empty()) session->take_received(received);
    if (pen_.empty()) break;
  }
}

bool DatagramPort::flush(Endpoint& endpoint) {
  refresh(endpoint);
  for (auto& [session, peer] : peers_) {
    auto& queue = session->datagram()->outgoing();
    if (!queue.empty() && !carrier_.send(peer.address, queue)) return false;
  }
  return true;
}

}  // namespace lp
