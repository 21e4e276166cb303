// The handshake as a pure state machine: two ends exchange frames in memory on a fake clock.
// Covers the happy path (keys, sealed identities, protection), wrong keys either way, replayed
// proofs, a refused identity, unexpected frames and CLOSE.
#include <catch2/catch.hpp>

#include <cstring>
#include <optional>
#include <utility>

#include "carrier/carrier_choice.h"
#include "security/handshake.h"

using namespace lp;
using namespace std::chrono_literals;

namespace {

using Clock = Handshake::Clock;
const Clock::time_point kStart = Clock::time_point{} + 1000s;  // the fake clock's "now"

struct Frame {
  FrameType type;
  std::vector<std::byte> payload;
  FrameView view() { return {type, payload, {}, {}}; }
};

// Takes every whole frame out of `out` (what one end would have sent).
std::vector<Frame> sent(std::vector<std::byte>& out) {
  FrameReader reader(kMaxHandshakePayload);
  auto area = reader.write_area(out.size());
  std::memcpy(area.data(), out.data(), out.size());
  reader.commit(out.size());
  out.clear();
  std::vector<Frame> frames;
  while (auto frame = reader.next()) frames.push_back({frame->type, {frame->payload.begin(), frame->payload.end()}});
  return frames;
}

std::vector<std::byte> nonce(std::uint8_t fill) { return std::vector<std::byte>(kNonceSize, std::byte{fill}); }

std::vector<std::byte> token(std::uint8_t fill) { return std::vector<std::byte>(kIdentityTokenSize, std::byte{fill}); }

// A dialler and an acceptor, each with its own key.
struct Pair {
  Authenticator dialler_key;
  Authenticator acceptor_key;
  Handshake dialler;
  Handshake acceptor;
  std::vector<std::byte> to_acceptor, to_dialler;
  FrameReader dialler_inbox{1u << 20}, acceptor_inbox{1u << 20};

  Pair(const std::string& dialler_secret, const std::string& acceptor_secret, std::uint8_t client_fill = 1,
       std::uint8_t server_fill = 2, Protection dialler_wants = Protection::kEncrypt,
       Protection acceptor_wants = Protection::kEncrypt)
      : dialler_key(dialler_secret),
        acceptor_key(acceptor_secret),
        dialler(Handshake::dialler(dialler_key, "site-a:4000", 1, nonce(client_fill), dialler_wants, token(0xd1),
                                   kStart + 5s)),
        acceptor(Handshake::acceptor(acceptor_key, nonce(server_fill), acceptor_wants, kStart + 5s)) {}

  // HELLO, CHALLENGE, then the dialler's AUTH and IDENTIFY: the acceptor's step on them.
  HandshakeStep through_client_proof() {
    dialler.start(to_acceptor);
    deliver(acceptor, to_acceptor, to_dialler);
    deliver(dialler, to_dialler, to_acceptor);
    return deliver(acceptor, to_acceptor, to_dialler);
  }

  // Delivers every frame waiting for `to`, opening sealed ones as a connection does; returns the
  // last step.
  HandshakeStep deliver(Handshake& to, std::vector<std::byte>& wire, std::vector<std::byte>& reply) {
    FrameReader& inbox = &to == &dialler ? dialler_inbox : acceptor_inbox;
    auto area = inbox.write_area(wire.size());
    std::memcpy(area.data(), wire.data(), wire.size());
    inbox.commit(wire.size());
    wire.clear();
    std::optional<HandshakeStep> step;
    while (auto frame = inbox.next()) {
      if (!frame->tag.empty()) REQUIRE(to.opener()->open(frame->header, frame->payload, frame->tag));
      step = to.on_frame(*frame, reply);
      if (to.finished() || *step == HandshakeStep::kIdentityPresented) break;  // a connection stops reading
      if (to.opener() != nullptr) inbox.set_tag_size(kTagSize);
    }
    REQUIRE(step);
    return *step;
  }
};

}  // namespace

