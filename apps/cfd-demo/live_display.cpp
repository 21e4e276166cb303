#include "live_display.h"

#include <utility>

namespace lp::cfd {

LiveDisplay::LiveDisplay(Show show) : show_(std::move(show)), thread_([this] { display_loop(); }) {}

LiveDisplay::~LiveDisplay() {
  try {
    stop();
  } catch (...) {
    // Already reported to whoever called stop(); a destructor must not throw.
  }
}

void LiveDisplay::offer(Frame frame) {
  {
    std::lock_guard lock(mutex_);
    rethrow_failure();
    if (stopping_) return;  // after stop(): nobody would show it
    if (waiting_) ++skipped_;
    waiting_ = std::move(frame);
  }
  offered_.notify_one();
}

void LiveDisplay::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  offered_.notify_one();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  rethrow_failure();
}

long long LiveDisplay::shown() const {
  std::lock_guard lock(mutex_);
  return shown_;
}

long long LiveDisplay::skipped() const {
  std::lock_guard lock(mutex_);
  return skipped_;
}

void LiveDisplay::display_loop() {
  for (;;) {
    Frame frame;
    {
      std::unique_lock lock(mutex_);
      offered_.wait(lock, [this] { return waiting_.has_value() || stopping_; });
      if (!waiting_) return;  // stopping, nothing left to show
      frame = std::move(*waiting_);
      waiting_.reset();
    }
    try {
      show_(frame);  // outside the lock: offer() never waits for a slow display
    } catch (...) {
      std::lock_guard lock(mutex_);
      failure_ = std::current_exception();
      waiting_.reset();
      return;
    }
    std::lock_guard lock(mutex_);
    ++shown_;
  }
}

void LiveDisplay::rethrow_failure() {
  if (failure_) std::rethrow_exception(failure_);
}

}  // namespace lp::cfd
