// Wire framing: round trips, and every malformed input rejected with MalformedFrame.
#include <catch2/catch.hpp>

#include <cstring>

#include "security/authenticator.h"
#include "wire/wire_frame.h"
#include "message.h"

using namespace lp;

namespace {
// Feeds bytes to a reader in pieces of `step`, collecting the frames' types and payloads.
std::vector<std::pair<FrameType, std::vector<std::byte>>> split(const std::vector<std::byte>& bytes, std::size_t step,
                                                                std::size_t max_payload = 1 << 20) {
  FrameReader reader(max_payload);
  std::vector<std::pair<FrameType, std::vector<std::byte>>> frames;
  for (std::size_t offset = 0; offset < bytes.size(); offset += step) {
    const std::size_t n = std::min(step, bytes.size() - offset);
    auto area = reader.write_area(n);
    std::memcpy(area.data(), bytes.data() + offset, n);
    reader.commit(n);
    while (auto frame = reader.next()) frames.push_back({frame->type, {frame->payload.begin(), frame->payload.end()}});
  }
  return frames;
}

std::vector<std::byte> header(std::uint16_t magic, std::uint8_t version, std::uint8_t type, std::uint32_t length) {
  std::vector<std::byte> out;
  for (int s = 8; s >= 0; s -= 8) out.push_back(static_cast<std::byte>(magic >> s));
  out.push_back(static_cast<std::byte>(version));
  out.push_back(static_cast<std::byte>(type));
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<std::byte>(length >> s));
  return out;
}
}  // namespace

