// The relay's forwarded streams between two (or three) gateways: order, half-close, credit bounds,
// fairness, a slow stream beside a fast one, its own site.
#include <catch2/catch.hpp>

#include "relay_harness.h"

using namespace lpd;
using namespace lpd::test;

namespace {

RelayLimits small_limits() {
  RelayLimits limits;
  limits.stream_window = 256 * 1024;
  limits.outbound_buffer = 64 * 1024;
  limits.max_data_frame = 16 * 1024;
  return limits;
}

// Sends all of `data` into `handle` at `site`, pumping whenever the budget runs out.
void send_all(Network& net, const std::string& site, Handle handle, const std::string& data) {
  std::size_t done = 0;
  for (int stuck = 0; done < data.size() && stuck < 3;) {
    const std::size_t n = net.feed(site, handle, data.substr(done));
    stuck = n == 0 ? stuck + 1 : 0;
    done += n;
    net.pump();
  }
  REQUIRE(done == data.size());
}

}  // namespace

TEST_CASE("bytes cross both ways in order, intact, and half-close ends the stream cleanly") {
  Network net;
  net.add("A", 0x1111, small_limits());
  net.add("B", 0x2222, small_limits());
  net.connect_all();
  net.pump();
  const auto opened = net["A"].relay->connect("B/10.0.0.5:9000");
  REQUIRE(opened.error.empty());
  const std::string forward = pattern(3 * 1024 * 1024 + 17, 1);
  send_all(net, "A", opened.handle, forward);
  const Handle far = net.dialled("B", "10.0.0.5:9000");
  REQUIRE(far != 0);
  CHECK(net["B"].locals[far].received == forward);

  const std::string backward = pattern(1024 * 1024 + 5, 2);
  send_all(net, "B", far, backward);
  CHECK(net["A"].locals[opened.handle].received == backward);

  // A's process closes its side: B's socket gets FIN after every byte; the stream stays open the
  // other way until B's end closes too.
  net["A"].relay->on_local_eof(opened.handle);
  net.pump();
  CHECK(net["B"].locals[far].shut_down);
  CHECK_FALSE(net["B"].locals[far].closed);
  send_all(net, "B", far, "tail");
  CHECK(net["A"].locals[opened.handle].received == backward + "tail");
  net["B"].relay->on_local_eof(far);
  net.pump();
  CHECK(net["A"].locals[opened.handle].shut_down);
  CHECK(net["A"].locals[opened.handle].closed);
  CHECK_FALSE(net["A"].locals[opened.handle].reset);
  CHECK(net["B"].locals[far].closed);
  CHECK_FALSE(net["B"].locals[far].reset);
  CHECK(net["A"].relay->stream_count() == 0);
  CHECK(net["B"].relay->stream_count() == 0);
}

TEST_CASE("a stream whose reader stops holds at most its window, and resumes losslessly") {
  Network net;
  const RelayLimits limits = small_limits();
  net.add("A", 1, limits);
  net.add("B", 2, limits);
  net.connect_all();
  net.pump();
  const Handle near = net["A"].relay->connect("B/h:1").handle;
  net.pump();
  const Handle far = net.dialled("B", "h:1");
  net["B"].locals[far].reading = false;
  const std::string data = pattern(4 * limits.stream_window, 3);
  std::size_t accepted = 0;
  for (int i = 0; i < 100; ++i) {
    accepted += net.feed("A", near, data.substr(accepted));
    net.pump();
  }
  // The far gateway buffers at most one window; the near one at most its outbound buffer.
  CHECK(accepted <= limits.stream_window + limits.outbound_buffer);
  CHECK(accepted >= limits.stream_window);
  CHECK(net["A"].relay->read_budget(near) == 0);
  CHECK(net["B"].relay->pending_output(far).size() <= limits.stream_window);
  net["B"].locals[far].reading = true;
  send_all(net, "A", near, data.substr(accepted));
  CHECK(net["B"].locals[far].received == data);
}

TEST_CASE("a stream whose reader is stopped does not slow another one to the same site") {
  Network net;
  net.add("A", 1, small_limits());
  net.add("B", 2, small_limits());
  net.connect_all();
  const Handle slow = net["A"].relay->connect("B/h:1").handle;
  const Handle fast = net["A"].relay->connect("B/h:2").handle;
  net.pump();
  net["B"].locals[net.dialled("B", "h:1")].reading = false;
  net.feed("A", slow, pattern(2 * 1024 * 1024, 4));
  const std::string data = pattern(8 * 1024 * 1024, 5);
  send_all(net, "A", fast, data);
  CHECK(net["B"].locals[net.dialled("B", "h:2")].received == data);
  CHECK(net["B"].locals[net.dialled("B", "h:1")].received.empty());
}

