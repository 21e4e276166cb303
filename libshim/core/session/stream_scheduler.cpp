#include "session/stream_scheduler.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "session/connection.h"

namespace lp {

StreamScheduler::StreamScheduler(std::size_t own_streams, std::size_t small_message, bool spill_large)
    : own_streams_(own_streams),
      small_message_(small_message),
      spill_large_(spill_large),
      streams_(own_streams, nullptr),
      dialling_(own_streams) {}

std::size_t StreamScheduler::established() const {
  std::size_t n = 0;
  for (const Connection* c : streams_) n += c != nullptr;
  return n;
}

Connection* StreamScheduler::first() const {
  for (Connection* c : streams_) {
    if (c != nullptr) return c;
  }
  return nullptr;
}

bool StreamScheduler::holds(const Connection& connection) const {
  return connection.stream < streams_.size() && streams_[connection.stream] == &connection;
}

std::vector<std::size_t> StreamScheduler::slots_to_dial() const {
  std::vector<std::size_t> slots;
  for (std::size_t slot = 0; slot < own_streams_; ++slot) {
    if (free_to_dial(slot)) slots.push_back(slot);
  }
  return slots;
}

bool StreamScheduler::is_attempt(const Connection& connection) const {
  const std::vector<Connection*>& slot = attempts(connection.stream);
  return std::find(slot.begin(), slot.end(), &connection) != slot.end();
}

void StreamScheduler::add_attempt(std::size_t slot, Connection* connection) {
  ensure_slot(slot);
  dialling_[slot].push_back(connection);
}

bool StreamScheduler::remove(const Connection& connection) {
  const std::size_t slot = connection.stream;
  if (slot < dialling_.size()) std::erase(dialling_[slot], &connection);
  if (!holds(connection)) return false;
  streams_[slot] = nullptr;
  return true;
}

void StreamScheduler::ensure_slot(std::size_t slot) {
  if (slot >= streams_.size()) {
    streams_.resize(slot + 1, nullptr);
    dialling_.resize(slot + 1);
  }
}

Connection* StreamScheduler::install(Connection& connection) {
  const std::size_t slot = connection.stream;
  ensure_slot(slot);
  std::erase(dialling_[slot], &connection);
  Connection* displaced = streams_[slot];
  streams_[slot] = &connection;
  return displaced;
}

bool StreamScheduler::keep_existing(const std::string& existing_dialler, const std::string& new_dialler) {
  return existing_dialler != new_dialler && existing_dialler < new_dialler;
}

bool StreamScheduler::carries(const Connection* connection) const {
  if (connection == nullptr) return false;
  if (!connection->suspect) return true;
  for (const Connection* c : streams_) {
    if (c != nullptr && !c->suspect) return false;
  }
  return true;
}

Connection* StreamScheduler::next_with_room() const {
  const std::size_t count = regular_slots();
  for (std::size_t i = 0; i < count; ++i) {
    Connection* candidate = streams_[(next_stream_ + i) % count];
    if (carries(candidate) && candidate->pending_output() < kOutputHighWater) return candidate;
  }
  // No regular stream up (lost, being redialled): a spill stream carries meanwhile.
  for (std::size_t slot = count; slot < streams_.size(); ++slot) {
    if (carries(streams_[slot]) && streams_[slot]->pending_output() < kOutputHighWater) return streams_[slot];
  }
  return nullptr;
}

Connection* StreamScheduler::by_size(std::size_t packed_bytes) {
  const std::size_t count = regular_slots();
  if (small_message_ == 0 || count < 2) return nullptr;
  if (packed_bytes <= small_message_ + kMessageTrailerSize) return carries(streams_[0]) ? streams_[0] : nullptr;
  Connection* fallback = nullptr;  // an established large-message stream, even if full
  for (std::size_t i = 0; i < count - 1; ++i) {
    const std::size_t index = 1 + (next_large_stream_ + i) % (count - 1);
    Connection* candidate = streams_[index];
    if (!carries(candidate)) continue;
    if (candidate->pending_output() < kOutputHighWater) {
      next_large_stream_ = index % (count - 1);
      return candidate;
    }
    if (fallback == nullptr) fallback = candidate;
  }
  return fallback;
}

bool StreamScheduler::has_room_for(std::size_t packed_bytes) const {
  const bool any_room = next_with_room() != nullptr;
  const std::size_t count = regular_slots();
  if (small_message_ == 0 || count < 2) return any_room;
  if (packed_bytes <= small_message_ + kMessageTrailerSize) {
    return carries(streams_[0]) ? streams_[0]->pending_output() < kOutputHighWater : any_room;
  }
  bool large_stream_up = false;
  for (std::size_t index = 1; index < count; ++index) {
    if (!carries(streams_[index])) continue;
    if (streams_[index]->pending_output() < kOutputHighWater) return true;
    large_stream_up = true;
  }
  return !large_stream_up && any_room;  // no large-message stream: by_size() lets it go anywhere
}

void StreamScheduler::sent_on(const Connection& connection) {
  if (!is_spill_slot(connection.stream)) next_stream_ = (connection.stream + 1) % regular_slots();
}

std::size_t StreamScheduler::spill_established() const {
  std::size_t n = 0;
  for (std::size_t slot = kFirstSpillStream; slot < streams_.size(); ++slot) n += streams_[slot] != nullptr;
  return n;
}

std::size_t StreamScheduler::window_room(const StreamWindow& window, std::size_t pending) {
  const std::size_t taken = window.in_flight + window.not_sent + pending;
  return window.window > taken ? window.window - taken : 0;
}

bool StreamScheduler::should_spill(const StreamWindow& window, std::size_t pending, std::size_t frame_bytes,
                                   double path_bdp) {
  return window.known && static_cast<double>(window.window) < path_bdp && window_room(window, pending) < frame_bytes;
}

std::size_t StreamScheduler::held(const StreamWindow& window, std::size_t pending) {
  return window.in_flight + window.not_sent + pending;
}

double StreamScheduler::windows_to_send(const StreamWindow& window, std::size_t pending, std::size_t frame_bytes) {
  // A paced stream's room soon (window) is for frames that go now; one queued behind it waits
  // for round trips of its whole window: counted by its room alone, a paced spill stream with a
  // large window takes a frame a round trip while other streams could carry it sooner.
  const std::size_t per_round_trip = window.round_trip_window != 0 ? window.round_trip_window : window.window;
  if (!window.known || per_round_trip == 0) return std::numeric_limits<double>::infinity();
  return static_cast<double>(held(window, pending) + frame_bytes) / static_cast<double>(per_round_trip);
}

bool StreamScheduler::within_spill_budget(std::size_t spill_held, std::size_t regular_in_flight,
                                          std::size_t frame_bytes, double path_bdp) {
  return static_cast<double>(spill_held + regular_in_flight + frame_bytes) <= kSpillBudgetBdpShare * path_bdp;
}

Connection* StreamScheduler::spill_target(const Connection& preferred, std::size_t frame_bytes, double path_bdp,
                                          const WindowLookup& window) const {
  if (is_spill_slot(preferred.stream) || spill_established() == 0) return nullptr;
  const StreamWindow own = window(preferred);
  if (!should_spill(own, preferred.pending_output(), frame_bytes, path_bdp)) return nullptr;
  // Each stream's window read once (a lookup is a getsockopt): for the budget, then the choice.
  std::vector<StreamWindow> windows(streams_.size());
  std::size_t spill_held = 0;
  std::size_t regular_in_flight = 0;
  for (std::size_t slot = 0; slot < streams_.size(); ++slot) {
    const Connection* stream = streams_[slot];
    if (stream == nullptr) continue;
    windows[slot] = window(*stream);
    if (is_spill_slot(stream->stream)) spill_held += held(windows[slot], stream->pending_output());
    else regular_in_flight += windows[slot].in_flight;
  }
  if (!within_spill_budget(spill_held, regular_in_flight, frame_bytes, path_bdp)) return nullptr;
  Connection* fewest = nullptr;  // the spill stream that needs the fewest windows for the frame
  double fewest_windows = windows_to_send(own, preferred.pending_output(), frame_bytes);
  for (std::size_t slot = kFirstSpillStream; slot < streams_.size(); ++slot) {
    Connection* candidate = streams_[slot];
    if (!carries(candidate) || candidate->suspect) continue;
    const StreamWindow& spill = windows[slot];
    if (!spill.known) continue;
    if (window_room(spill, candidate->pending_output()) >= frame_bytes) return candidate;
    const double windows = windows_to_send(spill, candidate->pending_output(), frame_bytes);
    if (windows < fewest_windows) {
      fewest = candidate;
      fewest_windows = windows;
    }
  }
  return spill_large_ && frame_bytes > kLargeSpillFrame ? fewest : nullptr;
}

}  // namespace lp
