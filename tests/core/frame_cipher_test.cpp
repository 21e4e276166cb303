// FrameCipher and derive_traffic_keys: sealed frames round-trip through the FrameReader; a frame
// altered in any byte, replayed, reordered, opened with the wrong key, direction or mode fails.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "wire/wire_frame.h"
#include "security/frame_cipher.h"

namespace {

using lp::FrameCipher;
using lp::Protection;

std::vector<std::byte> nonce(std::uint8_t fill) { return std::vector<std::byte>(lp::kNonceSize, std::byte{fill}); }

lp::TrafficKeys keys(Protection protection, const std::string& job_key = "job key") {
  return lp::derive_traffic_keys(job_key, nonce(1), nonce(2), protection);
}

std::vector<std::byte> message_of(std::size_t size, std::uint8_t seed) {
  std::vector<std::byte> message(size + lp::kMessageTrailerSize);
  for (std::size_t i = 0; i < message.size(); ++i) message[i] = static_cast<std::byte>(seed + i * 7);
  return message;
}

// One sealed DATA frame (sequence `seq`) carrying message_of(size, seed).
std::vector<std::byte> sealed_data(FrameCipher& sealer, std::uint64_t seq, std::size_t size, std::uint8_t seed) {
  std::vector<std::byte> wire;
  lp::encode_data(wire, seq, message_of(size, seed));
  sealer.seal_frame(wire, 0);
  return wire;
}

// Feeds `wire` to a reader expecting tags and opens each frame; returns the opened DATA frames'
// sequence numbers, or stops at the first that fails to open (then `failed` is set).
std::vector<std::uint64_t> open_all(FrameCipher& opener, std::vector<std::byte> wire, bool& failed) {
  lp::FrameReader reader(1u << 24);
  reader.set_tag_size(lp::kTagSize);
  auto area = reader.write_area(wire.size());
  std::copy(wire.begin(), wire.end(), area.begin());
  reader.commit(wire.size());
  std::vector<std::uint64_t> sequences;
  failed = false;
  while (auto frame = reader.next()) {
    if (!opener.open(frame->header, frame->payload, frame->tag)) {
      failed = true;
      break;
    }
    sequences.push_back(lp::decode_data(frame->payload, 1u << 24).sequence);
  }
  return sequences;
}

}  // namespace

TEST_CASE("sealed frames open in order, with their content, in both protection modes") {
  const Protection protection = GENERATE(Protection::kEncrypt, Protection::kIntegrityOnly);
  const auto k = keys(protection);
  FrameCipher sealer(k.dialler_to_acceptor, protection, FrameCipher::Use::kSeal);
  FrameCipher opener(k.dialler_to_acceptor, protection, FrameCipher::Use::kOpen);
  std::vector<std::byte> wire;
  const std::size_t sizes[] = {0, 1, 15, 16, 17, 1000, 70000};
  for (std::size_t i = 0; i < std::size(sizes); ++i) {
    const std::size_t start = wire.size();
    lp::encode_data(wire, 100 + i, message_of(sizes[i], static_cast<std::uint8_t>(i)));
    const std::vector<std::byte> clear(wire.begin() + static_cast<std::ptrdiff_t>(start), wire.end());
    sealer.seal_frame(wire, start);
    CHECK(wire.size() == start + clear.size() + lp::kTagSize);
    const bool payload_unchanged =
        std::equal(clear.begin() + lp::kFrameHeaderSize, clear.end(),
                   wire.begin() + static_cast<std::ptrdiff_t>(start + lp::kFrameHeaderSize));
    CHECK(payload_unchanged == (protection == Protection::kIntegrityOnly));
  }
  lp::FrameReader reader(1u << 24);
  reader.set_tag_size(lp::kTagSize);
  auto area = reader.write_area(wire.size());
  std::copy(wire.begin(), wire.end(), area.begin());
  reader.commit(wire.size());
  for (std::size_t i = 0; i < std::size(sizes); ++i) {
    auto frame = reader.next();
    REQUIRE(frame);
    REQUIRE(opener.open(frame->header, frame->payload, frame->tag));
    const auto data = lp::decode_data(frame->payload, 1u << 24);
    CHECK(data.sequence == 100 + i);
    const auto expected = message_of(sizes[i], static_cast<std::uint8_t>(i));
    CHECK(std::equal(data.message.begin(), data.message.end(), expected.begin(), expected.end()));
  }
  CHECK_FALSE(reader.next());
  CHECK(opener.frames() == std::size(sizes));
}

