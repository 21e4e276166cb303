// EarlyGate: an acceptor's replay protection for 0-RTT data (handshake.h). A dialler's first flight
// carries its nonce and a timestamp of its wall clock under its proof; the gate admits the flight's
// data only if
//   - the timestamp lies within [now - kPast, now + kFuture] of this process's wall clock,
//   - it lies at least kFuture after this process started, so a flight recorded before a restart
//     (by a dialler whose clock runs up to kFuture ahead of ours) never reaches the new process,
//   - no flight timestamped later was refused as being from the future (a refused flight stays
//     refused when it is replayed once our clock has caught up with it), and
//   - the nonce is not in the strike register: the nonces of admitted flights, each kept until
//     its timestamp leaves the window (after that the window refuses it). The register holds at
//     most `capacity` nonces; when full, flights are refused rather than the register grown.
// A refused flight is not lost: the handshake falls back to the acceptor's fresh nonce and the
// dialler sends its data again (0.5-RTT data). Pure: the caller passes the wall clock in.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>

#include "wire/wire_frame.h"

namespace lp {

class EarlyGate {
 public:
  // Milliseconds since the Unix epoch.
  using WallMs = std::int64_t;
  static constexpr WallMs kPast = 10'000;   // transit of a first flight plus clock skew
  static constexpr WallMs kFuture = 500;    // how far a dialler's clock may run ahead of ours
  static constexpr std::size_t kCapacity = 4096;  // 32-byte nonces: about 200 KiB at most

  enum class Verdict { kAdmitted, kTooOld, kFromTheFuture, kBeforeStart, kReplayed, kFull };

  explicit EarlyGate(WallMs started, std::size_t capacity = kCapacity) : started_(started), capacity_(capacity) {}

  Verdict admit(std::span<const std::byte> client_nonce, std::uint64_t timestamp, WallMs now);
  std::size_t remembered() const { return strikes_.size(); }

 private:
  using Nonce = std::array<std::byte, kNonceSize>;
  WallMs started_;
  std::size_t capacity_;
  WallMs latest_future_ = INT64_MIN;   // the latest timestamp refused as from the future
  std::map<Nonce, WallMs> strikes_;   // admitted nonce -> when it leaves the window
};

const char* early_verdict_name(EarlyGate::Verdict verdict);

}  // namespace lp
