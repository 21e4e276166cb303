// SegmentedArrivals (libshim/mpi/segment_arrivals.h): large messages reassembled from their
// segments with fake messages and receives, no MPI, no engine. Sources (world ranks) 4 and 5 send
// over separate sessions, so their segments interleave; each source's own come in order.
#include "segment_arrivals.h"

#include <catch2/catch.hpp>

#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "receive_matcher.h"

using lp::mpi::ArrivedMessage;
using lp::mpi::delivered_size;
using lp::mpi::SegmentEvent;
using lp::mpi::write_segment_header;

namespace {

struct FakeReceive {
  std::string name;
};
using Arrivals = lp::mpi::SegmentedArrivals<FakeReceive>;

std::vector<std::byte> bytes(std::size_t count, int first) {
  std::vector<std::byte> data(count);
  for (std::size_t i = 0; i < count; ++i) data[i] = static_cast<std::byte>((first + static_cast<int>(i)) & 0xff);
  return data;
}

// A segmented message's first engine message: the total, then its first data bytes.
std::shared_ptr<ArrivedMessage> first_segment(std::uint64_t total, const std::vector<std::byte>& data) {
  auto message = std::make_shared<ArrivedMessage>();
  message->body.resize(lp::mpi::kTransferHeaderSize);
  write_segment_header(message->body.data(), total);
  message->body.insert(message->body.end(), data.begin(), data.end());
  return message;
}

std::vector<std::byte> slice(const std::vector<std::byte>& data, std::size_t from, std::size_t count) {
  return {data.begin() + static_cast<std::ptrdiff_t>(from), data.begin() + static_cast<std::ptrdiff_t>(from + count)};
}

}  // namespace

TEST_CASE("segments from two sources interleave; each message is put back together") {
  Arrivals arrivals;
  const auto a = bytes(30, 1), b = bytes(30, 101);
  auto from4 = first_segment(30, slice(a, 0, 10));
  auto from5 = first_segment(30, slice(b, 0, 10));
  REQUIRE(arrivals.begin(4, from4));
  REQUIRE(arrivals.begin(5, from5));
  CHECK(from4->size == 30);
  CHECK_FALSE(from4->complete);
  FakeReceive r4{"r4"}, r5{"r5"};
  REQUIRE(arrivals.bind(4, from4, &r4, false, nullptr, 0));  // a derived type: assembled in memory
  CHECK(arrivals.add(5, slice(b, 10, 10)).event == SegmentEvent::kNone);
  CHECK(arrivals.add(4, slice(a, 10, 10)).event == SegmentEvent::kNone);
  auto done5 = arrivals.add(5, slice(b, 20, 10));  // complete, but nobody took it yet: still unexpected
  CHECK(done5.event == SegmentEvent::kNone);
  CHECK(done5.receive == nullptr);
  CHECK(from5->complete);
  CHECK(from5->body == b);
  auto done4 = arrivals.add(4, slice(a, 20, 10));
  CHECK(done4.event == SegmentEvent::kCompleted);
  CHECK(done4.receive == &r4);
  CHECK(from4->complete);
  CHECK_FALSE(from4->in_place);
  CHECK(from4->body == a);
  CHECK(arrivals.size() == 0);
}

TEST_CASE("a flat receive gets the segments straight into its buffer, also those kept before it matched") {
  Arrivals arrivals;
  const auto data = bytes(25, 7);
  auto message = first_segment(25, slice(data, 0, 5));
  REQUIRE(arrivals.begin(4, message));
  CHECK(arrivals.add(4, slice(data, 5, 10)).event == SegmentEvent::kNone);  // kept: no receive yet
  std::vector<std::byte> buffer(25);
  FakeReceive r{"flat"};
  REQUIRE(arrivals.bind(4, message, &r, true, buffer.data(), buffer.size()));
  auto done = arrivals.add(4, slice(data, 15, 10));
  CHECK(done.event == SegmentEvent::kCompleted);
  CHECK(done.receive == &r);
  CHECK(message->in_place);
  CHECK(message->body.empty());
  CHECK(buffer == data);
}

