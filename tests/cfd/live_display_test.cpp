// The live display: rendering off the receive path shows the newest frame, skips (and counts) the
// frames a slow display had no time for, never shows an older frame after a newer one, never makes
// the receive path wait, and stops cleanly. Behaviour only: no timing is asserted.
#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "frame_consumer.h"
#include "live_display.h"
#include "temp_folder.h"

using namespace lp::cfd;

namespace {

Frame numbered(uint32_t number) {
  Frame frame;
  frame.frame_number = number;
  frame.width = 8;
  frame.height = 4;
  frame.values.assign(32, static_cast<float>(number));
  frame.send_time_ns = realtime_ns();
  return frame;
}

std::vector<uint8_t> encoded(uint32_t number) {
  Frame frame = numbered(number);
  for (size_t i = 0; i < frame.values.size(); ++i) frame.values[i] = static_cast<float>(i % 8) - 4.0f + number;
  return frame.encode();
}

// A display that holds the frame it is showing until the test lets it go.
class GatedDisplay {
 public:
  void show(const Frame& frame) {
    std::unique_lock lock(mutex_);
    shown_.push_back(frame.frame_number);
    changed_.notify_all();
    changed_.wait(lock, [&] { return released_ >= shown_.size(); });
  }
  // Waits until the display has started to show `count` frames.
  void wait_until_showing(size_t count) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return shown_.size() >= count; });
  }
  void release_one() {
    std::lock_guard lock(mutex_);
    ++released_;
    changed_.notify_all();
  }
  void release_all() {
    std::lock_guard lock(mutex_);
    released_ = 1u << 30;
    changed_.notify_all();
  }
  std::vector<uint32_t> shown() {
    std::lock_guard lock(mutex_);
    return shown_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<uint32_t> shown_;
  size_t released_ = 0;
};

}  // namespace

TEST_CASE("a busy display skips to the newest frame and counts what it skipped", "[cfd][live]") {
  GatedDisplay gate;
  LiveDisplay display([&](const Frame& frame) { gate.show(frame); });
  display.offer(numbered(0));
  gate.wait_until_showing(1);  // frame 0 is on the display, which is now busy
  for (uint32_t n = 1; n <= 5; ++n) display.offer(numbered(n));  // returns at once: never waits
  CHECK(display.skipped() == 4);  // 1-4 were replaced before the display was free
  gate.release_one();             // 0 done: the display takes the newest, 5
  gate.wait_until_showing(2);
  CHECK(gate.shown() == std::vector<uint32_t>{0, 5});
  display.offer(numbered(6));     // while 5 is on the display
  gate.release_all();
  display.stop();                 // 6 was waiting: the last frame received is always shown
  CHECK(gate.shown() == std::vector<uint32_t>{0, 5, 6});
  CHECK(display.shown() == 3);
  CHECK(display.skipped() == 4);
}

