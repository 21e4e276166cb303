// PathCache: the warm-start cache, in the spirit of Linux's TCP metrics cache. What sessions learnt
// about their paths (path_estimator.h) outlives the process in a small per-user file, so that a new
// session to a known path starts from it (once PathEstimator::offer_warm_start validated it).
//
// File ($XDG_CACHE_HOME/longpipe/paths, else ~/.cache/longpipe/paths; LONGPIPE_PATH_CACHE=path|off):
//   # longpipe path cache 1
//   <key> <saved, unix seconds> <min_rtt us> <rate bytes/s> <cwnd segments> <send buffer> <receive buffer>
//   [<loss ppm> [<peer verdict>]]  (TCP retransmissions per million segments without a queue, -1 =
//   unknown; the peer's auto verdict, 1 datagrams, 0 tcp, -1 unknown; lines of 7 or 8 fields read
//   as unknown)
// one line per path; the key is the peer's address (port-independent: every process of a host
// shares the path). Mode 0600, written atomically (temporary file + rename), at most kMaxEntries
// lines (the oldest go), an entry older than kMaxAge is ignored and dropped. A line that does not
// parse is skipped and counted: a damaged file costs its damaged lines, never a session.
//
// The parsing, merging and aging are pure (tests); load()/save() do the file I/O.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "path/path_estimator.h"

namespace lp {

class PathCache {
 public:
  // Paths change (routes, links): a day-old measurement is a guess (Linux's TCP metrics age out
  // after an hour, but they need no validation; ours is checked against each handshake).
  static constexpr std::chrono::seconds kMaxAge{24 * 3600};
  // Far more peers than a job has; bounds the file (~100 bytes a line) and the parse.
  static constexpr std::size_t kMaxEntries = 256;
  // Longer lines are not ours.
  static constexpr std::size_t kMaxLineBytes = 512;
  static constexpr const char* kHeader = "# longpipe path cache 1";

  struct Entry {
    std::int64_t saved_unix = 0;  // seconds since the epoch (wall clock: it must survive reboots)
    PathSnapshot path;
  };

  // Parses a file's text; lines that do not parse (or are too old at `now_unix`) are skipped.
  static PathCache parse(const std::string& text, std::int64_t now_unix);
  std::string format() const;

  // The entry for `key`, if one is there and younger than kMaxAge at `now_unix`.
  std::optional<PathSnapshot> find(const std::string& key, std::int64_t now_unix) const;
  // Records `path` for `key` at `now_unix`; beyond kMaxEntries the oldest entries go.
  void put(const std::string& key, const PathSnapshot& path, std::int64_t now_unix);

  std::size_t size() const { return entries_.size(); }
  std::size_t corrupt_lines() const { return corrupt_lines_; }
  std::size_t expired_lines() const { return expired_lines_; }

  // --- file I/O ---
  // Reads `file` (missing = empty). Never throws: an unreadable file is an empty cache.
  static PathCache load(const std::string& file, std::int64_t now_unix);
  // Merges `updates` into what the file holds now (another process may have written since) and
  // writes it atomically with mode 0600, creating the directory (0700). Returns "" or why not.
  static std::string save(const std::string& file, const std::map<std::string, Entry>& updates,
                          std::int64_t now_unix);

  const std::map<std::string, Entry>& entries() const { return entries_; }

 private:
  std::map<std::string, Entry> entries_;
  std::size_t corrupt_lines_ = 0;
  std::size_t expired_lines_ = 0;
};

// What to write for a session that learnt `learnt` when `known` (this process's newer entry, else
// the file's) is there for the same key. A rate the session never showed to fill its pipe is a
// lower bound (BBR's rule for app-limited samples): a session of small messages measures what it
// sent, not the path. So when `learnt` is such a bound and `known` has a higher rate for the same
// path (its round trip validated as the warm start's reader does), the entry keeps `known`'s rate,
// window and buffers with the session's round trip. Otherwise `learnt` as it is: a session that
// filled its pipe sets the rate, lower as well (a path can get slower), and another path behind
// the address replaces the entry. Pure, for tests.
PathSnapshot keep_known_rate(const PathSnapshot& learnt, const std::optional<PathSnapshot>& known);

// LONGPIPE_PATH_CACHE's file: "off" = none (""), "auto" = $XDG_CACHE_HOME/longpipe/paths or
// $HOME/.cache/longpipe/paths ("" if neither is set), else the setting itself (an absolute path).
// `environment` reads a variable ("" = unset).
std::string path_cache_file(const std::string& setting, const std::function<std::string(const char*)>& environment);

// The cache key of a peer: its address when known (numeric, port dropped), else its host name; ""
// (nothing cached) for a peer behind a site gateway ("<site>/host:port").
std::string path_cache_key(const std::string& peer_address, const std::string& peer_endpoint);

}  // namespace lp
