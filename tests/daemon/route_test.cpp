// Reverse mode (a dial-in peer) and routes through a third site: the relay alone, three sites on
// the in-memory network, A and C joined only through B.
#include <catch2/catch.hpp>

#include "relay/frame.h"
#include "relay_harness.h"

using namespace lpd;
using namespace lpd::test;

namespace {

// A -- B -- C; A and C know only B; B relays between them unless `allow` is false.
struct Relayed {
  Network net;
  explicit Relayed(bool allow = true, std::size_t window = 128 * 1024) {
    RelayLimits limits;
    limits.stream_window = window;
    for (const char* site : {"A", "B", "C"}) net.add(site, site[0], limits);
    a().set_peers({{"B", net["B"].endpoint}});
    a().set_routes({{"C", "B"}});
    c().set_peers({{"B", net["B"].endpoint}});
    c().set_routes({{"A", "B"}});
    b().set_peers({{"A", net["A"].endpoint}, {"C", net["C"].endpoint}});
    if (allow) b().set_relays({{"A", "C"}});
    net.pump();
  }
  Relay& a() { return *net["A"].relay; }
  Relay& b() { return *net["B"].relay; }
  Relay& c() { return *net["C"].relay; }
  // Whether A and C ever sent each other a frame (they must not: only B joins them).
  bool direct() {
    for (const char* from : {"A", "C"}) {
      for (const auto& t : net[from].sent) {
        if (t.site != "B") return true;
      }
    }
    return false;
  }
};

}  // namespace

TEST_CASE("a stream to a routed site goes through the relaying site, in order both ways, FIN after the last byte") {
  Relayed s;
  const Handle near = s.a().connect("C/h:9").handle;
  REQUIRE(near != 0);
  const std::string up = pattern(1500 * 1024, 1), down = pattern(900 * 1024, 2);
  std::size_t fed = 0;
  Handle far = 0;
  for (int i = 0; i < 10000 && fed < up.size(); ++i) {
    fed += s.net.feed("A", near, up.substr(fed));
    s.net.pump(1);
    if (far == 0) far = s.net.dialled("C", "h:9");
  }
  REQUIRE(fed == up.size());
  REQUIRE(far != 0);
  std::size_t back = 0;
  for (int i = 0; i < 10000 && back < down.size(); ++i) {
    back += s.net.feed("C", far, down.substr(back));
    s.net.pump(1);
  }
  s.a().on_local_eof(near);
  s.c().on_local_eof(far);
  s.net.pump();
  CHECK(s.net["C"].locals[far].received == up);
  CHECK(s.net["A"].locals[near].received == down);
  CHECK(s.net["C"].locals[far].shut_down);
  CHECK(s.net["A"].locals[near].shut_down);
  CHECK(s.net["A"].locals[near].closed);
  CHECK_FALSE(s.net["A"].locals[near].reset);
  CHECK_FALSE(s.direct());
  CHECK(s.b().stream_count() == 0);  // both halves ended
  CHECK(s.b().relayed_count() == 0);
  for (const auto& [handle, end] : s.net["B"].locals) CHECK(end.received.empty());  // no socket at B
}

TEST_CASE("a relayed stream's memory at the relay is bounded by its window while the far reader stops") {
  Relayed s(true, 64 * 1024);
  const Handle near = s.a().connect("C/h:9").handle;
  s.net.pump();
  std::size_t fed = 0;
  const std::string up = pattern(4 << 20, 3);
  for (int i = 0; i < 200; ++i) {
    const Handle far = s.net.dialled("C", "h:9");
    if (far != 0) s.net["C"].locals[far].reading = false;
    fed += s.net.feed("A", near, up.substr(fed));
    s.net.pump(1);
  }
  // A's socket stops being read: at most C's window + B's window + B's send queue + A's buffer.
  CHECK(fed <= 64 * 1024 * 2 + 2 * RelayLimits{}.outbound_buffer);
  CHECK(s.b().relayed_count() == 1);
  const std::string status = s.b().status_json();
  CHECK(status.find("\"relayed_streams\":[{\"from\":\"A\",\"target\":\"C/h:9\",\"to\":\"C\"") != std::string::npos);
  // The reader goes on: everything arrives, in order.
  const Handle far = s.net.dialled("C", "h:9");
  s.net["C"].locals[far].reading = true;
  for (int i = 0; i < 100000 && fed < up.size(); ++i) {
    fed += s.net.feed("A", near, up.substr(fed));
    s.net.pump(1);
  }
  s.net.pump();
  CHECK(s.net["C"].locals[far].received == up);
}

