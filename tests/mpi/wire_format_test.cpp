// The synchronous-send id appended to a body and stripped again; the collectives' segmented
// transfers; CommunicatorInfo's routing.
#include "wire_format.h"

#include <catch2/catch.hpp>

#include "communicator_info.h"

TEST_CASE("sync id: appended and stripped, the body unchanged") {
  std::vector<std::byte> body{std::byte{1}, std::byte{2}, std::byte{3}};
  lp::mpi::append_sync_id(body, 0x0123456789abcdefULL);
  CHECK(body.size() == 3 + lp::mpi::kSyncIdSize);
  std::uint64_t id = 0;
  REQUIRE(lp::mpi::strip_sync_id(body, &id));
  CHECK(id == 0x0123456789abcdefULL);
  CHECK(body == std::vector<std::byte>{std::byte{1}, std::byte{2}, std::byte{3}});
  std::vector<std::byte> short_body(lp::mpi::kSyncIdSize - 1);
  CHECK_FALSE(lp::mpi::strip_sync_id(short_body, &id));
}

namespace {
std::vector<std::byte> counting_bytes(std::size_t size) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::byte>(i * 7 + 3);
  return bytes;
}
}  // namespace

TEST_CASE("transfer: segments fit the small-message stream and reassemble to the same bytes") {
  using namespace lp::mpi;
  CHECK(transfer_segment_bytes(2, 32768) == 32768 - kSegmentHeadroom);
  CHECK(transfer_segment_bytes(1, 32768) == kDefaultSegmentBytes);  // no small-message stream
  CHECK(transfer_segment_bytes(2, 0) == kDefaultSegmentBytes);      // striping
  const std::size_t segment = 1000;
  for (std::size_t size : {std::size_t{0}, std::size_t{1}, segment - kTransferHeaderSize,
                           segment - kTransferHeaderSize + 1, std::size_t{10 * segment + 17}}) {
    const std::vector<std::byte> body = counting_bytes(size);
    const auto segments = split_transfer(body, segment);
    REQUIRE_FALSE(segments.empty());
    TransferAssembler transfer;
    for (const auto& piece : segments) {
      CHECK(piece.size() <= segment);
      CHECK_FALSE(transfer.complete());
      REQUIRE(transfer.add(piece));
    }
    CHECK(transfer.complete());
    CHECK(transfer.take() == body);
    CHECK(segments.size() == (size + kTransferHeaderSize + segment - 1) / segment);
  }
}

TEST_CASE("transfer: a short first segment or bytes beyond the announced size are refused") {
  using namespace lp::mpi;
  TransferAssembler too_short;
  CHECK_FALSE(too_short.add(std::vector<std::byte>(kTransferHeaderSize - 1)));
  auto segments = split_transfer(counting_bytes(10), 1000);
  REQUIRE(segments.size() == 1);
  segments[0].push_back(std::byte{0});  // one byte more than the header says
  TransferAssembler too_long;
  CHECK_FALSE(too_long.add(segments[0]));
}

TEST_CASE("transfer: a header's total is not an allocation: memory follows the bytes that came") {
  // Found by the mpi_wire fuzz target: the first segment's total (2^64 - 1 here) was reserved at once.
  using namespace lp::mpi;
  std::vector<std::byte> first(kTransferHeaderSize);
  const std::uint64_t total = ~std::uint64_t{0};
  std::memcpy(first.data(), &total, sizeof total);
  first.resize(kTransferHeaderSize + 100);
  TransferAssembler transfer;
  REQUIRE(transfer.add(first));
  REQUIRE(transfer.add(counting_bytes(1000)));
  CHECK_FALSE(transfer.complete());
  const std::vector<std::byte> body = transfer.take();
  CHECK(body.size() == 1100);
  CHECK(body.capacity() < 16 * 1100);
}

TEST_CASE("communicator: peers at another site go over LongPipe, the others stay on Open MPI") {
  const std::vector<int> site_of_world{0, 0, 1, 1};
  // A split {1, 3, 0}: peer 0 = world 1, peer 1 = world 3, peer 2 = world 0. Seen from site 0.
  const lp::mpi::CommunicatorInfo info(5, {1, 3, 0}, site_of_world, 0);
  CHECK(info.spans_sites);
  CHECK(info.remote_world_rank(0) == -1);
  CHECK(info.remote_world_rank(1) == 3);
  CHECK(info.remote_world_rank(2) == -1);
  CHECK(info.remote_world_rank(3) == -1);   // out of range: Open MPI reports it
  CHECK(info.remote_world_rank(-1) == -1);  // MPI_ANY_SOURCE / MPI_PROC_NULL
  CHECK(info.peer_rank_of(3) == 1);
  CHECK(info.peer_rank_of(2) == -1);

  const lp::mpi::CommunicatorInfo local(6, {0, 1}, site_of_world, 0);
  CHECK_FALSE(local.spans_sites);
  CHECK(local.remote_world_rank(1) == -1);
  // A process of another world (MPI_Comm_spawn) is never routed over LongPipe.
  const lp::mpi::CommunicatorInfo spawned(7, {-1, 2}, site_of_world, 0);
  CHECK(spawned.remote_world_rank(0) == -1);
  CHECK(spawned.remote_world_rank(1) == 2);
}
