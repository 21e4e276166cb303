// Fuzz target: the frame decoder (libshim/core/wire_frame.*) and the frame opener
// (libshim/core/frame_cipher.*), what every connection runs on a peer's bytes before and after
// authentication. The input is split into reads of fuzzer-chosen sizes and fed to a FrameReader;
// every frame it returns is decoded by its type's decoder. The mode byte chooses the connection's
// phase:
//   - unsealed (the handshake's frames), with the pre-authentication or the authenticated limits;
//   - sealed (every frame after the handshake): the reader expects tags and each frame is opened
//     with a FrameCipher of traffic keys derived as the engine derives them (fixed nonces), before
//     it is decoded, as Connection::open does. A frame that fails to open ends the connection, as
//     the engine's note_refused_frame (count it, close the connection) does, and no later frame
//     opens. The bytes come either from a stranger (taken as they are: nothing may open) or from a
//     peer holding the key: the harness seals the input's frames first, as that peer would, and
//     may alter one byte of the sealed stream in transit.
// Beyond "no crash, no sanitizer report": MalformedFrame is the only exception allowed; each
// accepted frame encodes back to exactly the payload it came from (CLOSE: after its text was made
// printable); a frame that opens is exactly the frame the key holder sealed at that place and
// position in the sequence, with no altered byte in it.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "security/frame_cipher.h"
#include "fuzz_input.h"
#include "wire/wire_frame.h"

