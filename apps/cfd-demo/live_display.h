// LiveDisplay: rendering off the receive path, for a live view. The receive thread offers each
// decoded frame; a display thread of its own shows (renders) the newest one offered whenever it is
// free. A frame still waiting when a newer one is offered is replaced and counted as skipped, so a
// display slower than the stream shows the newest state instead of working through a backlog, and
// the receive path (and with it the transport's flow control) never waits for the display.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "frame.h"

namespace lp::cfd {

class LiveDisplay {
 public:
  // Shows one frame; runs on the display thread, one call at a time. An exception it throws ends
  // the display thread and comes back from stop() (and offer() after that).
  using Show = std::function<void(const Frame&)>;

  explicit LiveDisplay(Show show);
  ~LiveDisplay();  // stop(), an error from the display dropped (a destructor cannot throw)
  LiveDisplay(const LiveDisplay&) = delete;
  LiveDisplay& operator=(const LiveDisplay&) = delete;

  // Hands over the newest frame; never waits for the display. Replaces (skips) a frame offered
  // earlier that the display has not taken yet. Throws the display's error, if it failed.
  void offer(Frame frame);
  // Shows the frame still waiting, if any (the last one received is always shown), then ends the
  // display thread. Throws the display's error, if it failed. Idempotent.
  void stop();

  long long shown() const;
  long long skipped() const;

 private:
  void display_loop();
  void rethrow_failure();  // with mutex_ held

  Show show_;
  mutable std::mutex mutex_;
  std::condition_variable offered_;
  std::optional<Frame> waiting_;  // offered, not taken yet: at most one, the newest
  bool stopping_ = false;
  std::exception_ptr failure_;
  long long shown_ = 0;
  long long skipped_ = 0;
  std::thread thread_;  // last: started once everything above is set up
};

}  // namespace lp::cfd