TEST_CASE("frames survive any split of the byte stream") {
  Message message;
  message.source = 1;
  message.destination = 0xfffffffe;
  message.tag = -5;
  message.context = 77;
  message.flags = 3;
  message.body = {std::byte{1}, std::byte{2}, std::byte{3}};
  const auto packed = pack_message(message);

  std::vector<std::byte> stream;
  const auto nonce = Authenticator::make_nonce();
  encode_hello(stream, nonce, 3, lp::Protection::kEncrypt, "site-a:7000");
  encode_data(stream, 42, packed);
  encode_ack(stream, AckFrame{43, 4096, {{45, 47}}, {0x0123456789abcdefull, 4'000'000'000u, 65535}});
  encode_keepalive(stream);
  encode_close(stream, CloseReason::kShutdown, "bye");

  for (std::size_t step : {1u, 3u, 7u, 1000u}) {
    auto frames = split(stream, step);
    REQUIRE(frames.size() == 5);
    const HelloFrame hello = decode_hello(frames[0].second);
    CHECK(hello.endpoint == "site-a:7000");
    CHECK(hello.stream == 3);
    CHECK(hello.nonce == nonce);
    const DataFrame data = decode_data(frames[1].second, 100);
    CHECK(data.sequence == 42);
    const Message back = unpack_message({data.message.begin(), data.message.end()});
    CHECK(back.source == 1);
    CHECK(back.destination == 0xfffffffe);
    CHECK(back.tag == -5);
    CHECK(back.context == 77);
    CHECK(back.flags == 3);
    CHECK(back.body == message.body);
    const AckFrame ack = decode_ack(frames[2].second);
    CHECK(ack.cumulative == 43);
    CHECK(ack.window_messages == 4096);
    REQUIRE(ack.ranges.size() == 1);
    CHECK(ack.ranges[0].begin == 45);
    // The arrival times travel whole (the sender's packet train measures the path by them).
    CHECK(ack.arrivals.newest_ns == 0x0123456789abcdefull);
    CHECK(ack.arrivals.first_ns == 4'000'000'000u);
    CHECK(ack.arrivals.count == 65535);
    CHECK(frames[3].first == FrameType::kKeepalive);
    CHECK(decode_close(frames[4].second).text == "bye");
  }
}

TEST_CASE("malformed headers are rejected before any allocation") {
  constexpr std::uint8_t V = lp::kProtocolVersion;
  CHECK_THROWS_AS(split(header(0x1234, V, 1, 0), 100), MalformedFrame);               // magic
  CHECK_THROWS_AS(split(header(kFrameMagic, 1, 1, 0), 100), MalformedFrame);          // version 1 (before sealing)
  CHECK_THROWS_AS(split(header(kFrameMagic, V, 0, 0), 100), MalformedFrame);          // type 0
  CHECK_THROWS_AS(split(header(kFrameMagic, V, 10, 0), 100), MalformedFrame);         // type 10
  CHECK_THROWS_AS(split(header(kFrameMagic, V, 6, 1), 100), MalformedFrame);          // KEEPALIVE with payload
  CHECK_THROWS_AS(split(header(kFrameMagic, V, 4, 0x7fffffff), 100), MalformedFrame); // DATA over the limit
  // Before authentication the limit is the handshake's.
  CHECK_THROWS_AS(split(header(kFrameMagic, V, 4, 1000), 100, kMaxHandshakePayload), MalformedFrame);
  // A header alone is just incomplete, not an error.
  CHECK(split(header(kFrameMagic, V, 4, 1000), 100).empty());
}

TEST_CASE("malformed payloads are rejected") {
  std::vector<std::byte> empty;
  CHECK_THROWS_AS(decode_hello(empty), MalformedFrame);
  std::vector<std::byte> hello(kNonceSize + 4, std::byte{0});  // protection 0
  CHECK_THROWS_AS(decode_hello(hello), MalformedFrame);
  hello[kNonceSize + 1] = std::byte{1};                         // encrypt; endpoint length 0
  CHECK_THROWS_AS(decode_hello(hello), MalformedFrame);
  hello[kNonceSize + 3] = std::byte{5};                         // says 5, has 0
  CHECK_THROWS_AS(decode_hello(hello), MalformedFrame);
  hello.insert(hello.end(), 5, std::byte{'a'});
  CHECK_NOTHROW(decode_hello(hello));
  hello[kNonceSize] = std::byte{kMaxStreams};                   // stream index out of range
  CHECK_THROWS_AS(decode_hello(hello), MalformedFrame);
  CHECK_THROWS_AS(decode_data(std::vector<std::byte>(8 + kMessageTrailerSize - 1), 100), MalformedFrame);
  CHECK_THROWS_AS(decode_data(std::vector<std::byte>(8 + kMessageTrailerSize + 101), 100), MalformedFrame);
  CHECK_NOTHROW(decode_data(std::vector<std::byte>(8 + kMessageTrailerSize + 100), 100));
  std::vector<std::byte> ack;
  encode_ack(ack, AckFrame{10, 1, {{12, 14}}, {}});
  std::vector<std::byte> ack_payload(ack.begin() + kFrameHeaderSize, ack.end());
  ack_payload.pop_back();
  CHECK_THROWS_AS(decode_ack(ack_payload), MalformedFrame);     // truncated range
  std::vector<std::byte> backwards;
  encode_ack(backwards, AckFrame{10, 1, {{14, 12}}, {}});
  CHECK_THROWS_AS(decode_ack({backwards.begin() + kFrameHeaderSize, backwards.end()}), MalformedFrame);
  CHECK_THROWS_AS(decode_close(std::vector<std::byte>{std::byte{99}}), MalformedFrame);
  CHECK_THROWS_AS(decode_fixed(std::vector<std::byte>(31), kMacSize, "AUTH"), MalformedFrame);
  std::vector<std::byte> challenge(kNonceSize + 2, std::byte{2});
  challenge.back() = std::byte{0x82};                           // carrier offer: auto, datagrams ready
  CHECK(decode_challenge(challenge).protection == lp::Protection::kIntegrityOnly);
  CHECK(decode_challenge(challenge).carrier_offer == 0x82);
  challenge[kNonceSize] = std::byte{3};                         // unknown protection
  CHECK_THROWS_AS(decode_challenge(challenge), MalformedFrame);
  challenge[kNonceSize] = std::byte{2};
  challenge.pop_back();                                         // no carrier offer (version 4's CHALLENGE)
  CHECK_THROWS_AS(decode_challenge(challenge), MalformedFrame);
  CHECK_THROWS_AS(unpack_message(std::vector<std::byte>(kMessageTrailerSize - 1)), MalformedFrame);
}

TEST_CASE("proofs depend on key, nonces, endpoint and direction") {
  const Authenticator a("key one"), b("key two");
  const auto nc = Authenticator::make_nonce(), ns = Authenticator::make_nonce();
  CHECK(nc != ns);
  const auto proof = a.client_proof(nc, ns, "site-a:1");
  CHECK(Authenticator::proofs_match(proof, a.client_proof(nc, ns, "site-a:1")));
  CHECK_FALSE(Authenticator::proofs_match(proof, b.client_proof(nc, ns, "site-a:1")));
  CHECK_FALSE(Authenticator::proofs_match(proof, a.client_proof(ns, nc, "site-a:1")));
  CHECK_FALSE(Authenticator::proofs_match(proof, a.client_proof(nc, ns, "site-a:2")));
  CHECK_FALSE(Authenticator::proofs_match(proof, a.server_proof(nc, ns, "site-a:1")));
  CHECK_FALSE(Authenticator::proofs_match(proof, std::vector<std::byte>(proof.begin(), proof.end() - 1)));
}

TEST_CASE("identity tokens: one per peer, stable within an engine, different across engines") {
  const Authenticator a("job key"), a_restarted("job key");
  CHECK(a.identity_token("site-b:1") == a.identity_token("site-b:1"));
  CHECK(a.identity_token("site-b:1").size() == lp::kIdentityTokenSize);
  CHECK(a.identity_token("site-b:1") != a.identity_token("site-c:1"));  // what b learns opens nothing at c
  CHECK(a.identity_token("site-b:1") != a_restarted.identity_token("site-b:1"));
}

TEST_CASE("there is no default key") {
  CHECK_THROWS_WITH(Authenticator(""), Catch::Contains("LONGPIPE_KEY"));
}
