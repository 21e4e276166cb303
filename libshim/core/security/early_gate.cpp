#include "security/early_gate.h"

#include <algorithm>
#include <limits>

namespace lp {

EarlyGate::Verdict EarlyGate::admit(std::span<const std::byte> client_nonce, std::uint64_t timestamp, WallMs now) {
  if (client_nonce.size() != kNonceSize) return Verdict::kReplayed;  // never: HELLO's nonce is fixed-size
  if (timestamp > static_cast<std::uint64_t>(std::numeric_limits<WallMs>::max() / 2)) {
    latest_future_ = std::numeric_limits<WallMs>::max();
    return Verdict::kFromTheFuture;
  }
  const auto stamp = static_cast<WallMs>(timestamp);
  if (stamp > now + kFuture) {
    latest_future_ = std::max(latest_future_, stamp);
    return Verdict::kFromTheFuture;
  }
  if (stamp < now - kPast) return Verdict::kTooOld;
  if (stamp < started_ + kFuture) return Verdict::kBeforeStart;
  if (stamp <= latest_future_) return Verdict::kFromTheFuture;
  Nonce nonce;
  std::copy(client_nonce.begin(), client_nonce.end(), nonce.begin());
  if (strikes_.contains(nonce)) return Verdict::kReplayed;
  if (strikes_.size() >= capacity_) {
    std::erase_if(strikes_, [now](const auto& entry) { return entry.second < now; });
    if (strikes_.size() >= capacity_) return Verdict::kFull;
  }
  strikes_.emplace(nonce, stamp + kPast);
  return Verdict::kAdmitted;
}

const char* early_verdict_name(EarlyGate::Verdict verdict) {
  switch (verdict) {
    case EarlyGate::Verdict::kAdmitted: return "admitted";
    case EarlyGate::Verdict::kTooOld: return "timestamp too old";
    case EarlyGate::Verdict::kFromTheFuture: return "timestamp from the future";
    case EarlyGate::Verdict::kBeforeStart: return "timestamp before this process started";
    case EarlyGate::Verdict::kReplayed: return "nonce seen before";
    case EarlyGate::Verdict::kFull: return "strike register full";
  }
  return "?";
}

}  // namespace lp