TEST_CASE("a slow display shows frames in increasing order, each the newest when taken", "[cfd][live]") {
  std::mutex mutex;
  uint32_t newest_offered = 0;  // set once each offer has returned, under `mutex`
  std::vector<uint32_t> shown;
  std::vector<uint32_t> newest_when_shown;
  LiveDisplay display([&](const Frame& frame) {
    {
      std::lock_guard lock(mutex);
      shown.push_back(frame.frame_number);
      newest_when_shown.push_back(newest_offered);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // slower than the stream
  });
  constexpr uint32_t kFrames = 400;
  for (uint32_t n = 0; n < kFrames; ++n) {
    display.offer(numbered(n));
    {
      std::lock_guard lock(mutex);
      newest_offered = n;
    }
    if (n % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  display.stop();
  REQUIRE(!shown.empty());
  CHECK(shown.back() == kFrames - 1);  // the newest is shown last
  for (size_t i = 1; i < shown.size(); ++i) {
    INFO("shown " << shown[i - 1] << " then " << shown[i]);
    CHECK(shown[i] > shown[i - 1]);  // never an older frame after a newer one
  }
  // Nothing older than the newest received is shown after it: a frame the display takes is the
  // newest offered at that moment, so it is never older than a frame whose offer had returned
  // before the display started on the previous one.
  for (size_t i = 1; i < shown.size(); ++i) CHECK(shown[i] >= newest_when_shown[i - 1]);
  CHECK(static_cast<long long>(shown.size()) == display.shown());
  CHECK(display.shown() + display.skipped() == kFrames);  // every frame either shown or counted skipped
  CHECK(display.skipped() > 0);                           // 2 ms per frame cannot keep up with the loop
}

TEST_CASE("stop is clean: idempotent, with nothing pending, and reports a display's failure", "[cfd][live]") {
  SECTION("nothing offered") {
    LiveDisplay display([](const Frame&) {});
    display.stop();
    display.stop();
    CHECK(display.shown() == 0);
    CHECK(display.skipped() == 0);
  }
  SECTION("destroyed without stop") {
    int shown = 0;
    {
      LiveDisplay display([&](const Frame&) { ++shown; });
      display.offer(numbered(1));
    }
    CHECK(shown == 1);  // the destructor showed the last frame before it ended the thread
  }
  SECTION("a display that fails") {
    LiveDisplay display([](const Frame&) { throw std::runtime_error("disk full"); });
    display.offer(numbered(0));
    CHECK_THROWS_WITH(display.stop(), Catch::Contains("disk full"));
    CHECK_THROWS_WITH(display.offer(numbered(1)), Catch::Contains("disk full"));
  }
}

TEST_CASE("a live consumer receives every frame while its slow display skips to the newest", "[cfd][live][consumer]") {
  TempFolder folder;
  FrameConsumer::Options options;
  options.output_folder = folder.path().string();
  options.live = true;
  options.slow_ms = 20;  // the display, not the receive path, is slow
  options.contact_sheet_tiles = 4;
  FrameConsumer consumer(options);
  constexpr uint32_t kFrames = 60;
  for (uint32_t n = 0; n < kFrames; ++n) consumer.on_message(encoded(n), realtime_ns());
  const RunSummary s = consumer.finish(kFrames);
  CHECK(s.display == "live");
  CHECK(s.frames_received == kFrames);  // the receive path took every frame
  CHECK(s.complete);
  CHECK(s.in_order);
  CHECK(s.frames_skipped > 0);
  CHECK(s.pngs_written + s.frames_skipped == kFrames);
  CHECK(std::filesystem::exists(folder / "frame-000059.png"));  // the last frame is shown
  CHECK_FALSE(s.contact_sheet.empty());
  CHECK(RunSummary::from_record(s.to_record()).frames_skipped == s.frames_skipped);

  // frames.csv: one row per frame received, in order; the frames shown were shown in increasing
  // order of frame number (their shown time grows with it) and each after it was received.
  std::ifstream csv(folder / FrameConsumer::kFramesCsv);
  std::string line;
  std::getline(csv, line);
  CHECK(line == "frame,sent_ns,received_ns,receive_latency_ms,shown_latency_ms");
  long long rows = 0, shown = 0;
  double previous_shown_at = -1;
  while (std::getline(csv, line)) {
    std::stringstream fields(line);
    std::string frame, sent, received, receive_ms, shown_ms;
    std::getline(fields, frame, ',');
    std::getline(fields, sent, ',');
    std::getline(fields, received, ',');
    std::getline(fields, receive_ms, ',');
    std::getline(fields, shown_ms, ',');
    CHECK(std::stoll(frame) == rows);
    ++rows;
    if (shown_ms.empty()) continue;
    ++shown;
    const double shown_at = std::stoll(sent) / 1e6 + std::stod(shown_ms);
    CHECK(std::stod(shown_ms) >= std::stod(receive_ms));
    CHECK(shown_at >= previous_shown_at);
    previous_shown_at = shown_at;
  }
  CHECK(rows == kFrames);
  CHECK(shown == s.pngs_written);
}

TEST_CASE("the first frame's latency is reported beside the median, and p90", "[cfd][consumer]") {
  TempFolder folder;
  FrameConsumer::Options options;
  options.output_folder = folder.path().string();
  options.render_every = 0;
  options.contact_sheet_tiles = 0;
  FrameConsumer consumer(options);
  // Receipt times chosen by the test: frame 0 took 900 ms, the others 100-109 ms.
  for (uint32_t n = 0; n < 10; ++n) {
    const auto message = encoded(n);
    const Frame frame = Frame::decode(message);
    const int64_t latency_ns = (n == 0 ? 900 : 100 + n) * 1'000'000LL;
    consumer.on_message(message, frame.send_time_ns + latency_ns);
  }
  const RunSummary s = consumer.finish(10);
  CHECK(s.display == "all");
  CHECK(s.frames_skipped == 0);
  CHECK(s.receive_latency_first_ms == Approx(900));
  CHECK(s.receive_latency_median_ms == Approx(105));
  CHECK(s.receive_latency_p90_ms == Approx(109));
  const RunSummary back = RunSummary::from_record(s.to_record());
  CHECK(back.receive_latency_first_ms == Approx(900));
  CHECK(back.receive_latency_p90_ms == Approx(109));
}