TEST_CASE("a receive smaller than the message keeps what fits: truncation") {
  Arrivals arrivals;
  const auto data = bytes(40, 3);
  auto message = first_segment(40, slice(data, 0, 16));
  REQUIRE(arrivals.begin(5, message));
  std::vector<std::byte> buffer(24, std::byte{0xee});
  std::vector<std::byte> guard(8, std::byte{0xee});
  FakeReceive r{"small"};
  REQUIRE(arrivals.bind(5, message, &r, true, buffer.data(), 20));  // room for 20 bytes only
  CHECK(arrivals.add(5, slice(data, 16, 16)).event == SegmentEvent::kNone);
  CHECK(arrivals.add(5, slice(data, 32, 8)).event == SegmentEvent::kCompleted);
  CHECK(slice(buffer, 0, 20) == slice(data, 0, 20));
  CHECK(slice(buffer, 20, 4) == slice(guard, 0, 4));  // nothing past the room is written
  const auto size = delivered_size(message->size, 20);
  CHECK(size.bytes == 20);
  CHECK(size.truncated);
}

TEST_CASE("a new message from a source abandons its message in progress; the other source goes on") {
  Arrivals arrivals;
  const auto data = bytes(30, 9);
  auto cut = first_segment(30, slice(data, 0, 10));
  auto other = first_segment(20, slice(data, 0, 10));
  REQUIRE(arrivals.begin(4, cut));
  REQUIRE(arrivals.begin(5, other));
  FakeReceive r{"took the cut one"};
  REQUIRE(arrivals.bind(4, cut, &r, false, nullptr, 0));
  CHECK(arrivals.abandon(4) == &r);  // its sender failed halfway: the receive fails
  auto next = first_segment(12, slice(data, 0, 12));  // complete in one engine message
  REQUIRE(arrivals.begin(4, next));
  CHECK(next->complete);
  CHECK(next->body == slice(data, 0, 12));
  CHECK(arrivals.add(4, slice(data, 10, 10)).event == SegmentEvent::kNone);  // the rest of the cut one: dropped
  CHECK_FALSE(cut->complete);
  CHECK(arrivals.in_progress(5));
  FakeReceive r5{"r5"};
  REQUIRE(arrivals.bind(5, other, &r5, false, nullptr, 0));
  CHECK(arrivals.add(5, slice(data, 10, 10)).receive == &r5);
}

TEST_CASE("a receive that takes an unexpected message cut short is told at once") {
  Arrivals arrivals;
  const auto data = bytes(30, 0);
  auto cut = first_segment(30, slice(data, 0, 10));
  REQUIRE(arrivals.begin(4, cut));
  CHECK(arrivals.abandon(4) == nullptr);  // nobody had taken it
  FakeReceive r{"late"};
  CHECK_FALSE(arrivals.bind(4, cut, &r, false, nullptr, 0));
  // Also when a newer message of the same source is in progress.
  auto newer = first_segment(30, slice(data, 0, 10));
  REQUIRE(arrivals.begin(4, newer));
  CHECK_FALSE(arrivals.bind(4, cut, &r, false, nullptr, 0));
  CHECK(arrivals.bind(4, newer, &r, false, nullptr, 0));
}

TEST_CASE("more data than the header announced abandons the message and fails its receive") {
  Arrivals arrivals;
  const auto data = bytes(30, 0);
  auto message = first_segment(20, slice(data, 0, 10));
  REQUIRE(arrivals.begin(4, message));
  FakeReceive r{"r"};
  REQUIRE(arrivals.bind(4, message, &r, false, nullptr, 0));
  auto outcome = arrivals.add(4, slice(data, 10, 15));
  CHECK(outcome.event == SegmentEvent::kMalformed);
  CHECK(outcome.receive == &r);
  CHECK_FALSE(arrivals.in_progress(4));
}

TEST_CASE("a first segment shorter than its header or larger than its total is refused") {
  Arrivals arrivals;
  auto shorter = std::make_shared<ArrivedMessage>();
  shorter->body = bytes(3, 0);
  CHECK_FALSE(arrivals.begin(4, shorter));
  auto larger = first_segment(4, bytes(8, 0));
  CHECK_FALSE(arrivals.begin(4, larger));
  CHECK(arrivals.size() == 0);
}
