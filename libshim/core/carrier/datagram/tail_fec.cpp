#include "carrier/datagram/tail_fec.h"

#include <algorithm>
#include <cmath>

#include "carrier/datagram/erasure_code.h"

namespace lp {
namespace {

// A symbol: the unit's length (u16, big-endian), the unit, zeros up to `size`.
void put_symbol(std::vector<std::byte>& out, const ArqPayload& unit, std::size_t size) {
  out.assign(size, std::byte{0});
  out[0] = std::byte(unit.size() >> 8);
  out[1] = std::byte(unit.size() & 0xff);
  std::copy(unit.begin(), unit.end(), out.begin() + 2);
}

}  // namespace

std::size_t TailFecSender::repairs_for(std::size_t units, double loss, double failure) {
  if (loss <= 0 || units == 0 || units >= ErasureCode::kMaxSymbols - 1) return 0;
  loss = std::min(loss, 0.5);
  const std::size_t most = ErasureCode::kMaxSymbols - 1 - units;
  for (std::size_t repairs = 1; repairs < most; ++repairs) {
    // P(at most `repairs` of n symbols lost), n = units + repairs: the binomial's terms, in turn.
    const std::size_t n = units + repairs;
    double term = std::pow(1 - loss, static_cast<double>(n)), decodes = term;
    for (std::size_t i = 0; i < repairs; ++i) {
      term *= static_cast<double>(n - i) / static_cast<double>(i + 1) * loss / (1 - loss);
      decodes += term;
    }
    if (1 - decodes <= failure) return repairs;
  }
  return most;
}

double TailFecSender::loss_estimate(std::int64_t pacer_loss_ppm, const ArqStats& stats, std::int64_t known_loss_ppm) {
  // What the path towards us lost, once enough came: the repairs' success hides the path's loss
  // from the evidence below (the peer acknowledges a unit its repairs recovered with the units
  // around it, no hole shown).
  const double received = static_cast<double>(stats.messages_received);
  const double towards_us = received >= kMinReceivedEvidence ? static_cast<double>(stats.messages_skipped) / received : 0;
  if (pacer_loss_ppm >= 0) return std::max(towards_us, static_cast<double>(pacer_loss_ppm) / 1e6);
  const double known = static_cast<double>(known_loss_ppm) / 1e6;
  const bool higher = known > kPriorLoss;
  const double prior = higher ? known : kPriorLoss;
  const double weight = higher ? kKnownPriorTransmissions : kPriorTransmissions;
  // Evidence is what ACKs have told: units acknowledged and transmissions seen missing. Units still
  // in flight say nothing yet; counted as loss-free, a new session's first tail (100 units, no ACK
  // back) was sized for a third of the prior.
  const double missing = static_cast<double>(stats.messages_seen_missing);
  const double told = static_cast<double>(stats.messages_acked) + missing;
  return std::max(towards_us, (missing + prior * weight) / (told + weight));
}

std::vector<RepairSymbol> TailFecSender::protect_tail(const Arq& arq, ArqTime now, ArqDuration min_rtt, double loss) {
  const std::uint64_t end = arq.transmitted_end();
  if (end <= protected_end_) return {};
  const auto span = std::chrono::duration_cast<ArqTime::duration>(min_rtt * kTailRoundTrips);
  const std::uint64_t floor = std::max(protected_end_, arq.acknowledged_below());
  std::uint64_t first = end;
  ArqTime sent{};
  while (first > floor && end - first < kMaxTailUnits) {
    const ArqPayload* copy = arq.held_copy(first - 1, sent);
    if (copy == nullptr || now - sent > span) break;
    --first;
  }
  protected_end_ = end;
  std::vector<RepairSymbol> out;
  if (first == end || loss <= 0) return out;
  const std::size_t count = end - first;
  const std::size_t blocks = (count + kMaxBlockUnits - 1) / kMaxBlockUnits;
  std::vector<std::vector<std::byte>> padded;
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::uint64_t begin = first + count * b / blocks, stop = first + count * (b + 1) / blocks;
    const std::size_t units = stop - begin;
    const double share = std::min(1.0, static_cast<double>(count) / kFullShareUnits);
    const std::size_t repairs = repairs_for(units, loss * kLossMargin, kTailFailure * share / static_cast<double>(blocks));
    if (repairs == 0) continue;
    std::size_t longest = 0;
    for (std::uint64_t seq = begin; seq < stop; ++seq) longest = std::max(longest, arq.held_copy(seq, sent)->size());
    const std::size_t size = 2 + longest;
    padded.resize(units);
    std::vector<const std::byte*> data;
    for (std::size_t j = 0; j < units; ++j) {
      put_symbol(padded[j], *arq.held_copy(begin + j, sent), size);
      data.push_back(padded[j].data());
    }
    const std::size_t start = out.size();
    std::vector<std::byte*> targets;
    for (std::size_t r = 0; r < repairs; ++r) {
      out.push_back(RepairSymbol{begin, units, r, std::vector<std::byte>(size)});
    }
    for (std::size_t r = 0; r < repairs; ++r) targets.push_back(out[start + r].symbol.data());
    ErasureCode::encode(data, size, 0, targets);
  }
  return out;
}

