// The relay and its peers: a restarted or failed peer gateway resets its streams; frames that
// break the rules are refused without harm to anything but their own stream.
#include <catch2/catch.hpp>

#include "relay/frame.h"
#include "relay_harness.h"

using namespace lpd;
using namespace lpd::test;

namespace {

struct TwoSites {
  Network net;
  Handle near = 0, far = 0;
  TwoSites() {
    RelayLimits limits;
    limits.stream_window = 128 * 1024;
    net.add("A", 0xa1, limits);
    net.add("B", 0xb1, limits);
    net.connect_all();
    near = net["A"].relay->connect("B/h:1").handle;
    net.feed("A", near, "ping");
    net.pump();
    far = net.dialled("B", "h:1");
  }
  Relay& a() { return *net["A"].relay; }
  const std::string b_endpoint() { return net["B"].endpoint; }
};

// The stream id of the last OPEN `node` sent.
std::uint32_t last_open(const Node& node) {
  for (auto it = node.sent.rbegin(); it != node.sent.rend(); ++it) {
    if (it->message.tag == static_cast<std::int32_t>(FrameKind::kOpen)) return it->message.source;
  }
  FAIL("no OPEN sent");
  return 0;
}

lp::Message data(std::uint32_t id, std::uint32_t flags, std::size_t size) {
  lp::Message frame = make_frame(FrameKind::kData, id, flags, 0, "");
  frame.body.resize(size);
  return frame;
}

}  // namespace

TEST_CASE("a peer gateway's new instance resets every stream with it, and only those") {
  TwoSites s;
  REQUIRE(s.far != 0);
  REQUIRE(s.net["B"].locals[s.far].received == "ping");
  const Handle own = s.a().connect("A/127.0.0.1:1").handle;
  // B restarts: a fresh relay at the same endpoint says HELLO with another instance id.
  Relay restarted("B", 0xb2, RelayLimits{});
  restarted.set_peers({{"A", s.net["A"].endpoint}});
  auto hello = restarted.poll_transmit();
  REQUIRE(hello);
  s.a().on_frame(s.b_endpoint(), hello->message);
  s.net.pump();
  CHECK(s.net["A"].locals[s.near].closed);
  CHECK(s.net["A"].locals[s.near].reset);
  CHECK(s.a().stream_count() == 2);  // the stream to its own site stays (both its ends)
  CHECK(s.a().read_budget(own) > 0);
  CHECK(s.a().status_json().find("\"instance\":\"00000000000000b2\"") != std::string::npos);
  // The same instance again is no restart.
  const Handle next = s.a().connect("B/h:2").handle;
  s.a().on_frame(s.b_endpoint(), hello->message);
  CHECK(s.a().read_budget(next) > 0);
}

TEST_CASE("the engine giving up on a peer resets its streams at both ends; a HELLO asks again") {
  TwoSites s;
  s.a().on_peer_failed(s.b_endpoint(), "dead-peer timeout", false);
  CHECK(s.a().status_json().find("\"up\":false") != std::string::npos);
  s.net.pump();
  CHECK(s.net["A"].locals[s.near].reset);
  CHECK(s.net["B"].locals[s.far].reset);  // told by a CLOSE(reset) on the next session
  CHECK(s.a().status_json().find("\"up\":true") != std::string::npos);  // B answered the HELLO
  const Handle again = s.a().connect("B/h:9").handle;
  s.net.feed("A", again, "again");
  s.net.pump();
  CHECK(s.net["B"].locals[s.net.dialled("B", "h:9")].received == "again");
}

TEST_CASE("a peer the engine refuses to send to is refused to CONNECTs until its next HELLO") {
  TwoSites s;
  s.a().on_peer_failed(s.b_endpoint(), "peer failed", true);
  s.net.pump();
  CHECK(s.net["A"].locals[s.near].reset);
  CHECK(s.a().connect("B/h:8").error.find("unreachable") != std::string::npos);
  CHECK_FALSE(s.a().poll_transmit());  // nothing for B, not even a HELLO
  s.a().on_frame(s.b_endpoint(), make_frame(FrameKind::kHello, 0, 0, 128 * 1024, "B 00000000000000b3"));
  const Handle again = s.a().connect("B/h:9").handle;
  s.net.feed("A", again, "again");
  s.net.pump();
  CHECK(s.net["B"].locals[s.net.dialled("B", "h:9")].received == "again");
}

TEST_CASE("a refused peer is listed for another chance; retrying sends a HELLO, and its answer opens the site") {
  TwoSites s;
  CHECK(s.a().refused_peers().empty());
  s.a().on_peer_failed(s.b_endpoint(), "dead-peer timeout", false);  // a HELLO asks the next session
  s.a().on_peer_failed(s.b_endpoint(), "peer failed", true);         // and the engine refuses it
  s.net.pump();
  const auto refused = s.a().refused_peers();
  REQUIRE(refused.size() == 1);
  CHECK(refused[0].first == "B");
  CHECK(refused[0].second == s.b_endpoint());
  CHECK_FALSE(s.a().poll_transmit());
  s.a().retry_refused("B");
  CHECK(s.a().refused_peers().empty());
  // CONNECTs wait for B's answer: the retried session may still fail.
  CHECK(s.a().connect("B/h:8").error.find("unreachable") != std::string::npos);
  auto hello = s.a().poll_transmit();
  REQUIRE(hello);
  CHECK(hello->site == "B");
  CHECK(hello->message.tag == static_cast<std::int32_t>(FrameKind::kHello));
  CHECK((hello->message.flags & kHelloAnswer) == 0);
  s.a().on_frame(s.b_endpoint(), make_frame(FrameKind::kHello, 0, kHelloAnswer, 128 * 1024, "B 00000000000000b1"));
  const Handle again = s.a().connect("B/h:9").handle;
  REQUIRE(again != 0);
  s.net.feed("A", again, "again");
  s.net.pump();
  CHECK(s.net["B"].locals[s.net.dialled("B", "h:9")].received == "again");
  s.a().take_log();
  s.a().retry_refused("B");  // not refused: nothing happens
  CHECK(s.a().take_log().empty());
  CHECK_FALSE(s.a().poll_transmit());
}

