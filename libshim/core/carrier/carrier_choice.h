// Carrier negotiation: which carrier (TCP, or datagrams with a TCP control connection) a session's
// messages travel on, agreed by both ends in the handshake. Pure.
//
// Each end states its LONGPIPE_CARRIER, whether its UDP socket is bound, and (with auto) whether
// it would rather have datagrams on this path, in one byte of its sealed IDENTIFY (authenticated:
// a changed byte fails the frame). Both ends then apply agree_carrier() to the same two offers and
// reach the same result, or the same clear error; nothing is left to silence. The acceptor's byte
// also travels in its CHALLENGE, so the dialler agrees there and its first DATA, on
// either carrier, leaves with its IDENTIFY; the acceptor's IDENTIFY must repeat it (handshake.h).
//
//   ours \ theirs   tcp          udp              auto
//   tcp             tcp          error            tcp
//   udp             error        udp*             udp*
//   auto            tcp          udp*             udp* if either end prefers it, else tcp
//
//   * needs a bound UDP socket at both ends, else an error (udp asked) or tcp (auto with auto).
//
// With auto the dialler decides (dialler_offer): it has the path cache, the acceptor usually has
// not. Not judging the path worth datagrams, it offers plain tcp, which binds the session to TCP
// (or the clear error against udp) at once, so 0.5-RTT data and spill streams go as with
// LONGPIPE_CARRIER=tcp; else it offers auto preferring datagrams (a tcp acceptor makes it tcp). It
// decides before its first dial on a path its cache knows (DialJudgement), else at CHALLENGE by
// the handshake's round trip: its IDENTIFY, which carries the offer, answers CHALLENGE.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "config.h"

namespace lp {

struct CarrierOffer {
  CarrierChoice setting = CarrierChoice::kTcp;
  bool datagrams_ready = false;    // this end's UDP socket is bound beside its TCP listener
  bool prefers_datagrams = false;  // auto: this end judged the path better served by datagrams
  bool chosen_by_auto = false;     // local only, not on the wire: tcp chosen by an auto dialler (for the error text)

  // The CHALLENGE / IDENTIFY byte: bits 0-1 the setting (0 tcp, 1 udp, 2 auto), bit 6 prefers datagrams,
  // bit 7 datagrams ready; other bits zero.
  std::uint8_t encode() const;
  // Throws MalformedFrame for a byte no LongPipe sends.
  static CarrierOffer decode(std::uint8_t byte);
};

struct CarrierAgreement {
  bool datagrams = false;
  std::optional<std::string> error;  // the ends cannot agree: why, naming the settings
};

CarrierAgreement agree_carrier(const CarrierOffer& ours, const CarrierOffer& theirs);

// The offer of a session this end dialled (or began to dial) itself. `path_worth_datagrams`: auto's
// judgement of the path from its cache (path_prefers_datagrams or path_warm_starts_datagrams, the
// entry validated by the handshake's round trip once one was measured).
CarrierOffer dialler_offer(CarrierChoice setting, bool datagrams_ready, bool path_worth_datagrams);
// Whether an offer fixes the carrier to TCP whatever the peer offers (TCP, or the clear error):
// messages, 0.5-RTT data and spill streams may then go before the ends have compared offers.
bool offer_binds_tcp(const CarrierOffer& offer);

const char* carrier_name(CarrierChoice choice);

// LONGPIPE_CARRIER=auto's judgement of a path from what the path cache remembers of it (TCP or
// datagram sessions measured it, path_estimator.h), for two reasons. The round trip alone is the
// wrong judge: on a loss-free long path a cold datagram session is no faster than tcp
// (docs/engine/datagram-carrier.md).
//
// 1. A long path that loses packets without a queue standing: TCP reads random loss as congestion.
constexpr std::chrono::milliseconds kAutoMinRtt{100};  // a 20 ms path recovers fast enough on TCP
constexpr std::int64_t kAutoMinLossPpm = 5000;         // 0.5 %: at 1 % datagrams are faster
bool path_prefers_datagrams(std::chrono::microseconds min_rtt, std::int64_t loss_ppm);

// 2. A long path known well enough to warm-start on: the validated entry's rate seeds the datagram
// pacer, and its BDP is far above a fresh TCP connection's first round trip. TCP cannot start
// above its initial window without root (PLATFORM.md): a new process pays about log2(BDP / initial
// window) round trips of slow start, where the seeded pacer starts at 0.85 x the cached rate in
// the first (docs/engine/datagram-carrier.md, "A known long path").
// Linux's initial window (RFC 6928's 10 segments) at the MSS of a 1500-byte Ethernet path.
constexpr double kTcpInitialWindowBytes = 10 * 1448.0;
// BDP of at least 32 initial windows (464 KB; 37 Mbit/s at 100 ms): slow start needs 5 round trips
// or more to fill the path, 0.5 s or more on a path of kAutoMinRtt. Below, a first batch fits the
// few round trips TCP needs anyway.
constexpr double kAutoWarmStartMinInitialWindows = 32;
bool path_warm_starts_datagrams(std::chrono::microseconds min_rtt, double rate_bytes_per_second);

// 3. A long path the peer, set to auto, judged worth datagrams in the last handshake (PathSnapshot::
// peer_verdict). A path's rate is measured by the end that sends: the receiving end's entry holds
// only its replies' rate, so when it dials (a visualisation client connecting to its simulation)
// its own entry alone would choose tcp, and the dialler decides. Heeded only by a dialler, never
// put in an acceptor's own view on the wire: else two ends could keep each other's old verdict.
bool path_peer_judged_datagrams(std::chrono::microseconds min_rtt, int peer_verdict);

// 4. A path the cache does not know (a new path, or an entry the handshake's round trip contradicts),
// judged at CHALLENGE by the handshake's round trip: datagrams from kNewPathMinRtt. On new paths
// (docs/engine/datagram-carrier.md, "A new path decided at CHALLENGE"), datagrams against tcp:
//  - win from a long path up when the transfer spans round trips, cold or warm, and more so with
//    random loss;
//  - cost nothing on a small first flight, since they are 0.5-RTT data too;
//  - lose at 100 ms and high rates, where TCP's slow start takes few round trips.
constexpr std::chrono::milliseconds kNewPathMinRtt{200};
bool new_path_worth_datagrams(std::chrono::microseconds handshake_rtt);

// auto's judgement of a path before a session's first dial, from the path cache alone.
enum class DialJudgement {
  kTcp,            // the cache knows the path and none of reasons 1-3 holds (or this end has no UDP)
  kDatagrams,      // one of reasons 1-3 holds; the handshake's round trip must still confirm the entry
  kAtHandshake,    // the cache does not know the path: reason 4 decides at CHALLENGE
};

}  // namespace lp