TEST_CASE("changing any byte of a sealed frame (header, payload or tag) makes it fail") {
  const Protection protection = GENERATE(Protection::kEncrypt, Protection::kIntegrityOnly);
  const auto k = keys(protection);
  FrameCipher sealer(k.dialler_to_acceptor, protection, FrameCipher::Use::kSeal);
  const auto wire = sealed_data(sealer, 5, 40, 9);
  // Every position except the length field (a changed length is a different frame boundary; the
  // header is authenticated, so it fails too unless the reader refuses the frame first).
  for (std::size_t position = 0; position < wire.size(); ++position) {
    auto tampered = wire;
    tampered[position] ^= std::byte{0x01};
    FrameCipher opener(k.dialler_to_acceptor, protection, FrameCipher::Use::kOpen);
    bool failed = false;
    std::vector<std::uint64_t> opened;
    try {
      opened = open_all(opener, tampered, failed);
    } catch (const lp::MalformedFrame&) {
      failed = true;  // header fields (magic, version, type, length) are also checked by the reader
    }
    INFO("byte " << position);
    CHECK((failed || opened.empty()));
    CHECK(opened.empty());
  }
  FrameCipher opener(k.dialler_to_acceptor, protection, FrameCipher::Use::kOpen);
  bool failed = true;
  CHECK(open_all(opener, wire, failed) == std::vector<std::uint64_t>{5});
  CHECK_FALSE(failed);
}

TEST_CASE("a replayed, reordered or dropped frame fails, and so does everything after it") {
  const auto k = keys(Protection::kEncrypt);
  FrameCipher sealer(k.acceptor_to_dialler, Protection::kEncrypt, FrameCipher::Use::kSeal);
  const auto first = sealed_data(sealer, 1, 10, 1);
  const auto second = sealed_data(sealer, 2, 10, 2);
  const auto third = sealed_data(sealer, 3, 10, 3);
  auto joined = [](std::initializer_list<const std::vector<std::byte>*> parts) {
    std::vector<std::byte> out;
    for (const auto* part : parts) out.insert(out.end(), part->begin(), part->end());
    return out;
  };
  bool failed = false;
  SECTION("replay") {
    FrameCipher opener(k.acceptor_to_dialler, Protection::kEncrypt, FrameCipher::Use::kOpen);
    CHECK(open_all(opener, joined({&first, &second, &second, &third}), failed) == std::vector<std::uint64_t>{1, 2});
    CHECK(failed);
  }
  SECTION("reorder") {
    FrameCipher opener(k.acceptor_to_dialler, Protection::kEncrypt, FrameCipher::Use::kOpen);
    CHECK(open_all(opener, joined({&first, &third, &second}), failed) == std::vector<std::uint64_t>{1});
    CHECK(failed);
  }
  SECTION("drop, then the rest is refused for good") {
    FrameCipher opener(k.acceptor_to_dialler, Protection::kEncrypt, FrameCipher::Use::kOpen);
    CHECK(open_all(opener, joined({&second}), failed).empty());
    CHECK(failed);
    CHECK(open_all(opener, joined({&first}), failed).empty());  // even the right next frame
    CHECK(failed);
  }
}

TEST_CASE("the wrong job key, nonce, direction or mode opens nothing") {
  const auto right = keys(Protection::kEncrypt);
  FrameCipher sealer(right.dialler_to_acceptor, Protection::kEncrypt, FrameCipher::Use::kSeal);
  const auto wire = sealed_data(sealer, 1, 64, 4);
  const lp::TrafficKey wrong_keys[] = {
      keys(Protection::kEncrypt, "another job key").dialler_to_acceptor,
      lp::derive_traffic_keys("job key", nonce(1), nonce(3), Protection::kEncrypt).dialler_to_acceptor,
      right.acceptor_to_dialler,
      keys(Protection::kIntegrityOnly).dialler_to_acceptor,
  };
  for (const auto& key : wrong_keys) {
    FrameCipher opener(key, Protection::kEncrypt, FrameCipher::Use::kOpen);
    bool failed = false;
    CHECK(open_all(opener, wire, failed).empty());
    CHECK(failed);
  }
  // A sealed frame opened as integrity-only (the mode a downgrade would claim) fails as well.
  FrameCipher downgraded(right.dialler_to_acceptor, Protection::kIntegrityOnly, FrameCipher::Use::kOpen);
  bool failed = false;
  CHECK(open_all(downgraded, wire, failed).empty());
  CHECK(failed);
}

TEST_CASE("keys differ per direction, per nonce pair and per mode") {
  const auto a = keys(Protection::kEncrypt);
  CHECK(a.dialler_to_acceptor != a.acceptor_to_dialler);
  CHECK(a.dialler_to_acceptor != keys(Protection::kIntegrityOnly).dialler_to_acceptor);
  CHECK(a.dialler_to_acceptor == keys(Protection::kEncrypt).dialler_to_acceptor);  // deterministic
  CHECK(a.dialler_to_acceptor !=
        lp::derive_traffic_keys("job key", nonce(2), nonce(1), Protection::kEncrypt).dialler_to_acceptor);
}

TEST_CASE("a protected reader refuses a frame too short to hold a tag") {
  std::vector<std::byte> wire;
  lp::encode_keepalive(wire);  // length 0: no room for a tag
  lp::FrameReader reader(1000);
  reader.set_tag_size(lp::kTagSize);
  auto area = reader.write_area(wire.size());
  std::copy(wire.begin(), wire.end(), area.begin());
  reader.commit(wire.size());
  CHECK_THROWS_AS(reader.next(), lp::MalformedFrame);
}
