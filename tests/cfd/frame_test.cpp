#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "frame.h"

using namespace lp::cfd;

namespace {

Frame sample_frame() {
  Frame frame;
  frame.frame_number = 42;
  frame.step = 123456789012ull;
  frame.width = 5;
  frame.height = 3;
  frame.kind = FieldKind::kSpeed;
  frame.send_time_ns = 1'700'000'000'123'456'789;
  for (uint32_t i = 0; i < 15; ++i) frame.values.push_back(0.25f * i - 1.0f);
  frame.values[7] = std::numeric_limits<float>::quiet_NaN();  // "no fluid" survives the trip
  return frame;
}

}  // namespace

TEST_CASE("a frame survives encoding and decoding", "[cfd][frame]") {
  const Frame frame = sample_frame();
  const auto bytes = frame.encode();
  REQUIRE(bytes.size() == Frame::kHeaderBytes + 4 * 15);
  CHECK(bytes[0] == 'L');
  CHECK(bytes[3] == 'F');
  const Frame decoded = Frame::decode(bytes);
  CHECK(decoded.frame_number == 42);
  CHECK(decoded.step == 123456789012ull);
  CHECK(decoded.width == 5);
  CHECK(decoded.height == 3);
  CHECK(decoded.kind == FieldKind::kSpeed);
  CHECK(decoded.send_time_ns == frame.send_time_ns);
  REQUIRE(decoded.values.size() == 15);
  for (size_t i = 0; i < 15; ++i) {
    if (i == 7) {
      CHECK(std::isnan(decoded.values[i]));
    } else {
      CHECK(decoded.values[i] == frame.values[i]);
    }
  }
  CHECK(std::isnan(decoded.at(2, 1)));  // row-major: (x, y) is values[y * width + x]
  CHECK(decoded.at(3, 2) == frame.values[13]);
}

TEST_CASE("the send time can be stamped into an encoded frame", "[cfd][frame]") {
  auto bytes = sample_frame().encode();
  Frame::stamp_send_time(bytes, 77);
  CHECK(Frame::decode(bytes).send_time_ns == 77);
  const int64_t before = realtime_ns();
  Frame::stamp_send_time(bytes, realtime_ns());
  CHECK(Frame::decode(bytes).send_time_ns >= before);
  std::vector<uint8_t> short_buffer(10);
  CHECK_THROWS_AS(Frame::stamp_send_time(short_buffer, 1), FrameError);
}

TEST_CASE("damaged frames are refused with the reason", "[cfd][frame]") {
  const auto good = sample_frame().encode();
  auto damaged = good;

  CHECK_THROWS_WITH(Frame::decode(std::span(good).first(20)), Catch::Contains("shorter than its 40-byte header"));
  damaged[0] ^= 0xff;
  CHECK_THROWS_WITH(Frame::decode(damaged), Catch::Contains("bad magic"));
  damaged = good;
  damaged[4] = 9;
  CHECK_THROWS_WITH(Frame::decode(damaged), Catch::Contains("version 9"));
  damaged = good;
  damaged[6] = 7;
  CHECK_THROWS_WITH(Frame::decode(damaged), Catch::Contains("unknown field kind 7"));
  damaged = good;
  damaged.back() ^= 0x01;  // one flipped bit in the field
  CHECK_THROWS_WITH(Frame::decode(damaged), Catch::Contains("CRC-32"));
  damaged = good;
  damaged.pop_back();
  CHECK_THROWS_WITH(Frame::decode(damaged), Catch::Contains("expected 100"));
  damaged = good;
  damaged[12] = 6;  // width 6: more values than the message holds
  CHECK_THROWS_WITH(Frame::decode(damaged), Catch::Contains("bytes, expected"));
  damaged = good;
  damaged[15] = 0xff;  // width > 16384: refused before any allocation
  CHECK_THROWS_WITH(Frame::decode(damaged), Catch::Contains("out of range"));
  damaged = good;
  damaged[12] = damaged[13] = 0;  // width 0
  CHECK_THROWS_WITH(Frame::decode(damaged), Catch::Contains("out of range"));
}

TEST_CASE("a frame whose values do not fill its size cannot be encoded", "[cfd][frame]") {
  Frame frame = sample_frame();
  frame.values.pop_back();
  CHECK_THROWS_AS(frame.encode(), FrameError);
  CHECK(std::string(field_kind_name(FieldKind::kVorticity)) == "vorticity");
}
