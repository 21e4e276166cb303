// DatagramPort: the driver's side of the datagram carrier (LONGPIPE_CARRIER=udp). I/O: it owns the
// engine's UDP socket (udp_carrier.h), maps source addresses to sessions, hands each datagram to
// its session's DatagramChannel and sends what the channels sealed. Called by the progress thread
// only (progress_loop.cpp).
//
// Demultiplexing: a peer's datagrams come from its endpoint's port (its UDP socket is bound beside
// its TCP listener) at the address its connections come from, so a datagram's session is the one
// whose sealing connection's peer address (Session::datagram_keys_connection) is the source.
// A datagram from an unknown address, or one that does not open under that session's keys, is
// dropped and counted: anybody can send a datagram, so none closes anything. But one from the
// address of a connection still in its handshake may be a dialler's first DATA, read before its
// IDENTIFY: it waits in a small pen (datagram_pen.h) until that session has its keys (release_held).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <vector>

#include "config.h"
#include "carrier/datagram/datagram_pen.h"
#include "message.h"
#include "carrier/datagram/udp_carrier.h"

namespace lp {

class Endpoint;
class Session;

class DatagramPort {
 public:
  using Clock = std::chrono::steady_clock;
  // Datagrams read per readable event before the other sources get a turn.
  static constexpr std::size_t kReadBudget = 1024;

  // Binds beside the TCP listener's `port`. Throws SystemError.
  DatagramPort(const Config& config, std::uint16_t port);

  int fd() const { return carrier_.fd(); }
  const SocketTuning& tuning() const { return carrier_.tuning(); }

  // Reads what arrived and hands it to the sessions; whole messages go to `received`. Reads the
  // clock per datagram (a turn that moves thousands of them is long: ACKs read at its end would
  // give RTT samples shorter than the path).
  void on_readable(Endpoint& endpoint, std::vector<Message>& received);
  // Sends every session's sealed datagrams. False: the socket is full (wait for writability).
  bool flush(Endpoint& endpoint);

  // Hands the datagrams held in the pen to sessions that have their keys now (a handshake's
  // IDENTIFY was accepted since), in arrival order; whole messages go to `received`. Drops what
  // waited too long. Called each turn after the connections were read.
  void release_held(Endpoint& endpoint, std::vector<Message>& received);

  std::uint64_t unknown_source() const { return unknown_source_; }
  const DatagramPen::Counters& pen_counters() const { return pen_.counters(); }

 private:
  struct Peer {
    DatagramAddress address;
    std::uint64_t epoch = 0;
  };
  // Learns each session's peer address (again after each seal_with), forgets sessions that are gone.
  void refresh(Endpoint& endpoint);
  void deliver(Session& session, std::span<std::byte> bytes, std::int64_t arrival_ns, Clock::time_point now,
               Endpoint& endpoint);
  // The datagram addresses of accepted connections in their handshake (HELLO read): whose sessions
  // may install keys within a round trip.
  std::vector<DatagramAddress> handshaking_addresses(const Endpoint& endpoint) const;

  UdpCarrier carrier_;
  std::map<Session*, Peer> peers_;
  std::map<DatagramAddress, Session*> by_address_;
  std::uint64_t unknown_source_ = 0;
  DatagramPen pen_;
};

}  // namespace lp