TEST_CASE("handshake: both ends prove the key, exchange sealed identities and share traffic keys") {
  const Protection dialler_wants = GENERATE(Protection::kEncrypt, Protection::kIntegrityOnly);
  const Protection acceptor_wants = GENERATE(Protection::kEncrypt, Protection::kIntegrityOnly);
  Pair pair("secret", "secret", 1, 2, dialler_wants, acceptor_wants);
  pair.dialler.start(pair.to_acceptor);
  CHECK_FALSE(pair.dialler.identity_sent());
  CHECK(pair.deliver(pair.acceptor, pair.to_acceptor, pair.to_dialler) == HandshakeStep::kIdentified);
  CHECK(pair.acceptor.peer_endpoint() == "site-a:4000");
  CHECK(pair.acceptor.stream() == 1);
  CHECK(pair.deliver(pair.dialler, pair.to_dialler, pair.to_acceptor) == HandshakeStep::kPending);  // CHALLENGE
  CHECK(pair.dialler.sealer() != nullptr);  // its IDENTIFY went sealed
  CHECK(pair.dialler.identity_sent());       // the acceptor may hold it as established from here
  CHECK(pair.deliver(pair.acceptor, pair.to_acceptor, pair.to_dialler) == HandshakeStep::kIdentityPresented);
  CHECK(pair.acceptor.peer_token() == token(0xd1));
  CHECK(pair.to_dialler.empty());  // nothing before the endpoint has checked the identity
  CHECK(pair.acceptor.accept_identity(token(0xa2), pair.to_dialler) == HandshakeStep::kEstablished);
  CHECK(pair.acceptor.finished());
  CHECK(pair.deliver(pair.dialler, pair.to_dialler, pair.to_acceptor) == HandshakeStep::kEstablished);
  CHECK(pair.dialler.peer_token() == token(0xa2));
  CHECK(pair.dialler.finished());
  CHECK(pair.to_acceptor.empty());
  CHECK(pair.dialler.deadline() == kStart + 5s);
  const Protection expected = dialler_wants == Protection::kEncrypt || acceptor_wants == Protection::kEncrypt
                                  ? Protection::kEncrypt
                                  : Protection::kIntegrityOnly;
  CHECK(pair.dialler.protection() == expected);
  CHECK(pair.acceptor.protection() == expected);
  // The traffic ciphers match: what one seals, the other opens, in both directions.
  for (auto [from, to] : {std::pair{&pair.dialler, &pair.acceptor}, std::pair{&pair.acceptor, &pair.dialler}}) {
    std::vector<std::byte> wire;
    encode_keepalive(wire);
    from->sealer()->seal_frame(wire, 0);
    FrameReader reader(100);
    reader.set_tag_size(kTagSize);
    auto area = reader.write_area(wire.size());
    std::memcpy(area.data(), wire.data(), wire.size());
    reader.commit(wire.size());
    auto frame = reader.next();
    REQUIRE(frame);
    CHECK(to->opener()->open(frame->header, frame->payload, frame->tag));
  }
}

TEST_CASE("handshake: an acceptor refuses an identity that is not the session's, in clear") {
  Pair pair("secret", "secret");
  REQUIRE(pair.through_client_proof() == HandshakeStep::kIdentityPresented);
  pair.acceptor.refuse_identity(pair.to_dialler);
  CHECK(pair.acceptor.finished());
  CHECK(pair.deliver(pair.dialler, pair.to_dialler, pair.to_acceptor) == HandshakeStep::kPeerClosed);
  CHECK(pair.dialler.close_text().find("another process") != std::string::npos);
}

TEST_CASE("handshake: the acceptor refuses a dialler with another key, and the dialler learns why") {
  Pair pair("one key", "another key");
  CHECK(pair.through_client_proof() == HandshakeStep::kRejected);
  auto frames = sent(pair.to_dialler);
  REQUIRE(frames.size() == 1);
  REQUIRE(frames[0].type == FrameType::kClose);
  CHECK(decode_close(frames[0].payload).reason == CloseReason::kAuthFailed);
  std::vector<std::byte> reply;
  CHECK(pair.dialler.on_frame(frames[0].view(), reply) == HandshakeStep::kRefusedByPeer);
  CHECK(pair.dialler.close_text() == "authentication failed");
  CHECK(reply.empty());
}

