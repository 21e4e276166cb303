// Fuzz target: the MPI front end's wire format (libshim/mpi/wire_format.h, segments.h), header-only
// and pure (no mpi.h): the bodies a peer's engine messages carry. A synchronous send's id at the
// end of a body (strip_sync_id); a collective transfer's segments, the first with the total size
// (TransferAssembler); a segmented point-to-point message, its first segment with the total size
// and its continuations (MessageAssembly), kept or written into a receive buffer of any capacity
// (redirect); and the sender's own cutting (split_transfer, SegmentLayout) of sizes the fuzzer
// picks. The input is an operation byte, then its fields, then the bodies, as a list.
// Beyond "no crash, no sanitizer report" (ASan sees a write past the receive buffer): an assembly
// never holds more than its header announced and, once complete, holds exactly the bytes that came,
// in order (kept, or in the buffer up to its capacity); what split_transfer cuts reassembles to the
// same body; a SegmentLayout's segments carry exactly the message's data, none more than the
// engine's largest message. Memory stays within what the peer actually sent (libFuzzer's malloc
// limit catches an allocation sized by a header alone).
#include <algorithm>
#include <cstring>
#include <vector>

#include "fuzz_input.h"
#include "segments.h"
#include "wire_format.h"

namespace {

using Bytes = std::vector<std::byte>;

// A body of the peer's: a length byte (x 4) then that many bytes.
Bytes body(lp::fuzz::FuzzInput& input) {
  const auto bytes = input.bytes(std::size_t{input.u8()} * 4);
  return {bytes.begin(), bytes.end()};
}

// The first segment: a header of the total (native byte order, as the sender writes it), which
// the fuzzer chooses near the data that follows, or anything; then the data.
Bytes first_segment(lp::fuzz::FuzzInput& input, std::uint64_t& announced) {
  const std::uint8_t how = input.u8();
  Bytes data = body(input);
  announced = how & 0x80 ? input.u64() : data.size() + (how & 0x7f) * 4;
  Bytes segment(lp::mpi::kTransferHeaderSize + data.size());
  lp::mpi::write_segment_header(segment.data(), announced);
  std::copy(data.begin(), data.end(), segment.begin() + lp::mpi::kTransferHeaderSize);
  return segment;
}

void sync_id(lp::fuzz::FuzzInput& input) {
  Bytes b = body(input);
  const Bytes before = b;
  std::uint64_t id = 0;
  if (!lp::mpi::strip_sync_id(b, &id)) {
    LP_FUZZ_CHECK(before.size() < lp::mpi::kSyncIdSize);
    return;
  }
  lp::mpi::append_sync_id(b, id);
  LP_FUZZ_CHECK(b == before);
}

void transfer(lp::fuzz::FuzzInput& input) {
  std::uint64_t announced = 0;
  Bytes first = first_segment(input, announced);
  if (input.u8() & 1) first.resize(std::min<std::size_t>(first.size(), input.u8() % lp::mpi::kTransferHeaderSize));
  lp::mpi::TransferAssembler assembler;
  Bytes expected(first.size() > lp::mpi::kTransferHeaderSize ? first.begin() + lp::mpi::kTransferHeaderSize : first.end(),
                 first.end());
  bool ok = assembler.add(first);
  LP_FUZZ_CHECK(ok == (first.size() >= lp::mpi::kTransferHeaderSize && expected.size() <= announced));
  for (std::size_t n = input.u8() % 8; ok && n > 0 && !assembler.complete(); --n) {
    const Bytes more = body(input);
    ok = assembler.add(more);
    LP_FUZZ_CHECK(ok == (expected.size() + more.size() <= announced));
    if (ok) expected.insert(expected.end(), more.begin(), more.end());
  }
  if (ok && assembler.complete()) LP_FUZZ_CHECK(assembler.take() == expected);
}

void segmented_message(lp::fuzz::FuzzInput& input) {
  std::uint64_t announced = 0;
  Bytes first = first_segment(input, announced);
  const std::uint8_t receive = input.u8();
  const std::size_t capacity = std::size_t{input.u8()} * 8;
  auto assembly = lp::mpi::MessageAssembly::start(first);
  const std::size_t first_data = first.size() - lp::mpi::kTransferHeaderSize;
  LP_FUZZ_CHECK(assembly.has_value() == (first_data <= announced));
  if (!assembly) return;
  LP_FUZZ_CHECK(assembly->total() == announced && assembly->received() == first_data);
  Bytes came(first.begin() + lp::mpi::kTransferHeaderSize, first.end());
  Bytes buffer(capacity + 1, std::byte{0xa5});  // one guard byte past the receive buffer
  const std::size_t redirect_after = receive & 0x80 ? receive & 7 : SIZE_MAX;
  for (std::size_t n = 0, count = input.u8() % 8; n <= count && !assembly->complete(); ++n) {
    if (n == redirect_after) assembly->redirect(buffer.data(), capacity);
    if (n == count) break;
    const Bytes more = body(input);
    const std::uint64_t room = assembly->total() - assembly->received();
    LP_FUZZ_CHECK(assembly->add(more) == (more.size() <= room));
    came.insert(came.end(), more.begin(), more.begin() + static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(room, more.size())));
    LP_FUZZ_CHECK(assembly->received() == came.size() && assembly->received() <= assembly->total());
  }
  LP_FUZZ_CHECK(buffer.back() == std::byte{0xa5});
  if (!assembly->complete()) return;
  if (assembly->redirected()) {
    const std::size_t in_buffer = std::min(capacity, came.size());
    LP_FUZZ_CHECK(std::equal(came.begin(), came.begin() + static_cast<std::ptrdiff_t>(in_buffer), buffer.begin()));
  } else {
    LP_FUZZ_CHECK(assembly->take() == came);
  }
}