TEST_CASE("a reset on either side of a relayed stream resets both halves and the other end") {
  for (const bool near_side : {true, false}) {
    Relayed s;
    const Handle near = s.a().connect("C/h:9").handle;
    s.net.feed("A", near, "hello");
    s.net.pump();
    const Handle far = s.net.dialled("C", "h:9");
    REQUIRE(far != 0);
    REQUIRE(s.b().relayed_count() == 1);
    if (near_side) s.a().on_local_reset(near, "gone");
    else s.c().on_local_reset(far, "gone");
    s.net.pump();
    CHECK(s.net["A"].locals[near].reset);
    CHECK(s.net["C"].locals[far].reset);
    CHECK(s.b().stream_count() == 0);
  }
}

TEST_CASE("the far site refusing the dial resets the stream at its origin") {
  Relayed s;
  s.net["C"].refuse_dials = true;
  const Handle near = s.a().connect("C/h:9").handle;
  s.net.pump();
  CHECK(s.net["A"].locals[near].reset);
  CHECK(s.b().stream_count() == 0);
}

TEST_CASE("a relay refuses pairs it is not configured for, loops and a second hop, with a reason") {
  {
    Relayed s(false);
    const Handle near = s.a().connect("C/h:9").handle;
    s.net.pump();
    CHECK(s.net["A"].locals[near].reset);
    bool logged = false;
    for (const auto& line : s.b().take_log()) logged |= line.find("does not relay between A and C (no 'relay A C' line)") != std::string::npos;
    CHECK(logged);
    CHECK(s.net.dialled("C", "h:9") == 0);
  }
  Relayed s;
  const auto refusal = [&](const std::string& body) {
    // A forged OPEN from A, as a gateway with other routes would send.
    s.b().on_frame(s.net["A"].endpoint, make_frame(FrameKind::kOpen, 77, 0, 0, body));
    auto frame = s.b().poll_transmit();
    while (frame && frame->message.tag != static_cast<std::int32_t>(FrameKind::kClose)) frame = s.b().poll_transmit();
    REQUIRE(frame);
    CHECK(frame->site == "A");
    CHECK(frame->message.context == 1);
    return printable(frame->message);
  };
  CHECK(refusal("A/h:9").find("a relaying loop") != std::string::npos);
  CHECK(refusal("B/h:9").find("relaying gateway itself") != std::string::npos);
  CHECK(refusal("D/h:9").find("does not relay between A and D") != std::string::npos);
  CHECK(refusal("C/h:9:x").find("bad endpoint") != std::string::npos);
  s.b().set_relays({{"A", "C"}, {"A", "D"}});
  CHECK(refusal("D/h:9").find("not a direct peer of B (a stream crosses one relay at most)") != std::string::npos);
  // What B sends on to C names no site: C never relays it further.
  s.net.pump();
  s.a().connect("C/h:9");
  s.net.pump();
  bool plain = false;
  for (const auto& t : s.net["B"].sent) {
    if (t.site == "C" && t.message.tag == static_cast<std::int32_t>(FrameKind::kOpen)) plain = printable(t.message) == "h:9";
  }
  CHECK(plain);
}

TEST_CASE("a dial-in peer gets nothing before its HELLO; then frames go where the HELLO came from") {
  Network net;
  net.add("A", 0xa1);
  net.add("B", 0xb1);  // B only dials out
  net["A"].relay->set_peers({{"B", ""}});
  CHECK(net["A"].relay->connect("B/h:1").error.find("dials in and is not connected") != std::string::npos);
  net.pump();
  CHECK(net["A"].sent.empty());  // not even a HELLO
  CHECK(net["A"].relay->status_json().find("\"mode\":\"dial-in\"") != std::string::npos);
  net["B"].relay->set_peers({{"A", net["A"].endpoint}});
  net.pump();
  CHECK(net["B"].relay->status_json().find("\"mode\":\"dial\"") != std::string::npos);
  // Both ways now, A's frames to B's endpoint as its HELLO named it.
  const Handle from_a = net["A"].relay->connect("B/h:1").handle;
  REQUIRE(from_a != 0);
  const Handle from_b = net["B"].relay->connect("A/h:2").handle;
  net.feed("A", from_a, "to b");
  net.feed("B", from_b, "to a");
  net.pump();
  CHECK(net["B"].locals[net.dialled("B", "h:1")].received == "to b");
  CHECK(net["A"].locals[net.dialled("A", "h:2")].received == "to a");
  for (const auto& t : net["A"].sent) CHECK(t.endpoint == net["B"].endpoint);
  // The engine gives up on B at A: A waits for B's HELLO again rather than asking.
  net["A"].relay->on_peer_failed(net["B"].endpoint, "gone", false);
  const std::size_t sent = net["A"].sent.size();
  net.pump();
  for (std::size_t i = sent; i < net["A"].sent.size(); ++i) {
    CHECK(net["A"].sent[i].message.tag != static_cast<std::int32_t>(FrameKind::kHello));
  }
  CHECK(net["A"].relay->connect("B/h:1").error.find("dials in") != std::string::npos);
}
