// StatsWriter: writes lp-linkemu's counters to its stats file from a thread of its own, so that the
// packet loop never waits for the disk. The loop hands over the newest text (publish: a string swap
// under a mutex); the thread writes it to a temporary file and renames it over the stats file.
// A text not yet written when a newer one comes is replaced: only the newest matters.
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace lp::netem {

class StatsWriter {
 public:
  explicit StatsWriter(std::string path);  // "" = no stats file: everything is a no-op
  ~StatsWriter();                          // writes what is still pending, then stops the thread
  StatsWriter(const StatsWriter&) = delete;
  StatsWriter& operator=(const StatsWriter&) = delete;

  // Never blocks on I/O: the thread writes `text` soon.
  void publish(std::string text);
  // Writes `text` now, in the caller's thread (start-up and shutdown). Throws SystemError.
  void write_now(const std::string& text) const;

 private:
  void run();

  std::string path_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<std::string> pending_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace lp::netem
