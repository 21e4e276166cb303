// Point-to-point messages larger than one engine message (segments.h): the layout's size
// arithmetic, and segments put back together, kept or written in place, with truncation.
#include "segments.h"

#include <catch2/catch.hpp>

#include <numeric>

using namespace lp::mpi;

namespace {

std::vector<std::byte> pattern(std::size_t size) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::byte>((i * 131 + 7) % 251);
  return bytes;
}

// The engine messages' bodies a sender makes of `data` (synchronous id omitted).
std::vector<std::vector<std::byte>> cut(const std::vector<std::byte>& data, const SegmentLayout& layout) {
  std::vector<std::vector<std::byte>> bodies;
  std::size_t at = 0;
  for (std::uint64_t k = 0; k < layout.segments(); ++k) {
    const std::size_t size = layout.data_in(k);
    std::vector<std::byte> body(k == 0 && layout.segmented ? kTransferHeaderSize : 0);
    if (!body.empty()) write_segment_header(body.data(), data.size());
    body.insert(body.end(), data.begin() + static_cast<std::ptrdiff_t>(at),
                data.begin() + static_cast<std::ptrdiff_t>(at + size));
    at += size;
    bodies.push_back(std::move(body));
  }
  REQUIRE(at == data.size());
  return bodies;
}

}  // namespace

TEST_CASE("segment layout: up to the engine's largest message, one message as before") {
  const std::size_t max = 64u << 20;
  for (bool synchronous : {false, true}) {
    const std::size_t id = synchronous ? kSyncIdSize : 0;
    for (std::uint64_t data : {std::uint64_t{0}, std::uint64_t{1024}, std::uint64_t{1} << 20, max - id}) {
      const auto layout = SegmentLayout::plan(data, synchronous, max);
      REQUIRE(layout);
      CHECK_FALSE(layout->segmented);
      CHECK(layout->segments() == 1);
      CHECK(layout->data_in(0) == data);
    }
    const auto over = SegmentLayout::plan(max - id + 1, synchronous, max);
    REQUIRE(over);
    CHECK(over->segmented);
    CHECK(over->first_data + kTransferHeaderSize + id == kMessageSegmentBytes);
    CHECK(over->segment_data == kMessageSegmentBytes);
    CHECK(over->segments() == 5);  // 64 MiB + 1 - id in segments of 16 MiB, the first with header and id
  }
}

TEST_CASE("segment layout: sizes past 2 GiB and 4 GiB, every segment within the engine's limit") {
  const std::size_t max = 64u << 20;
  for (std::uint64_t data : {std::uint64_t{2621440} * 1024, (std::uint64_t{1} << 32) + 5, std::uint64_t{80} << 20}) {
    const auto layout = SegmentLayout::plan(data, true, max);
    REQUIRE(layout);
    REQUIRE(layout->segmented);
    std::uint64_t sum = 0;
    for (std::uint64_t k = 0; k < layout->segments(); ++k) {
      const std::size_t in = layout->data_in(k);
      CHECK(in > 0);
      CHECK(in + (k == 0 ? kTransferHeaderSize + kSyncIdSize : 0) <= std::min(max, kMessageSegmentBytes));
      sum += in;
    }
    CHECK(sum == data);
  }
  // 2.5 GiB: the first segment holds 16 MiB - 16, then 159 full ones and one of 16 bytes.
  const auto big = SegmentLayout::plan(std::uint64_t{2621440} * 1024, true, max);
  CHECK(big->segments() == 161);
  CHECK(big->data_in(160) == 16);
}

TEST_CASE("segment layout: a smaller LONGPIPE_MAX_MESSAGE caps the segments; too small for a header fails") {
  const auto small = SegmentLayout::plan(100000, false, 4096);
  REQUIRE(small);
  CHECK(small->first_data == 4096 - kTransferHeaderSize);
  CHECK(small->segment_data == 4096);
  CHECK(small->segments() == 1 + (100000 - 4088 + 4095) / 4096);
  CHECK_FALSE(SegmentLayout::plan(100, true, kTransferHeaderSize + kSyncIdSize));
  CHECK(SegmentLayout::plan(100, true, kTransferHeaderSize + kSyncIdSize + 1));
}