TEST_CASE("handshake: the dialler refuses an acceptor whose proof is wrong") {
  Pair pair("secret", "secret");
  pair.dialler.start(pair.to_acceptor);
  pair.deliver(pair.acceptor, pair.to_acceptor, pair.to_dialler);
  pair.deliver(pair.dialler, pair.to_dialler, pair.to_acceptor);
  std::vector<std::byte> forged;
  encode_fixed(forged, FrameType::kAuth, std::vector<std::byte>(kMacSize, std::byte{0x5a}));
  auto frames = sent(forged);
  std::vector<std::byte> reply;
  CHECK(pair.dialler.on_frame(frames[0].view(), reply) == HandshakeStep::kRejected);
  auto close = sent(reply);
  REQUIRE(close.size() == 1);
  CHECK(decode_close(close[0].payload).reason == CloseReason::kAuthFailed);
}

TEST_CASE("handshake: a proof recorded from one exchange does not open another (fresh nonces)") {
  // Record the dialler's AUTH of a first exchange.
  Pair first("secret", "secret", 1, 2);
  first.dialler.start(first.to_acceptor);
  first.deliver(first.acceptor, first.to_acceptor, first.to_dialler);
  first.deliver(first.dialler, first.to_dialler, first.to_acceptor);
  std::vector<std::byte> recorded_auth = first.to_acceptor;
  recorded_auth.resize(kFrameHeaderSize + kMacSize);  // the AUTH (its sealed IDENTIFY follows)

  // An attacker replays HELLO and that AUTH to an acceptor that picked another server nonce.
  Pair second("secret", "secret", 1, 3);
  second.dialler.start(second.to_acceptor);
  second.deliver(second.acceptor, second.to_acceptor, second.to_dialler);
  std::vector<std::byte> reply;
  auto frames = sent(recorded_auth);
  CHECK(second.acceptor.on_frame(frames[0].view(), reply) == HandshakeStep::kRejected);
}

TEST_CASE("handshake: a frame the state does not expect is malformed") {
  Pair pair("secret", "secret");
  std::vector<std::byte> out;
  SECTION("an acceptor wants HELLO first") {
    std::vector<std::byte> wire;
    encode_fixed(wire, FrameType::kAuth, std::vector<std::byte>(kMacSize));
    auto frames = sent(wire);
    CHECK_THROWS_AS(pair.acceptor.on_frame(frames[0].view(), out), MalformedFrame);
  }
  SECTION("DATA before the handshake is over") {
    pair.dialler.start(pair.to_acceptor);
    std::vector<std::byte> wire;
    encode_data(wire, 0, std::vector<std::byte>(kMessageTrailerSize));
    auto frames = sent(wire);
    CHECK_THROWS_AS(pair.dialler.on_frame(frames[0].view(), out), MalformedFrame);
  }
  SECTION("a dialler that has not started") {
    std::vector<std::byte> wire;
    encode_challenge(wire, nonce(9), Protection::kEncrypt, 0);
    auto frames = sent(wire);
    CHECK_THROWS_AS(pair.dialler.on_frame(frames[0].view(), out), MalformedFrame);
  }
  SECTION("anything after the end") {
    REQUIRE(pair.through_client_proof() == HandshakeStep::kIdentityPresented);
    pair.acceptor.accept_identity(token(0xa2), pair.to_dialler);
    std::vector<std::byte> wire;
    encode_keepalive(wire);
    auto frames = sent(wire);
    CHECK_THROWS_AS(pair.acceptor.on_frame(frames[0].view(), out), MalformedFrame);
  }
  CHECK(out.empty());
}