namespace {

using lp::FrameType;

// Payload limits the fuzzer switches between: a connection before authentication, and after it
// with a small LONGPIPE_MAX_MESSAGE (large limits only make the fuzzer allocate).
constexpr std::size_t kSmallMaxMessage = 4096;

// Bits of the input's mode byte.
constexpr std::uint8_t kAuthenticated = 1;  // DATA may be up to kSmallMaxMessage
constexpr std::uint8_t kSealed = 2;         // every frame carries a tag and is opened before decoding
constexpr std::uint8_t kIntegrityOnly = 4;  // sealed with Protection::kIntegrityOnly (else kEncrypt)
constexpr std::uint8_t kKeyHolder = 8;      // sealed: the peer holds the key (the harness seals)

// The traffic key of the peer's direction, derived as the handshake derives it (fixed nonces).
const lp::TrafficKey& peer_key(lp::Protection protection) {
  static const auto derive = [](lp::Protection p) {
    return lp::derive_traffic_keys("fuzzing key", std::vector<std::byte>(lp::kNonceSize, std::byte{1}),
                                   std::vector<std::byte>(lp::kNonceSize, std::byte{2}), p)
        .dialler_to_acceptor;
  };
  static const lp::TrafficKey encrypt = derive(lp::Protection::kEncrypt);
  static const lp::TrafficKey integrity_only = derive(lp::Protection::kIntegrityOnly);
  return protection == lp::Protection::kEncrypt ? encrypt : integrity_only;
}

// One frame the key holder sealed: where it lies in the sealed stream, and what it said.
struct SealedFrame {
  std::size_t start = 0;
  std::size_t size = 0;  // header, payload and tag
  std::uint8_t type = 0;
  std::vector<std::byte> payload;
};

// The key holder's side: the input is a list of frames (header, then as many payload bytes as the
// header's length says, or what is left); each is sealed in turn, which sets its length to the
// real one. Trailing bytes too few for a header are sent as they are (a truncated frame).
std::vector<std::byte> seal_as_key_holder(std::span<const std::byte> input, lp::FrameCipher& sealer,
                                          std::vector<SealedFrame>& sealed) {
  std::vector<std::byte> out;
  std::size_t offset = 0;
  while (input.size() - offset >= lp::kFrameHeaderSize) {
    const auto header = input.subspan(offset, lp::kFrameHeaderSize);
    offset += lp::kFrameHeaderSize;
    std::size_t length = 0;
    for (std::size_t i = 4; i < 8; ++i) length = length << 8 | static_cast<std::uint8_t>(header[i]);
    const auto payload = input.subspan(offset, std::min(length, input.size() - offset));
    offset += payload.size();
    SealedFrame frame{out.size(), 0, static_cast<std::uint8_t>(header[3]), {payload.begin(), payload.end()}};
    out.insert(out.end(), header.begin(), header.end());
    out.insert(out.end(), payload.begin(), payload.end());
    sealer.seal_frame(out, frame.start);
    frame.size = out.size() - frame.start;
    sealed.push_back(std::move(frame));
  }
  out.insert(out.end(), input.begin() + static_cast<std::ptrdiff_t>(offset), input.end());
  return out;
}

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
      lp::encode_challenge(again, challenge.nonce, challenge.protection, challenge.carrier_offer);
      LP_FUZZ_CHECK(same(frame.payload, payload_of(again)));
      return;
    }
    case FrameType::kAuth:
    case FrameType::kIdentify: {
      const std::size_t size = frame.type == FrameType::kAuth ? lp::kMacSize : lp::kIdentifyPayloadSize;
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
    case FrameType::kRepair: {
      const lp::RepairFrame repair = lp::decode_repair(frame.payload);
      LP_FUZZ_CHECK(repair.data_count >= 1 && repair.data_count + repair.index <= 255);
      LP_FUZZ_CHECK(repair.symbol.size() >= 3 && repair.symbol.size() <= lp::kMaxRepairSymbol);
      lp::encode_repair(again, repair);
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
  const bool authenticated = mode & kAuthenticated;
  const bool sealed = mode & kSealed;
  const bool key_holder = sealed && (mode & kKeyHolder);
  const lp::Protection protection = mode & kIntegrityOnly ? lp::Protection::kIntegrityOnly : lp::Protection::kEncrypt;
  // Key holder: 1 + the offset of the byte altered in transit (0: none).
  const std::size_t tamper = key_holder ? input.u16() : 0;

  std::vector<SealedFrame> sealed_frames;
  std::vector<std::byte> stream;
  if (key_holder) {
    lp::FrameCipher sealer(peer_key(protection), protection, lp::FrameCipher::Use::kSeal);
    stream = seal_as_key_holder(input.rest(), sealer, sealed_frames);
  } else {
    const auto rest = input.rest();
    stream.assign(rest.begin(), rest.end());
  }
  const std::size_t altered = tamper != 0 && !stream.empty() ? (tamper - 1) % stream.size() : stream.size();
  if (altered < stream.size()) stream[altered] ^= std::byte{0x01};

  lp::FrameReader reader(lp::kMaxHandshakePayload);
  if (authenticated) reader.set_max_payload(lp::kSequenceSize + kSmallMaxMessage + lp::kMessageTrailerSize);
  if (sealed) reader.set_tag_size(lp::kTagSize);
  std::optional<lp::FrameCipher> opener;  // only when sealed: setting up a cipher costs more than most inputs
  if (sealed) opener.emplace(peer_key(protection), protection, lp::FrameCipher::Use::kOpen);
  const std::size_t limit = authenticated ? lp::kSequenceSize + kSmallMaxMessage + lp::kMessageTrailerSize
                                          : lp::kMaxHandshakePayload;
  std::size_t offset = 0;    // bytes handed to the reader
  std::size_t consumed = 0;  // bytes of the frames it returned
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
        const std::size_t start = consumed;
        consumed += lp::kFrameHeaderSize + frame->payload.size() + frame->tag.size();
        LP_FUZZ_CHECK(frame->payload.size() <= limit);
        LP_FUZZ_CHECK(frame->tag.size() == (sealed ? lp::kTagSize : 0));
        if (sealed) {
          const std::uint64_t position = opener->frames();
          if (!opener->open(frame->header, frame->payload, frame->tag)) {
            // The engine counts it and closes the connection: nothing more is read from it. The
            // opener's sequence is lost for good: not even the next frame could open.
            LP_FUZZ_CHECK(!opener->open(frame->header, frame->payload, frame->tag));
            return 0;
          }
          // Only the key holder's frames open, each at its place, untouched.
          LP_FUZZ_CHECK(key_holder && position < sealed_frames.size());
          const SealedFrame& original = sealed_frames[position];
          LP_FUZZ_CHECK(original.start == start && original.size == consumed - start);
          LP_FUZZ_CHECK(altered < start || altered >= consumed);
          LP_FUZZ_CHECK(static_cast<std::uint8_t>(frame->type) == original.type);
          LP_FUZZ_CHECK(same(frame->payload, original.payload));
        }
        decode_and_reencode(*frame);
      }
    }
  } catch (const lp::MalformedFrame&) {
    // The engine closes that connection: the expected outcome for most inputs.
  }
  return 0;
}
