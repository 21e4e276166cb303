// PathKeeper: the driver's side of measured path state. Reads each session's links (TCP_INFO) into
// its PathEstimator, applies the buffer sizes the estimator asks for, offers the warm-start entry
// once the handshake measured a round trip, and saves what sessions learnt in the per-user cache
// (path_cache.h) when the engine stops. Does I/O (sockets' options, the cache file, the wall
// clock, /proc/sys/net/ipv4/tcp_[rw]mem); every decision is PathEstimator's or PathCache's.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include "carrier/carrier_choice.h"
#include "config.h"
#include "path/path_cache.h"
#include "stats/stats.h"

namespace lp {

class Connection;
class Session;

// Whether an established connection's pending write, smaller than a segment, should wait a little
// so that the rest of a burst joins it (coalesce_delay in path_estimator.h decides from TCP_INFO and
// the session's RTT); sets and clears connection.coalesce_until. One TCP_INFO read per small write.
bool hold_small_write(Connection& connection, std::chrono::steady_clock::time_point now);

class PathKeeper {
 public:
  explicit PathKeeper(const Config& config);

  // Samples the session's streams, resizes their buffers if the estimate asks for it, looks up the
  // warm start, and fills counters().path. Called at the TCP_INFO refresh (progress_loop.cpp).
  void refresh(Session& session);
  // Whether refresh() has a warm start to look up or hand to the datagram pacer now, before the
  // next TCP_INFO sample is due: the pacer takes it only before its first ACK.
  static bool warm_start_due(Session& session);
  // Saves every session's snapshot (and those remembered from sessions already gone). Once, at stop.
  void save(const std::map<std::string, std::unique_ptr<Session>>& sessions);
  // LONGPIPE_CARRIER=auto: whether what this process or the cache knows of the path to `key`
  // (path_cache_key) says datagrams (carrier_choice.h): a long path that loses packets
  // (path_prefers_datagrams), or a long path whose cache entry the warm start will use and whose
  // bandwidth-delay product TCP would need many round trips of slow start to fill
  // (path_warm_starts_datagrams; needs `handshake_rtt`, as the warm start does). An entry whose
  // round trip disagrees with `handshake_rtt` (validate_warm_start) is another path: not used.
  // `heed_peer_verdict`: a dialler's decision also follows the peer's verdict heard in an earlier
  // handshake (path_peer_judged_datagrams); an acceptor's view, sent on the wire, is its own.
  bool prefers_datagrams(const std::string& key, std::optional<std::chrono::microseconds> handshake_rtt,
                         bool heed_peer_verdict) const;
  // The dialler's judgement before a dial, with no round trip measured yet: the entry taken at its
  // word (prefers_datagrams checks it against the handshake before the offer goes out); with no
  // entry (or no cache), kAtHandshake: the handshake's round trip decides (new_path_worth_datagrams).
  DialJudgement judge_before_dial(const std::string& key) const;
  // The cache's counters, into the engine-wide statistics.
  void add_statistics(EndpointStatistics& statistics) const;

 private:
  void look_up_warm_start(Session& session);
  // A cache entry's rate as the datagram pacer's seed: capped by a LONGPIPE_BANDWIDTH the user set.
  double seed_rate(const PathSnapshot& cached) const;
  // What this process learnt of `key`'s path, else the file's entry.
  std::optional<PathSnapshot> newest(const std::string& key) const;
  // What this process learnt of `key`'s path if it measured the loss, else the file's entry: the
  // entry path_prefers_datagrams judges.
  std::optional<PathSnapshot> with_loss(const std::string& key) const;
  void remember(const std::string& key, PathSnapshot snapshot);
  // Where `snapshot` left `field` unknown (< 0): this process's earlier value for `key` if it knew
  // one, else the file's.
  template <typename Field>
  void keep_known(const std::string& key, Field PathSnapshot::*field, PathSnapshot& snapshot) const;
  // What `session` learnt of its path (its TCP streams', or its datagram pacer's), for the cache.
  std::optional<PathSnapshot> learnt(const Session& session, std::size_t send, std::size_t receive) const;

  const Config& config_;
  std::string file_;   // "" = off
  PathCache cache_;
  std::map<std::string, PathCache::Entry> updates_;  // key -> what a session learnt
  std::size_t autotune_send_ = 0;     // what the kernel's autotuning reaches (requested units)
  std::size_t autotune_receive_ = 0;
  std::uint64_t used_ = 0, rejected_ = 0, saved_ = 0;
  std::string error_;
};

}  // namespace lp