TEST_CASE("handshake: CHALLENGE carries the acceptor's carrier offer, decided at HELLO; its IDENTIFY repeats it") {
  Pair pair("secret", "secret");
  const std::uint8_t offer = CarrierOffer{CarrierChoice::kAuto, true, true}.encode();
  std::string asked_for;
  pair.acceptor.decide_offer_with([&](const std::string& dialler_endpoint) {
    asked_for = dialler_endpoint;
    return offer;
  });
  pair.dialler.set_carrier_offer(CarrierOffer{CarrierChoice::kUdp, true, false}.encode());
  pair.dialler.start(pair.to_acceptor);
  REQUIRE(pair.deliver(pair.acceptor, pair.to_acceptor, pair.to_dialler) == HandshakeStep::kIdentified);
  CHECK(asked_for == "site-a:4000");  // decided when HELLO named the dialler
  CHECK(pair.acceptor.carrier_offer() == offer);
  CHECK_FALSE(pair.dialler.peer_carrier_offer_known());
  REQUIRE(pair.deliver(pair.dialler, pair.to_dialler, pair.to_acceptor) == HandshakeStep::kPending);  // CHALLENGE
  // Known before the acceptor's proof and IDENTIFY: the dialler may agree the carrier now.
  CHECK(pair.dialler.peer_carrier_offer_known());
  CHECK(pair.dialler.peer_carrier_offer() == offer);
  CHECK(pair.dialler.datagram_keys());  // and its datagrams can be sealed: both nonces are known
  REQUIRE(pair.deliver(pair.acceptor, pair.to_acceptor, pair.to_dialler) == HandshakeStep::kIdentityPresented);
  CHECK(pair.acceptor.peer_carrier_offer() == CarrierOffer{CarrierChoice::kUdp, true, false}.encode());
  REQUIRE(pair.acceptor.accept_identity(token(0xa2), pair.to_dialler) == HandshakeStep::kEstablished);
  CHECK(pair.deliver(pair.dialler, pair.to_dialler, pair.to_acceptor) == HandshakeStep::kEstablished);
  CHECK(pair.dialler.peer_carrier_offer() == offer);
}

TEST_CASE("handshake: an IDENTIFY whose carrier offer differs from the CHALLENGE's is malformed (altered on the way)") {
  Pair pair("secret", "secret");
  pair.acceptor.set_carrier_offer(CarrierOffer{CarrierChoice::kTcp, true, false}.encode());
  pair.dialler.start(pair.to_acceptor);
  REQUIRE(pair.deliver(pair.acceptor, pair.to_acceptor, pair.to_dialler) == HandshakeStep::kIdentified);
  // CHALLENGE travels in clear: someone on the path turns the acceptor's tcp into udp.
  REQUIRE(pair.to_dialler.size() == kFrameHeaderSize + kNonceSize + 2);
  pair.to_dialler.back() = std::byte{CarrierOffer{CarrierChoice::kUdp, true, false}.encode()};
  REQUIRE(pair.deliver(pair.dialler, pair.to_dialler, pair.to_acceptor) == HandshakeStep::kPending);
  CHECK(CarrierOffer::decode(pair.dialler.peer_carrier_offer()).setting == CarrierChoice::kUdp);
  REQUIRE(pair.deliver(pair.acceptor, pair.to_acceptor, pair.to_dialler) == HandshakeStep::kIdentityPresented);
  REQUIRE(pair.acceptor.accept_identity(token(0xa2), pair.to_dialler) == HandshakeStep::kEstablished);
  // The sealed IDENTIFY says tcp: the dialler finds the change (the endpoint closes the connection
  // with CLOSE(protocol error) and counts it, as for any malformed frame).
  CHECK_THROWS_WITH(pair.deliver(pair.dialler, pair.to_dialler, pair.to_acceptor),
                    Catch::Contains("differs from CHALLENGE's"));
}

TEST_CASE("handshake: a CHALLENGE with a carrier offer no LongPipe sends is malformed") {
  Pair pair("secret", "secret");
  pair.dialler.start(pair.to_acceptor);
  std::vector<std::byte> wire, out;
  encode_challenge(wire, nonce(9), Protection::kEncrypt, 0x3f);
  auto frames = sent(wire);
  CHECK_THROWS_AS(pair.dialler.on_frame(frames[0].view(), out), MalformedFrame);
}