TEST_CASE("assembly: segments kept and put back together") {
  const auto layout = *SegmentLayout::plan(10000, false, 1000);
  const auto data = pattern(10000);
  auto bodies = cut(data, layout);
  auto assembly = MessageAssembly::start(bodies[0]);
  REQUIRE(assembly);
  CHECK(assembly->total() == 10000);
  for (std::size_t k = 1; k < bodies.size(); ++k) {
    CHECK_FALSE(assembly->complete());
    CHECK(assembly->add(bodies[k]));
  }
  CHECK(assembly->complete());
  CHECK_FALSE(assembly->redirected());
  CHECK(assembly->take() == data);
}

TEST_CASE("assembly: written in place from the match on, also when matched late, truncated past capacity") {
  const auto layout = *SegmentLayout::plan(10000, false, 1000);
  const auto data = pattern(10000);
  const auto bodies = cut(data, layout);
  for (std::size_t capacity : {std::size_t{10000}, std::size_t{20000}, std::size_t{4321}, std::size_t{500}, std::size_t{0}}) {
    for (std::size_t matched_after : {std::size_t{1}, std::size_t{4}}) {
      std::vector<std::byte> buffer(capacity + 16, std::byte{0xee});
      auto assembly = MessageAssembly::start(bodies[0]);
      REQUIRE(assembly);
      for (std::size_t k = 1; k < bodies.size(); ++k) {
        if (k == matched_after) assembly->redirect(buffer.data(), capacity);
        CHECK(assembly->add(bodies[k]));
      }
      REQUIRE(assembly->complete());
      CHECK(assembly->redirected());
      CHECK(assembly->take().empty());  // nothing kept: no second full-size copy
      const std::size_t written = std::min(capacity, data.size());
      CHECK(std::equal(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(written), buffer.begin()));
      CHECK(std::all_of(buffer.begin() + static_cast<std::ptrdiff_t>(written), buffer.end(),
                        [](std::byte b) { return b == std::byte{0xee}; }));  // nothing past what fits
    }
  }
}

TEST_CASE("assembly: malformed segments refused") {
  CHECK_FALSE(MessageAssembly::start(std::vector<std::byte>(kTransferHeaderSize - 1)));
  std::vector<std::byte> first(kTransferHeaderSize + 10);
  write_segment_header(first.data(), 5);  // more data than announced
  CHECK_FALSE(MessageAssembly::start(first));
  write_segment_header(first.data(), 12);
  auto assembly = MessageAssembly::start(first);
  REQUIRE(assembly);
  CHECK_FALSE(assembly->add(pattern(3)));  // one byte too many: dropped
  CHECK(assembly->complete());
  CHECK(assembly->take().size() == 12);
}

TEST_CASE("assembly: a header's total is not an allocation: memory follows the bytes that came") {
  // Found by the mpi_wire fuzz target: a first segment announcing 4 GiB (or 2^64 - 1) made the
  // first continuation reserve all of it, which fails (std::bad_alloc, or an abort under ASan).
  for (const std::uint64_t total : {std::uint64_t{1} << 40, ~std::uint64_t{0}}) {
    std::vector<std::byte> first(kTransferHeaderSize + 4);
    write_segment_header(first.data(), total);
    auto assembly = MessageAssembly::start(first);
    REQUIRE(assembly);
    for (int i = 0; i < 4; ++i) CHECK(assembly->add(pattern(1000)));
    CHECK(assembly->received() == 4004);
    CHECK_FALSE(assembly->complete());
    const std::vector<std::byte> kept = assembly->take();
    CHECK(kept.size() == 4004);
    CHECK(kept.capacity() < 16 * 4004);
  }
}