TEST_CASE("frames from a peer that break the rules are refused without a crash") {
  TwoSites s;
  Relay& a = s.a();
  const std::string b = s.b_endpoint();
  const auto refused_before = a.refused_frames();
  const std::uint32_t id = last_open(s.net["A"]);

  SECTION("unknown sender, kinds and malformed HELLOs") {
    a.on_frame("stranger:1", data(id, 1, 10));
    lp::Message odd = make_frame(static_cast<FrameKind>(99), id, 1, 0, "x");
    a.on_frame(b, odd);
    a.on_frame(b, make_frame(FrameKind::kHello, 0, 0, 1 << 20, "B nothex"));
    a.on_frame(b, make_frame(FrameKind::kHello, 0, 0, 1 << 20, "Z 0000000000000001"));
    a.on_frame(b, make_frame(FrameKind::kHello, 0, 0, 1 << 20, "A 0000000000000001"));
    a.on_frame(b, make_frame(FrameKind::kHello, 0, 0, 5, "B 00000000000000b1"));
    a.on_frame(b, make_frame(FrameKind::kHello, 0, 0, -1, "B 00000000000000b1"));
    lp::Message huge = make_frame(FrameKind::kHello, 0, 0, 1 << 20, "");
    huge.body.resize(1 << 20);
    a.on_frame(b, huge);
    CHECK(a.refused_frames() == refused_before + 8);
    s.net.pump();
    CHECK_FALSE(s.net["A"].locals[s.near].closed);
    CHECK(a.read_budget(s.near) > 0);
  }
  SECTION("data beyond the window resets that stream only") {
    const Handle other = a.connect("B/h:2").handle;
    s.net.pump();
    s.net["A"].locals[s.near].reading = false;
    a.on_frame(b, data(id, 1, 128 * 1024));  // exactly the window: fine
    CHECK_FALSE(s.net["A"].locals[s.near].closed);
    a.on_frame(b, data(id, 1, 1));
    s.net.pump();
    CHECK(s.net["A"].locals[s.near].reset);
    CHECK(a.refused_frames() == refused_before + 1);
    CHECK(a.read_budget(other) > 0);
  }
  SECTION("credit for bytes never sent resets the stream") {
    a.on_frame(b, make_frame(FrameKind::kCredit, id, 1, 1 << 20, ""));
    s.net.pump();
    CHECK(s.net["A"].locals[s.near].reset);
  }
  SECTION("negative credit, odd CLOSE, data after the end") {
    a.on_frame(b, make_frame(FrameKind::kCredit, id, 1, -5, ""));
    s.net.pump();
    CHECK(s.net["A"].locals[s.near].reset);
    const Handle next = a.connect("B/h:3").handle;
    s.net.pump();
    const std::uint32_t next_id = last_open(s.net["A"]);
    a.on_frame(b, make_frame(FrameKind::kClose, next_id, 1, 7, ""));
    a.on_frame(b, make_frame(FrameKind::kClose, next_id, 1, 0, ""));
    a.on_frame(b, data(next_id, 1, 3));
    s.net.pump();
    CHECK(s.net["A"].locals[next].reset);
  }
  SECTION("OPENs with bad endpoints, duplicate ids or beyond the stream limit") {
    a.on_frame(b, make_frame(FrameKind::kOpen, 500, 0, 0, "no-port"));
    a.on_frame(b, make_frame(FrameKind::kOpen, 501, 1, 0, "h:1"));
    a.on_frame(b, make_frame(FrameKind::kOpen, 502, 0, 0, "h:1"));
    a.on_frame(b, make_frame(FrameKind::kOpen, 502, 0, 0, "h:1"));
    CHECK(a.refused_frames() == refused_before + 3);
    CHECK(a.stream_count() == 2);
    // Data for a stream that does not exist is answered with a reset, not kept.
    a.on_frame(b, data(9999, 0, 100));
    auto reply = a.poll_transmit();
    bool reset_sent = false;
    while (reply) {
      reset_sent = reset_sent || (reply->message.tag == static_cast<std::int32_t>(FrameKind::kClose) &&
                                  reply->message.source == 9999 && reply->message.context == 1);
      reply = a.poll_transmit();
    }
    CHECK(reset_sent);
  }
}

TEST_CASE("a peer removed from the config has its streams reset; one added gets a HELLO") {
  TwoSites s;
  s.a().set_peers({{"C", "c-gw:7400"}});
  auto hello = s.a().poll_transmit();
  REQUIRE(hello);
  CHECK(hello->site == "C");
  CHECK(hello->message.tag == static_cast<std::int32_t>(FrameKind::kHello));
  s.net.pump();
  CHECK(s.net["A"].locals[s.near].reset);
  CHECK(s.a().connect("B/h:1").error == "unknown site B");
}