TEST_CASE("handshake: HELLO with a malformed endpoint is refused") {
  Authenticator key("secret");
  Handshake acceptor = Handshake::acceptor(key, nonce(2), Protection::kEncrypt, kStart + 5s);
  std::vector<std::byte> wire, out;
  encode_hello(wire, nonce(1), 0, Protection::kEncrypt, "no-port-here");
  auto frames = sent(wire);
  CHECK_THROWS_AS(acceptor.on_frame(frames[0].view(), out), std::invalid_argument);
  CHECK(out.empty());
}

TEST_CASE("handshake: a CLOSE for another reason ends it with the peer's text") {
  Pair pair("secret", "secret");
  pair.dialler.start(pair.to_acceptor);
  std::vector<std::byte> wire, out;
  encode_close(wire, CloseReason::kShutdown, "engine shutting down");
  auto frames = sent(wire);
  CHECK(pair.dialler.on_frame(frames[0].view(), out) == HandshakeStep::kPeerClosed);
  CHECK(pair.dialler.close_text() == "engine shutting down");
  CHECK(pair.dialler.finished());
}

TEST_CASE("handshake: DATA the dialler seals right behind its IDENTIFY opens at the acceptor before its proof") {
  // 0.5-RTT data (endpoint_handshake.cpp): the dialler's sealer exists once CHALLENGE is answered, and its
  // frames follow IDENTIFY in the same sealed sequence; the acceptor opens them after IDENTIFY.
  Pair pair("secret", "secret");
  pair.dialler.start(pair.to_acceptor);
  pair.deliver(pair.acceptor, pair.to_acceptor, pair.to_dialler);
  REQUIRE(pair.deliver(pair.dialler, pair.to_dialler, pair.to_acceptor) == HandshakeStep::kPending);
  REQUIRE(pair.dialler.identity_sent());
  std::vector<std::byte> data;
  encode_data(data, 0, std::vector<std::byte>(40, std::byte{7}));
  pair.dialler.sealer()->seal_frame(data, 0);
  pair.to_acceptor.insert(pair.to_acceptor.end(), data.begin(), data.end());
  REQUIRE(pair.deliver(pair.acceptor, pair.to_acceptor, pair.to_dialler) == HandshakeStep::kIdentityPresented);
  auto frame = pair.acceptor_inbox.next();  // the DATA behind IDENTIFY, still in the reader
  REQUIRE(frame);
  REQUIRE(frame->type == FrameType::kData);
  CHECK(pair.acceptor.opener()->open(frame->header, frame->payload, frame->tag));
  CHECK(decode_data(frame->payload, 1024).sequence == 0);
  SECTION("a stranger's acceptor cannot open it") {
    Pair stranger("secret", "another key");
    stranger.dialler.start(stranger.to_acceptor);
    stranger.deliver(stranger.acceptor, stranger.to_acceptor, stranger.to_dialler);
    stranger.deliver(stranger.dialler, stranger.to_dialler, stranger.to_acceptor);
    std::vector<std::byte> sealed;
    encode_data(sealed, 0, std::vector<std::byte>(40, std::byte{7}));
    stranger.dialler.sealer()->seal_frame(sealed, 0);
    // Its keys from its own key and both nonces: the dialler's frames do not open under them.
    const TrafficKeys keys = stranger.acceptor_key.traffic_keys(nonce(1), nonce(2), Protection::kEncrypt);
    FrameCipher opener(keys.dialler_to_acceptor, Protection::kEncrypt, FrameCipher::Use::kOpen);
    FrameReader reader(1024);
    reader.set_tag_size(kTagSize);
    auto area = reader.write_area(sealed.size());
    std::memcpy(area.data(), sealed.data(), sealed.size());
    reader.commit(sealed.size());
    auto stranger_frame = reader.next();
    REQUIRE(stranger_frame);
    CHECK_FALSE(opener.open(stranger_frame->header, stranger_frame->payload, stranger_frame->tag));
  }
}