void sender_side(lp::fuzz::FuzzInput& input) {
  // split_transfer and TransferAssembler: what one leader cuts, the other puts back together.
  const Bytes b = body(input);
  const std::size_t segment_bytes = lp::mpi::kTransferHeaderSize + 1 + input.u8();
  lp::mpi::TransferAssembler assembler;
  for (const Bytes& segment : lp::mpi::split_transfer(b, segment_bytes)) {
    LP_FUZZ_CHECK(segment.size() <= segment_bytes && !assembler.complete());
    LP_FUZZ_CHECK(assembler.add(segment));
  }
  LP_FUZZ_CHECK(assembler.complete() && assembler.take() == b);
  // SegmentLayout: the data of a message of any size (an MPI count times an extent: below 2^48)
  // through an engine of any largest message.
  const std::uint64_t data = input.u64() >> 16;
  const bool synchronous = input.u8() & 1;
  const std::size_t max_message = input.u8() & 1 ? input.u32() : input.u8();
  const auto layout = lp::mpi::SegmentLayout::plan(data, synchronous, max_message);
  const std::size_t id = synchronous ? lp::mpi::kSyncIdSize : 0;
  if (!layout) {
    LP_FUZZ_CHECK(data + id > max_message);
    return;
  }
  if (!layout->segmented) {
    LP_FUZZ_CHECK(layout->segments() == 1 && layout->data_in(0) == data && data + id <= max_message);
    return;
  }
  const std::uint64_t segments = layout->segments();
  LP_FUZZ_CHECK(segments >= 2);
  LP_FUZZ_CHECK(layout->data_in(0) + lp::mpi::kTransferHeaderSize + id <= max_message);
  // The last segment holds the rest, 1..segment_data bytes; the others are full.
  const std::uint64_t last = layout->data_in(segments - 1);
  LP_FUZZ_CHECK(last >= 1 && last <= layout->segment_data && layout->segment_data <= max_message);
  LP_FUZZ_CHECK(layout->first_data + (segments - 2) * layout->segment_data + last == data);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  lp::fuzz::FuzzInput input(data, size);
  while (!input.empty()) {
    switch (input.u8() % 4) {
      case 0: sync_id(input); break;
      case 1: transfer(input); break;
      case 2: segmented_message(input); break;
      case 3: sender_side(input); break;
    }
  }
  return 0;
}
