#include "driver/path_keeper.h"

#include <cstdlib>
#include <ctime>
#include <fstream>

#include "carrier/carrier_choice.h"
#include "session/connection.h"
#include "session/session.h"

namespace lp {
namespace {

// Writes below this may be held back to coalesce: bulk writes never pay for the TCP_INFO read.
constexpr std::size_t kMaxCoalescedWrite = 1500;

// Linux doubles a requested buffer for bookkeeping; tcp_[rw]mem and SO_*BUF report the doubled size.
constexpr std::size_t kKernelBufferFactor = 2;

std::int64_t now_unix() { return static_cast<std::int64_t>(std::time(nullptr)); }

// The third field of /proc/sys/net/ipv4/tcp_[rw]mem: how far the kernel's autotuning grows a
// socket's buffer on its own, in requested units (0 if unreadable: then every plan applies).
std::size_t autotune_limit(const char* file) {
  std::ifstream in(file);
  std::size_t minimum = 0, initial = 0, maximum = 0;
  if (!(in >> minimum >> initial >> maximum)) return 0;
  return maximum / kKernelBufferFactor;
}

double to_ms(std::chrono::microseconds d) { return static_cast<double>(d.count()) / 1000.0; }

}  // namespace

bool hold_small_write(Connection& connection, std::chrono::steady_clock::time_point now) {
  using Clock = std::chrono::steady_clock;
  if (connection.pending_output() == 0 || connection.state != ConnectionState::kEstablished ||
      connection.session == nullptr || !connection.link) {
    return false;
  }
  if (connection.pending_output() >= kMaxCoalescedWrite) {  // a full segment waits: no reason to hold it
    connection.coalesce_until = {};
    return false;
  }
  if (connection.coalesce_until != Clock::time_point{}) {
    if (now < connection.coalesce_until) return true;
    connection.coalesce_until = {};  // its time has come
    return false;
  }
  const LinkPathInfo info = connection.link->path_info();
  const auto delay = coalesce_delay(connection.pending_output(), info.snd_mss, info.unacked, info.snd_cwnd,
                                    connection.session->path().rtt());
  if (delay.count() <= 0) return false;
  connection.coalesce_until = now + delay;
  return true;
}

PathKeeper::PathKeeper(const Config& config)
    : config_(config),
      file_(path_cache_file(config.path_cache,
                            [](const char* name) {
                              const char* value = std::getenv(name);
                              return value == nullptr ? std::string() : std::string(value);
                            })),
      autotune_send_(autotune_limit("/proc/sys/net/ipv4/tcp_wmem")),
      autotune_receive_(autotune_limit("/proc/sys/net/ipv4/tcp_rmem")) {
  if (!file_.empty()) cache_ = PathCache::load(file_, now_unix());
}

void PathKeeper::look_up_warm_start(Session& session) {
  PathStatistics& report = session.counters().path;
  session.warm_start_looked_up = true;
  if (file_.empty()) {
    report.warm_start = "off";
    return;
  }
  const auto cached = cache_.find(session.path_cache_key, now_unix());
  if (!cached) return;
  report.warm_start_rtt_ms = to_ms(cached->min_rtt);
  if (session.path().offer_warm_start(*cached)) {
    report.warm_start = "used";
    ++used_;
  } else {
    report.warm_start = "rejected";  // the handshake's round trip disagrees: a cold start
    ++rejected_;
  }
}

bool PathKeeper::warm_start_due(Session& session) {
  if (!session.warm_start_looked_up) return session.path().handshake_rtt().has_value();
  const DatagramChannel* channel = session.datagram();
  return channel != nullptr && !channel->warm_start_offered() && session.path().warm_start_used();
}

void PathKeeper::refresh(Session& session) {
  PathEstimator& path = session.path();
  PathStatistics& report = session.counters().path;
  report.measured_buffers = config_.measured_send_buffer() || config_.measured_receive_buffer();
  std::size_t send = 0, receive = 0;
  report.kernel_send_buffer = report.kernel_receive_buffer = 0;
  for (Connection* stream : session.streams().streams()) {
    if (stream == nullptr || !stream->link) continue;
    if (session.path_cache_key.empty()) {
      // A stream dialled with TCP Fast Open may not be connected yet (no peer address): the key
      // waits for the address rather than fall back to the peer's name, which the cache lacks.
      const std::string address = stream->link->peer_address();
      if (!address.empty()) session.path_cache_key = path_cache_key(address, session.peer());
    }
    const LinkPathInfo info = stream->link->path_info();
    if (!info.valid) continue;
    report.kernel_send_buffer = std::max(report.kernel_send_buffer, info.send_buffer);
    report.kernel_receive_buffer = std::max(report.kernel_receive_buffer, info.receive_buffer);
    path.on_rtt(std::chrono::microseconds(info.rtt_us), std::chrono::microseconds(info.min_rtt_us));
    path.on_delivery_rate(info.delivery_rate, info.app_limited);
    path.on_congestion_window(info.snd_cwnd, info.snd_mss);
    path.on_received_per_rtt(info.received_per_rtt);
    if (info.data_segments_out >= stream->sampled_segments_out && info.total_retransmits >= stream->sampled_retransmits) {
      path.on_segments(info.data_segments_out - stream->sampled_segments_out,
                       info.total_retransmits - stream->sampled_retransmits,
                       info.rtt_us >= PathEstimator::kQueueRttRatio * info.min_rtt_us);
    }
    stream->sampled_segments_out = info.data_segments_out;
    stream->sampled_retransmits = info.total_retransmits;
  }
  if (!session.warm_start_looked_up && path.handshake_rtt() && !session.path_cache_key.empty()) {
    look_up_warm_start(session);
  }
  // A datagram session starts its pacer at the validated entry's rate. An auto session
  // gets its channel at the carrier agreement, which may come after the look-up: hence here.
  if (DatagramChannel* channel = session.datagram(); channel != nullptr && !channel->warm_start_offered() &&
                                                     path.warm_start_used()) {
    channel->warm_start(seed_rate(*path.warm_start()), path.warm_start()->min_rtt, path.warm_start()->loss_ppm);
  }
  // With the hints both set the fallback keeps judging by them (tcp_socket.cpp).
  const double judged_bdp = path.judged_bdp_bytes(config_.bandwidth_mbit * 1e6 / 8,
                                                  std::chrono::duration_cast<std::chrono::microseconds>(config_.rtt));
  for (Connection* stream : session.streams().streams()) {
    if (stream == nullptr || !stream->link) continue;
    const SocketTuning& tuning = stream->link->tuning();
    BufferPlan plan = path.buffers(tuning.requested_send, tuning.requested_receive, autotune_send_, autotune_receive_,
                                   config_.bandwidth_mbit * 1e6 / 8);
    // By default the stand-in's buffers are a floor that a faster measured rate raises.
    const BufferPlan above = path.buffers_above_stand_in(tuning.requested_send, tuning.requested_receive,
                                                         config_.effective_send_buffer(),
                                                         config_.effective_receive_buffer(),
                                                         config_.bandwidth_mbit * 1e6 / 8);
    if (!config_.measured_send_buffer()) plan.send = config_.send_buffer_above_stand_in() ? above.send : 0;
    if (!config_.measured_receive_buffer()) plan.receive = config_.receive_buffer_above_stand_in() ? above.receive : 0;
    if (plan.send != 0 || plan.receive != 0) stream->link->resize_buffers(plan.send, plan.receive);
    if (!(config_.rtt_given && config_.bandwidth_given)) stream->link->set_path_bdp(static_cast<std::size_t>(judged_bdp));
    send = std::max(send, stream->link->tuning().requested_send);
    receive = std::max(receive, stream->link->tuning().requested_receive);
  }
  auto ms = [](std::optional<std::chrono::microseconds> d) { return d ? to_ms(*d) : 0.0; };
  report.handshake_rtt_ms = ms(path.handshake_rtt());
  report.min_rtt_ms = ms(path.min_rtt());
  report.smoothed_rtt_ms = ms(path.smoothed_rtt());
  report.rate_mbit = path.rate_bytes_per_second() * 8 / 1e6;
  report.pipe_full = path.pipe_full();
  report.send_buffer = send;
  report.receive_buffer = receive;
  report.max_cwnd = path.max_congestion_window();
  // Remembered now, so that a session forgotten before the engine stops still leaves its entry.
  if (!file_.empty() && !session.path_cache_key.empty()) {
    if (auto snapshot = learnt(session, send, receive)) remember(session.path_cache_key, *snapshot);
  }
}

std::optional<PathSnapshot> PathKeeper::learnt(const Session& session, std::size_t send, std::size_t receive) const {
  std::optional<PathSnapshot> snapshot;
  // A datagram session's TCP is its control connection: its rate and window say nothing of the
  // path (it carries a few KB/s); the pacer measured the path.
  if (const DatagramChannel* channel = session.datagram()) {
    snapshot = channel->path_snapshot();
    if (const auto cap = config_.bandwidth_cap_bytes_per_second(); snapshot && cap) {
      snapshot->rate_bytes_per_second = std::min(snapshot->rate_bytes_per_second, *cap);
    }
    // A short session's pacer may not have measured the path (a session of replies); the peer's
    // verdict is still worth keeping: with the control connection's round trip and no rate of
    // its own (a lower bound of 0, so keep_known_rate keeps a known rate).
    if (!snapshot && session.peer_verdict() >= 0) {
      snapshot = session.path().snapshot(0, 0);
      if (snapshot) {
        snapshot->rate_bytes_per_second = 0;
        snapshot->congestion_window = 0;
        snapshot->rate_is_lower_bound = true;
      }
    }
  } else {
    snapshot = session.path().snapshot(send, receive);
  }
  if (snapshot) snapshot->peer_verdict = session.peer_verdict();
  return snapshot;
}

void PathKeeper::remember(const std::string& key, PathSnapshot snapshot) {
  // A session that never filled its pipe does not lower a known rate (keep_known_rate).
  if (auto learnt = updates_.find(key); learnt != updates_.end()) {
    snapshot = keep_known_rate(snapshot, learnt->second.path);
  } else {
    snapshot = keep_known_rate(snapshot, cache_.find(key, now_unix()));
  }
  // A session that measured no loss (too few datagrams or segments sent without a queue) keeps
  // what an earlier one measured: else auto would turn back to tcp every other time.
  keep_known(key, &PathSnapshot::loss_ppm, snapshot);
  // Nor one that heard no verdict from the peer (it was not auto, or the carrier was not agreed).
  keep_known(key, &PathSnapshot::peer_verdict, snapshot);
  updates_[key] = {now_unix(), snapshot};
}

template <typename Field>
void PathKeeper::keep_known(const std::string& key, Field PathSnapshot::*field, PathSnapshot& snapshot) const {
  if (snapshot.*field >= 0) return;
  if (auto learnt = updates_.find(key); learnt != updates_.end() && learnt->second.path.*field >= 0) {
    snapshot.*field = learnt->second.path.*field;
  } else if (auto cached = cache_.find(key, now_unix())) {
    snapshot.*field = (*cached).*field;
  }
}

bool PathKeeper::prefers_datagrams(const std::string& key, std::optional<std::chrono::microseconds> handshake_rtt,
                                   bool heed_peer_verdict) const {
  if (file_.empty() || key.empty()) return false;
  if (heed_peer_verdict) {
    const auto heard = newest(key);
    if (heard && (!handshake_rtt || validate_warm_start(*heard, *handshake_rtt)) &&
        path_peer_judged_datagrams(heard->min_rtt, heard->peer_verdict)) {
      return true;
    }
  }
  const std::optional<PathSnapshot> known = with_loss(key);
  if (known && (!handshake_rtt || validate_warm_start(*known, *handshake_rtt)) &&
      path_prefers_datagrams(known->min_rtt, known->loss_ppm)) {
    return true;
  }
  // A known long path: the file's entry, as the session's warm start will use it (look_up_warm_start:
  // validated by the handshake's round trip; the rate capped as the pacer's seed is, refresh()).
  if (!handshake_rtt) return false;
  const auto cached = cache_.find(key, now_unix());
  if (!cached || !validate_warm_start(*cached, *handshake_rtt)) return false;
  return path_warm_starts_datagrams(cached->min_rtt, seed_rate(*cached));
}

DialJudgement PathKeeper::judge_before_dial(const std::string& key) const {
  if (file_.empty() || key.empty()) return DialJudgement::kAtHandshake;
  const auto heard = newest(key);
  if (!heard) return DialJudgement::kAtHandshake;
  const std::optional<PathSnapshot> known = with_loss(key);
  if (known && path_prefers_datagrams(known->min_rtt, known->loss_ppm)) return DialJudgement::kDatagrams;
  if (path_peer_judged_datagrams(heard->min_rtt, heard->peer_verdict)) return DialJudgement::kDatagrams;
  const auto cached = cache_.find(key, now_unix());
  return cached && path_warm_starts_datagrams(cached->min_rtt, seed_rate(*cached)) ? DialJudgement::kDatagrams
                                                                                    : DialJudgement::kTcp;
}

std::optional<PathSnapshot> PathKeeper::with_loss(const std::string& key) const {
  if (auto learnt = updates_.find(key); learnt != updates_.end() && learnt->second.path.loss_ppm >= 0) {
    return learnt->second.path;
  }
  return cache_.find(key, now_unix());
}

std::optional<PathSnapshot> PathKeeper::newest(const std::string& key) const {
  if (auto learnt = updates_.find(key); learnt != updates_.end()) return learnt->second.path;
  return cache_.find(key, now_unix());
}

double PathKeeper::seed_rate(const PathSnapshot& cached) const {
  double rate = cached.rate_bytes_per_second;
  if (const auto cap = config_.bandwidth_cap_bytes_per_second()) rate = std::min(rate, *cap);
  return rate;
}

void PathKeeper::save(const std::map<std::string, std::unique_ptr<Session>>& sessions) {
  if (file_.empty()) return;
  for (const auto& [peer, session] : sessions) {
    if (session->path_cache_key.empty()) continue;
    const PathStatistics& report = session->counters().path;
    if (auto snapshot = learnt(*session, report.send_buffer, report.receive_buffer)) {
      remember(session->path_cache_key, *snapshot);
    }
  }
  error_ = PathCache::save(file_, updates_, now_unix());
  saved_ = error_.empty() ? updates_.size() : 0;
}

void PathKeeper::add_statistics(EndpointStatistics& statistics) const {
  statistics.path_cache_file = file_;
  statistics.path_cache_entries = cache_.size();
  statistics.path_cache_corrupt_lines = cache_.corrupt_lines();
  statistics.path_cache_expired_lines = cache_.expired_lines();
  statistics.warm_starts_used = used_;
  statistics.warm_starts_rejected = rejected_;
  statistics.path_cache_saved = saved_;
  statistics.path_cache_error = error_;
}

}  // namespace lp
