// The consumer's logic without PVM or MPI: decode, check order, render, summarise; its options.
#include <catch2/catch.hpp>

#include <filesystem>

#include "consumer_settings.h"
#include "contact_sheet.h"
#include "frame_consumer.h"
#include "temp_folder.h"

using namespace lp::cfd;

namespace {

std::vector<uint8_t> encoded(uint32_t number) {
  Frame frame;
  frame.frame_number = number;
  frame.step = 10 * number;
  frame.width = 32;
  frame.height = 16;
  for (int i = 0; i < 32 * 16; ++i) frame.values.push_back(static_cast<float>((i % 32) - 16) * (number + 1));
  frame.send_time_ns = realtime_ns();
  return frame.encode();
}

}  // namespace

TEST_CASE("a clean run: every frame rendered, in order, complete, with a contact sheet", "[cfd][consumer]") {
  TempFolder folder;
  FrameConsumer::Options options;
  options.output_folder = folder / "out";
  options.consumer = 2;
  options.host = "site-b";
  FrameConsumer consumer(options);
  for (uint32_t i = 0; i < 6; ++i) {
    const auto message = encoded(i);  // stamped before the receive time is taken
    consumer.on_message(message, realtime_ns());
  }
  const RunSummary s = consumer.finish(6);
  CHECK(s.consumer == 2);
  CHECK(s.host == "site-b");
  CHECK(s.frames_received == 6);
  CHECK(s.in_order);
  CHECK(s.complete);
  CHECK(s.pngs_written == 6);
  CHECK(s.megabytes == Approx(6 * (40 + 4 * 32 * 16) / 1e6));
  CHECK(s.receive_latency_max_ms >= 0);
  CHECK(s.end_to_end_frames_per_second > 0);
  CHECK(s.display_latency_median_ms >= s.receive_latency_median_ms);
  for (int i = 0; i < 6; ++i) CHECK(std::filesystem::exists(folder / ("out/frame-00000" + std::to_string(i) + ".png")));
  REQUIRE(s.contact_sheet == folder / "out/contact-sheet.png");
  const RgbImage sheet = RgbImage::read_png(s.contact_sheet);
  CHECK(sheet.width() == ContactSheet::kGap + 3 * (32 + ContactSheet::kGap));
  CHECK(sheet.height() == ContactSheet::kGap + 2 * (16 + ContactSheet::kGap));
  CHECK(sheet.luminance_variance() > 100);
}

TEST_CASE("corrupt, missing, duplicated and reordered frames are all reported", "[cfd][consumer]") {
  TempFolder folder;
  FrameConsumer::Options options;
  options.output_folder = folder.path().string();
  options.render_every = 2;
  options.contact_sheet_tiles = 0;
  FrameConsumer consumer(options);
  auto damaged = encoded(1);
  damaged[60] ^= 0x10;
  consumer.on_message(encoded(0), realtime_ns());
  consumer.on_message(damaged, realtime_ns());       // frame 1 arrives broken
  consumer.on_message(encoded(3), realtime_ns());
  consumer.on_message(encoded(2), realtime_ns());    // late
  consumer.on_message(encoded(2), realtime_ns());    // again
  const RunSummary s = consumer.finish(5);
  CHECK(s.frames_received == 4);
  CHECK(s.corrupt == 1);
  CHECK(s.missing == 2);  // 1 (corrupt) and 4 (never came)
  CHECK(s.duplicates == 1);
  CHECK(s.out_of_order == 2);
  CHECK_FALSE(s.in_order);
  CHECK_FALSE(s.complete);
  CHECK(s.pngs_written == 3);  // frames 0, 2 and 2 again: every 2nd frame number
  CHECK(s.contact_sheet.empty());
}

TEST_CASE("a consumer needs a place for its pictures and sane options", "[cfd][consumer]") {
  FrameConsumer::Options options;
  CHECK_THROWS_WITH(FrameConsumer(options), Catch::Contains("output folder"));
  TempFolder folder;
  options.output_folder = folder.path().string();
  options.slow_ms = -1;
  CHECK_THROWS(FrameConsumer(options));
}

TEST_CASE("with drops allowed, gaps are dropped by policy; anything else still fails", "[cfd][consumer]") {
  TempFolder folder;
  FrameConsumer::Options options;
  options.output_folder = folder.path().string();
  options.render_every = 0;
  options.contact_sheet_tiles = 0;
  options.drops_allowed = true;
  SECTION("gaps only: the run delivered what the policy allows") {
    FrameConsumer consumer(options);
    for (uint32_t n : {0u, 3u, 4u, 7u}) consumer.on_message(encoded(n), realtime_ns());
    const RunSummary s = consumer.finish(9);
    CHECK(s.missing == 5);
    CHECK(s.dropped_by_policy == 5);
    CHECK_FALSE(s.complete);
    CHECK(s.delivered_as_configured());
    CHECK(s.delivery() == "5 dropped by policy");
    CHECK(RunSummary::from_record(s.to_record()).dropped_by_policy == 5);
  }
  SECTION("a gap and a reordered frame: no policy reorders") {
    FrameConsumer consumer(options);
    for (uint32_t n : {0u, 3u, 2u}) consumer.on_message(encoded(n), realtime_ns());
    const RunSummary s = consumer.finish(4);
    CHECK(s.dropped_by_policy == 0);
    CHECK_FALSE(s.delivered_as_configured());
    CHECK(s.delivery() == "INCOMPLETE");
  }
  SECTION("a gap and a corrupt frame: no policy corrupts") {
    FrameConsumer consumer(options);
    auto damaged = encoded(1);
    damaged[60] ^= 0x10;
    consumer.on_message(encoded(0), realtime_ns());
    consumer.on_message(damaged, realtime_ns());
    CHECK_FALSE(consumer.finish(3).delivered_as_configured());
  }
  SECTION("without drops allowed, a gap fails") {
    options.drops_allowed = false;
    FrameConsumer consumer(options);
    for (uint32_t n : {0u, 2u}) consumer.on_message(encoded(n), realtime_ns());
    const RunSummary s = consumer.finish(3);
    CHECK(s.dropped_by_policy == 0);
    CHECK_FALSE(s.delivered_as_configured());
  }
}

TEST_CASE("each consumer's options from the producer's settings, and their trip in a message", "[cfd][consumer]") {
  ConsumerSettings settings;
  settings.consumers = 2;
  settings.output_folder = "/out";
  settings.render_every = 3;
  settings.slow_ms = {0, 250};
  settings.zoom = 2;
  settings.drops_allowed = true;
  settings.check();
  const FrameConsumer::Options second = settings.for_consumer(1);
  CHECK(second.output_folder == "/out/consumer-1");
  CHECK(second.slow_ms == 250);
  CHECK(settings.for_consumer(0).slow_ms == 0);
  const FrameConsumer::Options back = FrameConsumer::Options::from_record(Record::from_lines(second.to_record().to_lines()));
  CHECK(back.consumer == 1);
  CHECK(back.output_folder == "/out/consumer-1");
  CHECK(back.render_every == 3);
  CHECK(back.slow_ms == 250);
  CHECK(back.zoom == 2);
  CHECK(back.drops_allowed);
  CHECK_THROWS_WITH(FrameConsumer::Options::from_record(Record::from_lines("zoom=2\n")), Catch::Contains("output_folder"));
  settings.slow_ms = {0, 1, 2};
  CHECK_THROWS_WITH(settings.check(), Catch::Contains("--slow-ms"));
}
