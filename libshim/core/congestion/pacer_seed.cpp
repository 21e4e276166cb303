// A seed's judgement: the span of busy ACKs, and the verdict on what the path delivered in it.
#include "congestion/pacer_seed.h"

#include <algorithm>

#include "congestion/pacer_tuning.h"

namespace lp {

using namespace pacer_tuning;
using std::chrono::duration_cast;

const char* pacer_seed_name(PacerSeed::State seed) {
  static constexpr const char* kNames[] = {"none", "seeded", "confirmed", "rejected"};
  return kNames[static_cast<std::size_t>(seed)];
}

bool PacerSeed::worth_taking(double rate, ArqDuration min_rtt) {
  // A seed below what a cold start-up sends in its first round trip would only slow it down.
  return min_rtt > ArqDuration::zero() && kWarmStartShare * rate * seconds_of(min_rtt) >= kInitialWindowBytes;
}

PacerSeed::Verdict PacerSeed::verdict(const Evidence& e) {
  const double rate = e.span > ArqDuration::zero() ? e.delivered / seconds_of(e.span) : 0;
  // Heavy loss: the seed overfills the bottleneck's queue; the ACKs came at the bottleneck's rate.
  const double total = e.lost + e.delivered;
  if (total >= kSeedEvidenceDatagrams * kDatagramBytes && e.lost > kHeavyLossFraction * total) {
    return {State::kRejected, std::min(rate, e.seed_rate)};
  }
  if (e.span < e.round_trip) return {State::kSeeded, rate};
  if (rate >= kSeedConfirmShare * e.seed_rate) return {State::kConfirmed, rate};
  // An application that sent less than the seed says nothing of the path: the next busy round
  // trip is judged (kNone).
  return {e.application_limited ? State::kNone : State::kRejected, rate};
}

void PacerSeed::start(double rate, std::uint64_t from_send_index) {
  state_ = State::kSeeded;
  rate_ = rate;
  from_send_index_ = from_send_index;
}

void PacerSeed::on_acked(ArqTime now, std::uint64_t send_index, bool application_limited,
                         std::uint64_t delivered_before, std::uint64_t lost) {
  if (state_ != State::kSeeded || judged_from_ || application_limited || send_index < from_send_index_) return;
  judged_from_ = now;
  delivered_from_ = delivered_before;
  lost_from_ = lost;
  application_limited_ = false;
}

std::optional<PacerSeed::Verdict> PacerSeed::judge(ArqTime now, std::uint64_t delivered, std::uint64_t lost,
                                                   ArqDuration round_trip) {
  if (state_ != State::kSeeded || !judged_from_) return std::nullopt;
  const Verdict v = verdict({static_cast<double>(delivered - delivered_from_), static_cast<double>(lost - lost_from_),
                             duration_cast<ArqDuration>(now - *judged_from_), round_trip, rate_, application_limited_});
  if (v.state == State::kNone) judged_from_.reset();
  if (v.state != State::kConfirmed && v.state != State::kRejected) return std::nullopt;
  state_ = v.state;
  return v;
}

}  // namespace lp