TEST_CASE("frames take turns between streams and between destination sites") {
  Network net;
  net.add("A", 1, small_limits());
  net.add("B", 2, small_limits());
  net.add("C", 3, small_limits());
  net.connect_all();
  net.pump();
  Relay& a = *net["A"].relay;
  const Handle b1 = a.connect("B/h:1").handle;
  const Handle b2 = a.connect("B/h:2").handle;
  const Handle c1 = a.connect("C/h:3").handle;
  for (Handle h : {b1, b2, c1}) net.feed("A", h, pattern(64 * 1024, static_cast<unsigned>(h)));
  std::vector<std::pair<std::string, std::uint32_t>> order;
  while (auto t = a.poll_transmit()) {
    if (t->message.tag == static_cast<std::int32_t>(FrameKind::kData)) order.emplace_back(t->site, t->message.source);
  }
  REQUIRE(order.size() >= 8);
  // Sites alternate (while both have data), and B's two streams alternate within B's turns.
  for (std::size_t i = 0; i + 1 < 8; ++i) CHECK(order[i].first != order[i + 1].first);
  std::vector<std::uint32_t> b_ids;
  for (const auto& [site, id] : order) {
    if (site == "B") b_ids.push_back(id);
  }
  for (std::size_t i = 0; i + 1 < 4; ++i) CHECK(b_ids[i] != b_ids[i + 1]);
}

TEST_CASE("a site whose session is full is skipped; the others go on") {
  Network net;
  net.add("A", 1, small_limits());
  net.add("B", 2, small_limits());
  net.add("C", 3, small_limits());
  net.connect_all();
  net.pump();
  Relay& a = *net["A"].relay;
  const Handle b = a.connect("B/h:1").handle;
  const Handle c = a.connect("C/h:1").handle;
  net.feed("A", b, "to b");
  net.feed("A", c, "to c");
  a.set_blocked("B", true);
  while (auto t = a.poll_transmit()) CHECK(t->site == "C");
  a.set_blocked("B", false);
  bool b_sent = false;
  while (auto t = a.poll_transmit()) b_sent = b_sent || t->site == "B";
  CHECK(b_sent);
}

TEST_CASE("a CONNECT to the gateway's own site is dialled by itself") {
  Network net;
  net.add("A", 1, small_limits());
  net.add("B", 2, small_limits());
  net.connect_all();
  const auto opened = net["A"].relay->connect("A/127.0.0.1:5000");
  REQUIRE(opened.error.empty());
  const std::string data = pattern(1024 * 1024, 6);
  send_all(net, "A", opened.handle, data);
  const Handle far = net.dialled("A", "127.0.0.1:5000");
  REQUIRE(far != 0);
  CHECK(net["A"].locals[far].received == data);
  send_all(net, "A", far, "answer");
  CHECK(net["A"].locals[opened.handle].received == "answer");
  for (const auto& t : net["A"].sent) CHECK(t.message.tag == static_cast<std::int32_t>(FrameKind::kHello));
}

TEST_CASE("a CONNECT is refused at once for an unknown site, a bad endpoint, or too many streams") {
  RelayLimits limits = small_limits();
  limits.max_streams = 2;
  Network net;
  net.add("A", 1, limits);
  net.add("B", 2, limits);
  net.connect_all();
  Relay& a = *net["A"].relay;
  CHECK(a.connect("Z/h:1").error == "unknown site Z");
  CHECK_FALSE(a.connect("B/h").error.empty());
  CHECK_FALSE(a.connect("B/h:0").error.empty());
  CHECK_FALSE(a.connect("B/h:70000").error.empty());
  CHECK_FALSE(a.connect("h:1").error.empty());
  CHECK_FALSE(a.connect("bad site/h:1").error.empty());
  CHECK(a.connect("B/h:1").error.empty());
  CHECK(a.connect("B/[::1]:2").error.empty());
  CHECK(a.connect("B/h:3").error.find("too many streams") == 0);
}

TEST_CASE("a dial that fails at the far site resets the stream at the near one") {
  Network net;
  net.add("A", 1, small_limits());
  net.add("B", 2, small_limits());
  net.connect_all();
  net["B"].refuse_dials = true;
  const Handle near = net["A"].relay->connect("B/h:1").handle;
  net.feed("A", near, "hello");
  net.pump();
  CHECK(net["A"].locals[near].closed);
  CHECK(net["A"].locals[near].reset);
  CHECK(net["A"].relay->stream_count() == 0);
  CHECK(net["B"].relay->stream_count() == 0);
}

TEST_CASE("bytes that came before a reset reach the local socket before its close") {
  // A process's peer writes its last words (a handshake's refusal) and closes with a reset: the
  // process must read them, as over a direct TCP connection.
  Network net;
  net.add("A", 1, small_limits());
  net.add("B", 2, small_limits());
  net.connect_all();
  const Handle near = net["A"].relay->connect("B/h:1").handle;
  net.feed("A", near, "hello");
  net.pump();
  const Handle far = net.dialled("B", "h:1");
  REQUIRE(far != 0);
  REQUIRE(net["B"].locals[far].received == "hello");
  net["A"].locals[near].reading = false;  // the words wait in A until the process reads
  CHECK(net.feed("B", far, "refused: another key") == 20);
  net.pump();
  CHECK(net["A"].locals[near].received.empty());
  net["B"].relay->on_local_reset(far, "read: Connection reset by peer");
  net.pump();
  CHECK(net["A"].locals[near].closed);
  CHECK(net["A"].locals[near].reset);
  CHECK(net["A"].locals[near].received == "refused: another key");
  CHECK(net["A"].relay->stream_count() == 0);
  CHECK(net["B"].relay->stream_count() == 0);
}