const ArqPayload* TailFecReceiver::unit(const Arq& arq, std::uint64_t seq) const {
  if (seq < kept_end_ && seq + kept_.size() >= kept_end_) return &kept_[kept_.size() - (kept_end_ - seq)];
  return arq.received(seq);
}

void TailFecReceiver::on_delivered(std::uint64_t seq, ArqPayload unit) {
  if (seq != kept_end_) kept_.clear();
  kept_.push_back(std::move(unit));
  kept_end_ = seq + 1;
  while (kept_.size() > kKeptUnits) kept_.pop_front();
}

bool TailFecReceiver::on_repair(Arq& arq, const RepairFrame& repair, ArqTime now) {
  ++repairs_received_;
  // Blocks all of whose units arrived (in order) need nothing more.
  while (!blocks_.empty() && blocks_.begin()->first + blocks_.begin()->second.data_count <= arq.received_below()) {
    held_repairs_ -= blocks_.begin()->second.repairs.size();
    blocks_.erase(blocks_.begin());
  }
  if (repair.first_sequence + repair.data_count <= arq.received_below()) return true;
  auto [it, inserted] = blocks_.try_emplace(repair.first_sequence);
  Block& block = it->second;
  if (inserted) {
    block.data_count = repair.data_count;
    block.symbol_size = repair.symbol.size();
  } else if (block.data_count != repair.data_count || block.symbol_size != repair.symbol.size()) {
    return false;  // the sender makes every symbol of a block alike
  }
  if (block.repairs.emplace(repair.index, std::vector<std::byte>(repair.symbol.begin(), repair.symbol.end())).second) {
    ++held_repairs_;
  }
  bool malformed = false;
  if (try_decode(arq, it->first, block, now, malformed)) {
    held_repairs_ -= block.repairs.size();
    blocks_.erase(it);
  }
  while (held_repairs_ > kMaxHeldRepairs && !blocks_.empty()) {
    held_repairs_ -= blocks_.begin()->second.repairs.size();
    blocks_.erase(blocks_.begin());
  }
  return !malformed;
}

void TailFecReceiver::on_data(Arq& arq, std::uint64_t seq, ArqTime now) {
  auto it = blocks_.upper_bound(seq);
  if (it == blocks_.begin()) return;
  --it;
  if (seq >= it->first + it->second.data_count) return;
  bool malformed = false;  // (a recovered unit that is not one: nothing delivered; the ARQ re-sends)
  if (try_decode(arq, it->first, it->second, now, malformed)) {
    held_repairs_ -= it->second.repairs.size();
    blocks_.erase(it);
  }
}

bool TailFecReceiver::try_decode(Arq& arq, std::uint64_t first, Block& block, ArqTime now, bool& malformed) {
  const std::size_t count = block.data_count, size = block.symbol_size;
  std::vector<const ArqPayload*> units(count);
  std::size_t missing = 0;
  for (std::size_t j = 0; j < count; ++j) {
    units[j] = unit(arq, first + j);
    if (units[j] == nullptr) {
      ++missing;
    } else if (units[j]->size() + 2 > size) {
      malformed = true;  // a unit longer than the block's symbols: not the sender's block
      return true;
    }
  }
  if (missing == 0) return true;
  if (missing > block.repairs.size()) return false;
  std::vector<std::vector<std::byte>> padded(count);
  std::vector<const std::byte*> known(count, nullptr);
  for (std::size_t j = 0; j < count; ++j) {
    if (units[j] == nullptr) continue;
    put_symbol(padded[j], *units[j], size);
    known[j] = padded[j].data();
  }
  std::vector<ErasureCode::Repair> repairs;
  for (const auto& [index, symbol] : block.repairs) {
    repairs.push_back({index, symbol.data()});
    if (repairs.size() == missing) break;
  }
  std::vector<std::vector<std::byte>> recovered(missing, std::vector<std::byte>(size));
  std::vector<std::byte*> targets;
  for (auto& buffer : recovered) targets.push_back(buffer.data());
  if (!ErasureCode::decode(known, size, repairs, targets)) return false;
  std::size_t next = 0;
  for (std::size_t j = 0; j < count; ++j) {
    if (units[j] != nullptr) continue;
    const std::vector<std::byte>& symbol = recovered[next++];
    const std::size_t length = (std::to_integer<std::size_t>(symbol[0]) << 8) | std::to_integer<std::size_t>(symbol[1]);
    if (length == 0 || length + 2 > size) {
      malformed = true;  // the repairs do not belong to these units
      return true;
    }
    // A recovered unit is a received one: held, acknowledged and delivered in order by the ARQ.
    (void)arq.on_data(first + j, ArqPayload(symbol.begin() + 2, symbol.begin() + 2 + static_cast<std::ptrdiff_t>(length)), now);
    ++recovered_;
  }
  return true;
}

}  // namespace lp
