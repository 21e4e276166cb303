// Fuzz target: the handshake state machine (libshim/core/handshake.*), fed a peer's bytes as the
// engine feeds it: split into reads of fuzzer-chosen sizes, cut into frames by a FrameReader with
// the pre-authentication payload limit, each frame handed to Handshake::on_frame(). Either side:
// an acceptor (the peer dialled us: HELLO, then a proof) or a dialler (we sent HELLO: CHALLENGE,
// then the server's proof), with or without 0-RTT data in the dialler's first flight. Invariants beyond "no crash, no sanitizer report":
//   - only MalformedFrame or std::invalid_argument (a bad endpoint in HELLO) escape;
//   - bytes that do not know the key never establish a session (they cannot forge the HMAC);
//   - every frame the handshake answers with is well formed (it decodes with the same decoders).
#include <cstring>
#include <span>
#include <stdexcept>
#include <vector>

#include "security/authenticator.h"
#include "security/early_gate.h"
#include "security/frame_cipher.h"
#include "fuzz_input.h"
#include "security/handshake.h"
#include "wire/wire_frame.h"

namespace {

const lp::Authenticator& authenticator() {
  static const lp::Authenticator instance("fuzzing key");
  return instance;
}

// Our own replies must be valid frames of the handshake. Sealed ones (IDENTIFY always; a 0-RTT
// dialler's second AUTH, under its early key) are checked by their length: this harness does not
// hold their keys. A CLOSE refusing the server's proof goes in clear.
void check_replies(const std::vector<std::byte>& out) {
  std::size_t offset = 0;
  while (offset < out.size()) {
    LP_FUZZ_CHECK(out.size() - offset >= lp::kFrameHeaderSize);
    const auto* header = out.data() + offset;
    LP_FUZZ_CHECK(std::to_integer<unsigned>(header[2]) == lp::kProtocolVersion);
    const auto type = static_cast<lp::FrameType>(header[3]);
    std::size_t length = 0;
    for (int i = 4; i < 8; ++i) length = length << 8 | std::to_integer<std::size_t>(header[i]);
    LP_FUZZ_CHECK(out.size() - offset - lp::kFrameHeaderSize >= length);
    const std::span<const std::byte> payload(header + lp::kFrameHeaderSize, length);
    switch (type) {
      case lp::FrameType::kHello: lp::decode_hello(payload); break;
      case lp::FrameType::kChallenge: lp::decode_challenge(payload); break;
      case lp::FrameType::kAuth: LP_FUZZ_CHECK(length == lp::kMacSize || length == lp::kMacSize + lp::kTagSize); break;
      case lp::FrameType::kIdentify: LP_FUZZ_CHECK(length == lp::kIdentifyPayloadSize + lp::kTagSize); break;
      case lp::FrameType::kClose: lp::decode_close(payload); break;
      default: LP_FUZZ_CHECK(!"the handshake sent a frame of a later phase");
    }
    offset += lp::kFrameHeaderSize + length;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  lp::fuzz::FuzzInput input(data, size);
  const std::uint8_t choices = input.u8();
  const bool dialler = choices & 1;
  const lp::Protection protection = choices & 2 ? lp::Protection::kEncrypt : lp::Protection::kIntegrityOnly;
  const bool early = choices & 4;  // a dialler's first flight with 0-RTT data; an acceptor that admits it
  unsigned read_size = input.u8();
  const auto deadline = lp::Handshake::Clock::time_point{} + std::chrono::seconds(5);
  lp::Handshake handshake =
      dialler ? lp::Handshake::dialler(authenticator(), "site-a:7601", 1, std::vector<std::byte>(lp::kNonceSize, std::byte{1}),
                                       protection, authenticator().identity_token("site-b:7602"), deadline)
              : lp::Handshake::acceptor(authenticator(), std::vector<std::byte>(lp::kNonceSize, std::byte{2}), protection,
                                        deadline);
  lp::EarlyGate gate(0);
  if (early && dialler) handshake.enable_early(5000, "site-b:7602");
  if (early && !dialler) handshake.enable_early_gate(&gate, {"site-b:7602"});
  handshake.set_wall_time(5000);
  std::vector<std::byte> out;
  if (dialler) handshake.start(out);
  lp::FrameReader reader(lp::kMaxHandshakePayload);
  const std::span<const std::byte> stream = input.rest();
  std::size_t offset = 0;
  try {
    while (offset < stream.size() && !handshake.finished()) {
      read_size = read_size * 1103515245u + 12345u;
      std::size_t chunk = 1 + (read_size >> 16) % 48;
      if (chunk > stream.size() - offset) chunk = stream.size() - offset;
      auto area = reader.write_area(chunk);
      std::memcpy(area.data(), stream.data() + offset, chunk);
      reader.commit(chunk);
      offset += chunk;
      while (!handshake.finished()) {
        auto frame = reader.next();
        if (!frame) break;
        const lp::HandshakeStep step = handshake.on_frame(*frame, out);
        // Nobody here knows the key: no proof can pass.
        LP_FUZZ_CHECK(step != lp::HandshakeStep::kEstablished && step != lp::HandshakeStep::kIdentityPresented);
      }
    }
  } catch (const lp::MalformedFrame&) {
    // The engine closes the connection and counts it.
  } catch (const std::invalid_argument&) {
    // A HELLO whose endpoint is not host:port: the same.
  }
  check_replies(out);
  return 0;
}
