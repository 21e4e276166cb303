// Fuzz target: the frame decoder (libshim/core/wire_frame.*), what every connection runs on a peer's
// bytes before and after authentication. The input is split into reads of fuzzer-chosen sizes and
// fed to a FrameReader; every frame it returns is decoded by its type's decoder. Beyond "no crash,
// no sanitizer report", each decoded frame must encode back to exactly the payload it came from
// (CLOSE: after its text was made printable), and MalformedFrame is the only exception allowed.
#include <cstring>
#include <vector>

#include "wire_frame.h"
#include "fuzz_input.h"

namespace {

using lp::FrameType;

// Payload limits the fuzzer switches between: a connection before authentication, and after it
// with a small LONGPIPE_MAX_MESSAGE (large limits only make the fuzzer allocate).
constexpr std::size_t kSmallMaxMessage = 4096;

std::vector<std::byte> payload_of(const std::vector<std::byte>& frame) {
  return {frame.begin() + static_cast<std::ptrdiff_t>(lp::kFrameHeaderSize), frame.end()};
}

bool same(std::span<const std::byte> a, const std::vector<std::byte>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

// Decodes one frame as the engine would and checks that it encodes back to the same payload.
void decode_and_reencode(const lp::FrameView& frame) {
  std::vector<std::byte> again;
  switch (frame.type) {
    case FrameType::kHello: {
      const lp::HelloFrame hello = lp::decode_hello(frame.payload);
      lp::encode_hello(again, hello.nonce, hello.stream, hello.protection, hello.endpoint);
      LP_FUZZ_CHECK(same(frame.payload, payload_of(again)));
      return;
    }
    case FrameType::kChallenge: {
      const lp::ChallengeFrame challenge = lp::decode_challenge(frame.payload);
      lp::encode_challenge(again, challenge.nonce, challenge.protection);
      LP_FUZZ_CHECK(same(frame.payload, payload_of(again)));
      return;
    }
    case FrameType::kAuth:
    case FrameType::kIdentify: {
      const std::size_t size = frame.type == FrameType::kAuth ? lp::kMacSize : lp::kIdentityTokenSize;
      const auto bytes = lp::decode_fixed(frame.payload, size, lp::frame_type_name(frame.type));
      lp::encode_fixed(again, frame.type, bytes);
      LP_FUZZ_CHECK(same(frame.payload, payload_of(again)));
      return;
    }
    case FrameType::kData: {
      const lp::DataFrame data = lp::decode_data(frame.payload, kSmallMaxMessage);
      LP_FUZZ_CHECK(data.message.size() >= lp::kMessageTrailerSize);
      LP_FUZZ_CHECK(data.message.size() - lp::kMessageTrailerSize <= kSmallMaxMessage);
      lp::encode_data(again, data.sequence, data.message);
      LP_FUZZ_CHECK(same(frame.payload, payload_of(again)));
      return;
    }
    case FrameType::kAck: {
      const lp::AckFrame ack = lp::decode_ack(frame.payload);
      LP_FUZZ_CHECK(ack.ranges.size() <= lp::kMaxAckRanges);
      for (const auto& range : ack.ranges) LP_FUZZ_CHECK(range.begin >= ack.cumulative && range.end > range.begin);
      lp::encode_ack(again, ack);
      LP_FUZZ_CHECK(same(frame.payload, payload_of(again)));
      return;
    }
    case FrameType::kKeepalive:
      LP_FUZZ_CHECK(frame.payload.empty());
      return;
    case FrameType::kClose: {
      const lp::CloseFrame close = lp::decode_close(frame.payload);
      for (char c : close.text) LP_FUZZ_CHECK(c >= ' ' && c <= '~');
      lp::encode_close(again, close.reason, close.text);
      // The text was made printable; the rest must be as it came.
      LP_FUZZ_CHECK(again.size() - lp::kFrameHeaderSize == frame.payload.size());
      LP_FUZZ_CHECK(again[lp::kFrameHeaderSize] == frame.payload[0]);
      return;
    }
  }
  LP_FUZZ_CHECK(!"FrameReader returned an unknown frame type");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  lp::fuzz::FuzzInput input(data, size);
  const std::uint8_t mode = input.u8();
  const std::uint8_t read_seed = input.u8();
  const bool authenticated = mode & 1;
  lp::FrameReader reader(lp::kMaxHandshakePayload);
  if (authenticated) reader.set_max_payload(lp::kSequenceSize + kSmallMaxMessage + lp::kMessageTrailerSize);
  const std::span<const std::byte> stream = input.rest();
  std::size_t offset = 0;
  unsigned read_size = read_seed;
  try {
    while (offset < stream.size()) {
      // Reads of 1..64 bytes, varying: a frame header or payload split anywhere.
      read_size = read_size * 1103515245u + 12345u;
      std::size_t chunk = 1 + (read_size >> 16) % 64;
      if (chunk > stream.size() - offset) chunk = stream.size() - offset;
      auto area = reader.write_area(chunk);
      LP_FUZZ_CHECK(area.size() >= chunk);
      std::memcpy(area.data(), stream.data() + offset, chunk);
      reader.commit(chunk);
      offset += chunk;
      while (auto frame = reader.next()) {
        const std::size_t limit = authenticated ? lp::kSequenceSize + kSmallMaxMessage + lp::kMessageTrailerSize
                                                : lp::kMaxHandshakePayload;
        LP_FUZZ_CHECK(frame->payload.size() <= limit);
        decode_and_reencode(*frame);
      }
    }
  } catch (const lp::MalformedFrame&) {
    // The engine closes that connection: the expected outcome for most inputs.
  }
  return 0;
}
