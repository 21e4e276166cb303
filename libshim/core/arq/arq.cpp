#include "arq/arq.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace lp {

namespace {

void require(bool ok, const char* field, const char* range) {
  if (!ok) throw std::invalid_argument(std::string("ArqConfig.") + field + " must be " + range);
}

const ArqConfig& validated(const ArqConfig& config) {
  validate(config);
  return config;
}

}  // namespace

void validate(const ArqConfig& c) {
  require(c.send_window_messages >= 1, "send_window_messages", ">= 1");
  require(c.send_window_bytes >= 1, "send_window_bytes", ">= 1");
  require(c.receive_window_messages >= 1, "receive_window_messages", ">= 1");
  require(c.receive_window_bytes >= 1, "receive_window_bytes", ">= 1");
  require(c.min_rto > ArqDuration::zero(), "min_rto", "> 0");
  require(c.initial_rto >= c.min_rto && c.initial_rto <= c.max_rto, "initial_rto", "within [min_rto, max_rto]");
  require(c.max_rto >= c.min_rto, "max_rto", ">= min_rto");
  require(c.clock_granularity >= ArqDuration::zero(), "clock_granularity", ">= 0");
  require(c.min_rto_margin >= ArqDuration::zero(), "min_rto_margin", ">= 0");
  require(c.backoff_factor >= 1.0 && c.backoff_factor <= 16.0, "backoff_factor", "within [1, 16]");
  require(c.ack_delay >= ArqDuration::zero(), "ack_delay", ">= 0");
  require(c.ack_every_messages >= 1, "ack_every_messages", ">= 1");
  require(c.tail_copies >= 1 && c.tail_copies <= 8, "tail_copies", "within [1, 8]");
  require(c.copy_recent_resends_rtts >= 0 && c.copy_recent_resends_rtts <= 4, "copy_recent_resends_rtts", "within [0, 4]");
  require(c.max_sack_ranges >= 1, "max_sack_ranges", ">= 1");
}

Arq::Arq(const ArqConfig& config) : config_(validated(config)), sender_(config_), receiver_(config_) {}

std::optional<ArqDataFrame> Arq::poll_transmit(ArqTime now) {
  sender_.on_timer(now);
  return sender_.poll_transmit(now);
}

std::optional<ArqAck> Arq::poll_ack(ArqTime now) {
  if (!receiver_.ack_due(now)) return std::nullopt;
  return receiver_.make_ack();
}

std::optional<ArqTime> Arq::next_deadline() const {
  const auto send = sender_.next_deadline();
  const auto ack = receiver_.next_deadline();
  if (send && ack) return std::min(*send, *ack);
  return send ? send : ack;
}

void Arq::carrier_reset(ArqTime now) {
  sender_.carrier_reset(now);
  receiver_.carrier_reset(now);
}

void Arq::resend_unread(ArqTime now) {
  sender_.resend_unread(now);
  receiver_.carrier_reset(now);
}

ArqStats Arq::stats() const {
  ArqStats stats = sender_.stats();
  receiver_.add_stats(stats);
  return stats;
}

}  // namespace lp
