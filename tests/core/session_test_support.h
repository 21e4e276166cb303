// What the session and endpoint tests share (session_test*.cpp): a fake clock's start, a key, a
// one-stream configuration, an established dialled connection, a session with its spill streams
// up, the acceptor's half of a handshake, a TCP link that moves no bytes (with or without TCP Fast
// Open), and moving bytes or datagrams from one side to the other by hand.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "session/connection.h"
#include "session/endpoint.h"
#include "session/session.h"
#include "session/stream_scheduler.h"

namespace lp::session_test {

using namespace std::chrono_literals;

using Clock = Session::Clock;
inline const Clock::time_point kStart = Clock::time_point{} + 1000s;
inline const Authenticator kKey("secret");

inline Config one_stream_config() {
  Config config;
  config.streams = 1;
  config.spill_streams = 0;  // the spill streams have tests of their own (below)
  config.connect_retry_initial = 100ms;
  config.connect_retry_max = 400ms;
  config.dead_peer_timeout = 15000ms;
  config.keepalive_interval = 2000ms;
  return config;
}

inline std::unique_ptr<Connection> dialled(std::size_t stream, Clock::time_point now) {
  auto connection = std::make_unique<Connection>(
      Handshake::dialler(kKey, "a:1", stream, std::vector<std::byte>(kNonceSize), Protection::kEncrypt,
                         std::vector<std::byte>(kIdentityTokenSize), now + 5s),
      now);
  connection->stream = stream;
  connection->state = ConnectionState::kEstablished;
  return connection;
}

// Plays the acceptor's side of the handshake up to the CHALLENGE: the dialler answers it with
// AUTH and IDENTIFY, after which the acceptor may hold the connection as established.
inline void answer_hello(Connection& dial) {
  std::vector<std::byte> hello, challenge, reply;
  dial.handshake().start(hello);
  Handshake acceptor = Handshake::acceptor(kKey, std::vector<std::byte>(kNonceSize), Protection::kEncrypt, kStart + 5s);
  FrameReader acceptor_inbox(kMaxHandshakePayload), dialler_inbox(kMaxHandshakePayload);
  std::memcpy(acceptor_inbox.write_area(hello.size()).data(), hello.data(), hello.size());
  acceptor_inbox.commit(hello.size());
  REQUIRE(acceptor.on_frame(*acceptor_inbox.next(), challenge) == HandshakeStep::kIdentified);
  std::memcpy(dialler_inbox.write_area(challenge.size()).data(), challenge.data(), challenge.size());
  dialler_inbox.commit(challenge.size());
  REQUIRE(dial.handshake().on_frame(*dialler_inbox.next(), reply) == HandshakeStep::kPending);
}



// A TCP link as the endpoint sees it with TCP Fast Open: whether HELLO leaves in the SYN, whether
// the peer's host took the SYN's data, and the kernel's smallest RTT sample. Moves no bytes.
class FastOpenLink : public CarrierLink {
 public:
  FastOpenLink(bool in_syn, bool accepted, std::uint32_t min_rtt_us)
      : in_syn_(in_syn), accepted_(accepted), min_rtt_us_(min_rtt_us) {}
  int poll_fd() const override { return -1; }
  std::string take_connect_error() override { return ""; }
  IoStatus write(std::span<const std::byte>, bool, std::size_t& written, std::string&) override {
    written = 0;
    return IoStatus::kOk;
  }
  IoStatus read(FrameReader&, std::size_t, std::size_t& bytes_read, std::string&) override {
    bytes_read = 0;
    return IoStatus::kOk;
  }
  void after_read() override {}
  void use_stream(std::size_t) override {}
  void abort_on_close() override {}
  const SocketTuning& tuning() const override { return tuning_; }
  TcpWindowInfo window_info() const override { return {}; }
  LinkPathInfo path_info() const override {
    LinkPathInfo info;
    info.valid = true;
    info.min_rtt_us = min_rtt_us_;
    return info;
  }
  bool first_write_in_syn() const override { return in_syn_; }
  FastOpenResult fast_open() const override { return {in_syn_, accepted_}; }

 private:
  bool in_syn_, accepted_;
  std::uint32_t min_rtt_us_;
  SocketTuning tuning_;
};

// Moves what `from` has written so far into `to`'s reader and lets `to`'s endpoint read it.
inline void deliver(Connection& from, Endpoint& to_endpoint, Connection& to, Clock::time_point now) {
  const auto bytes = from.unsent();
  auto area = to.reader().write_area(bytes.size());
  std::memcpy(area.data(), bytes.data(), bytes.size());
  to.reader().commit(bytes.size());
  from.consume(bytes.size());
  to_endpoint.on_read(to, IoStatus::kOk, "", now);
}

// Datagrams one session sealed, arriving at another (emptied): how many it opened.
inline std::size_t open_at(Session& to, std::deque<std::vector<std::byte>>& datagrams, Clock::time_point now) {
  std::size_t opened = 0;
  for (auto& datagram : datagrams) {
    std::string why;
    if (to.datagram()->on_datagram(to.arq(), datagram, 0, now, why) == DatagramChannel::Verdict::kAccepted) ++opened;
  }
  datagrams.clear();
  return opened;
}


// A new session with LONGPIPE_STREAMS=2 and `spill` spill streams, all up (dialled together).
struct SpillingSession {
  explicit SpillingSession(std::size_t spill) : config(make_config(spill)), session("b:1", arq_config_from(config), config, kStart) {
    session.allow_dialling();
    const Session::TimeoutActions actions = session.handle_timeout(kStart, false);
    for (std::size_t slot : actions.dial) {
      streams.push_back(dialled(slot, kStart));
      session.streams().add_attempt(slot, streams.back().get());
    }
    for (auto& stream : streams) session.attach(*stream, "a:1", kStart);
  }
  static Config make_config(std::size_t spill) {
    Config config = one_stream_config();
    config.streams = 2;
    config.spill_streams = spill;
    config.carrier = CarrierChoice::kTcp;  // an auto session's spill streams wait for the endpoint's decision
    return config;
  }
  Connection& stream(std::size_t slot) {
    for (auto& s : streams) {
      if (s->stream == slot) return *s;
    }
    FAIL("no stream " << slot);
    throw std::logic_error("unreachable");
  }
  Config config;
  Session session;
  std::vector<std::unique_ptr<Connection>> streams;
};

// TCP_INFO of a stream: `cwnd` segments of 1448 bytes, `in_flight` of them unacknowledged.
inline StreamWindow fake_window(std::size_t cwnd, std::size_t in_flight) { return StreamWindow{true, cwnd * 1448, in_flight * 1448, 0}; }

}  // namespace lp::session_test
