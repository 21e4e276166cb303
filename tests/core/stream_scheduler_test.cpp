// The stream scheduler: slots and dials, the tie-break both ends evaluate alike, round-robin
// striping that skips full streams, the small/large split, and spilling a full window's frames
// onto spill streams (fake TCP_INFO samples). No sockets: connections are the
// protocol's view only, their output filled by hand.
#include <catch2/catch.hpp>

#include <limits>
#include <map>

#include "session/connection.h"
#include "carrier/tcp/idle_restart.h"
#include "session/stream_scheduler.h"

using namespace lp;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kSmall = 32 * 1024;
const Authenticator kKey("secret");

std::unique_ptr<Connection> make_connection(std::size_t stream, bool outgoing = true) {
  const auto now = Connection::Clock::time_point{} + 1s;
  auto handshake = outgoing ? Handshake::dialler(kKey, "a:1", stream, std::vector<std::byte>(kNonceSize),
                                                Protection::kEncrypt, std::vector<std::byte>(kIdentityTokenSize), now)
                            : Handshake::acceptor(kKey, std::vector<std::byte>(kNonceSize), Protection::kEncrypt, now);
  auto connection = std::make_unique<Connection>(std::move(handshake), now);
  connection->stream = stream;
  return connection;
}

void fill_output(Connection& connection, std::size_t bytes) { connection.output().resize(bytes); }

// Connections on our regular streams 0 .. regular - 1 and on 8 spill streams, installed in
// `scheduler`: a fresh session's streams as the spill cases below trace them.
std::vector<std::unique_ptr<Connection>> install_with_spill_streams(StreamScheduler& scheduler, std::size_t regular) {
  std::vector<std::unique_ptr<Connection>> connections;
  for (std::size_t slot = 0; slot < regular; ++slot) connections.push_back(make_connection(slot));
  for (std::size_t i = 0; i < 8; ++i) connections.push_back(make_connection(kFirstSpillStream + i));
  for (auto& connection : connections) scheduler.install(*connection);
  return connections;
}

}  // namespace

TEST_CASE("stream scheduler: our own empty slots are dialled, peer-announced ones are not") {
  StreamScheduler scheduler(2, kSmall);
  CHECK(scheduler.slots_to_dial() == std::vector<std::size_t>{0, 1});
  auto dial = make_connection(1);
  scheduler.add_attempt(1, dial.get());
  CHECK(scheduler.slots_to_dial() == std::vector<std::size_t>{0});
  CHECK(scheduler.install(*dial) == nullptr);
  CHECK(scheduler.attempts(1).empty());
  CHECK(scheduler.holds(*dial));
  CHECK(scheduler.first() == dial.get());
  CHECK(scheduler.established() == 1);

  auto extra = make_connection(5, false);  // the peer uses more streams than we do
  scheduler.install(*extra);
  CHECK(scheduler.slots() == 6);
  CHECK(scheduler.slots_to_dial() == std::vector<std::size_t>{0});

  CHECK(scheduler.remove(*dial));
  CHECK_FALSE(scheduler.holds(*dial));
  CHECK_FALSE(scheduler.remove(*dial));
  CHECK(scheduler.slots_to_dial() == std::vector<std::size_t>{0, 1});
}

TEST_CASE("stream scheduler: install returns the connection it displaced") {
  StreamScheduler scheduler(1, 0);
  auto older = make_connection(0);
  auto newer = make_connection(0);
  scheduler.install(*older);
  CHECK(scheduler.install(*newer) == older.get());
  CHECK(scheduler.holds(*newer));
  CHECK_FALSE(scheduler.holds(*older));
}

TEST_CASE("stream scheduler: the tie-break keeps the connection dialled by the smaller endpoint, on both ends") {
  const std::string a = "site-a:4000", b = "site-b:4000";
  // Both dialled stream 0 at once. Site a holds its own dial and sees b's arrive, and vice versa.
  const bool a_keeps_own = StreamScheduler::keep_existing(a, b);
  const bool b_keeps_own = StreamScheduler::keep_existing(b, a);
  CHECK(a_keeps_own);
  CHECK_FALSE(b_keeps_own);  // b drops its own and keeps a's: both keep a's dial
  // The other order of arrival gives the same survivor.
  CHECK_FALSE(StreamScheduler::keep_existing(b, a));
  // Two connections dialled by the same side: the newer replaces the older (a redial).
  CHECK_FALSE(StreamScheduler::keep_existing(a, a));
}

TEST_CASE("stream scheduler: striping goes round robin and skips a stream whose output is full") {
  StreamScheduler scheduler(3, 0);
  auto s0 = make_connection(0), s1 = make_connection(1), s2 = make_connection(2);
  for (auto* c : {s0.get(), s1.get(), s2.get()}) scheduler.install(*c);
  std::vector<Connection*> order;
  for (int i = 0; i < 6; ++i) {
    Connection* next = scheduler.next_with_room();
    REQUIRE(next != nullptr);
    CHECK(scheduler.by_size(100) == nullptr);  // no size split when LONGPIPE_SMALL_MESSAGE=0
    order.push_back(next);
    scheduler.sent_on(*next);
  }
  CHECK(order == std::vector<Connection*>{s0.get(), s1.get(), s2.get(), s0.get(), s1.get(), s2.get()});

  fill_output(*s1, StreamScheduler::kOutputHighWater);
  scheduler.sent_on(*s0);  // s1 would be next
  CHECK(scheduler.next_with_room() == s2.get());
  fill_output(*s0, StreamScheduler::kOutputHighWater);
  fill_output(*s2, StreamScheduler::kOutputHighWater);
  CHECK(scheduler.next_with_room() == nullptr);  // everything waits for the carrier
}

TEST_CASE("stream scheduler: small messages on stream 0, large ones round robin over the others") {
  StreamScheduler scheduler(3, kSmall);
  auto s0 = make_connection(0), s1 = make_connection(1), s2 = make_connection(2);
  for (auto* c : {s0.get(), s1.get(), s2.get()}) scheduler.install(*c);
  CHECK(scheduler.by_size(kSmall + kMessageTrailerSize) == s0.get());  // the limit counts the body
  CHECK(scheduler.by_size(1) == s0.get());
  Connection* first_large = scheduler.by_size(kSmall + kMessageTrailerSize + 1);
  Connection* second_large = scheduler.by_size(1 << 20);
  CHECK(first_large != s0.get());
  CHECK(second_large != s0.get());
  CHECK(first_large != second_large);

  CHECK(scheduler.has_room_for(1));
  CHECK(scheduler.has_room_for(1 << 20));

  SECTION("a full large stream is skipped while another has room") {
    fill_output(*s1, StreamScheduler::kOutputHighWater);
    CHECK(scheduler.by_size(1 << 20) == s2.get());
    CHECK(scheduler.by_size(1 << 20) == s2.get());
    CHECK(scheduler.has_room_for(1 << 20));
  }
  SECTION("with every large stream full, a large message still waits for one of them, not stream 0") {
    fill_output(*s1, StreamScheduler::kOutputHighWater);
    fill_output(*s2, StreamScheduler::kOutputHighWater);
    Connection* chosen = scheduler.by_size(1 << 20);
    CHECK((chosen == s1.get() || chosen == s2.get()));
    CHECK_FALSE(scheduler.has_room_for(1 << 20));  // stream 0's room is not for it
    CHECK(scheduler.has_room_for(1));
  }
  SECTION("a full stream 0 has no room for small messages, even if the large streams have") {
    fill_output(*s0, StreamScheduler::kOutputHighWater);
    CHECK_FALSE(scheduler.has_room_for(1));
    CHECK(scheduler.has_room_for(1 << 20));
  }
  SECTION("no large stream up: the caller picks any") {
    scheduler.remove(*s1);
    scheduler.remove(*s2);
    CHECK(scheduler.by_size(1 << 20) == nullptr);
    CHECK(scheduler.has_room_for(1 << 20));  // it goes on stream 0, which has room
    fill_output(*s0, StreamScheduler::kOutputHighWater);
    CHECK_FALSE(scheduler.has_room_for(1 << 20));
  }
}

TEST_CASE("stream scheduler: one stream means no size split") {
  StreamScheduler scheduler(1, kSmall);
  auto s0 = make_connection(0);
  scheduler.install(*s0);
  CHECK(scheduler.by_size(1 << 20) == nullptr);
  CHECK(scheduler.next_with_room() == s0.get());
  CHECK(scheduler.has_room_for(1 << 20));
  fill_output(*s0, StreamScheduler::kOutputHighWater);
  CHECK_FALSE(scheduler.has_room_for(1));
}

TEST_CASE("stream scheduler: after an outage DATA avoids the suspect streams while a fresh one is up") {
  StreamScheduler scheduler(3, kSmall);
  auto zero = make_connection(0), one = make_connection(1), two = make_connection(2);
  for (auto* c : {zero.get(), one.get(), two.get()}) {
    scheduler.install(*c);
    c->suspect = true;  // the path fell silent
  }
  // All suspect: they carry on as before (nothing better).
  CHECK(scheduler.by_size(100) == zero.get());
  CHECK(scheduler.next_with_room() != nullptr);
  // Stream 1 replaced by a fresh connection: it takes everything, small messages included.
  auto fresh = make_connection(1);
  scheduler.install(*fresh);
  CHECK(scheduler.by_size(100) == nullptr);  // stream 0 is suspect: the caller takes next_with_room()
  CHECK(scheduler.by_size(2 * kSmall) == fresh.get());
  for (int frame = 0; frame < 4; ++frame) {
    Connection* next = scheduler.next_with_room();
    CHECK(next == fresh.get());
    scheduler.sent_on(*next);
  }
  CHECK(scheduler.has_room_for(100));
  fill_output(*fresh, StreamScheduler::kOutputHighWater);
  CHECK(scheduler.next_with_room() == nullptr);  // waits for the fresh one rather than a stuck one
  CHECK_FALSE(scheduler.has_room_for(100));
}

namespace {

// TCP_INFO as the spill decision sees it: `cwnd` and `in_flight` in segments of 1448 bytes.
StreamWindow window_of(std::size_t cwnd, std::size_t in_flight, std::size_t not_sent = 0) {
  constexpr std::size_t kMss = 1448;
  return StreamWindow{true, cwnd * kMss, in_flight * kMss, not_sent};
}

constexpr double kGeoBdp = 155e6 / 8 * 0.540;  // 10.5 MB
constexpr std::size_t kFrame = 1100;           // a 1 KiB message on the wire

}  // namespace

TEST_CASE("spill decision: only a full window below the path's BDP spills") {
  // A fresh connection's initial window with the handshake's segment in flight: 9 x 1448 free.
  CHECK(StreamScheduler::window_room(window_of(10, 1), 0) == 9 * 1448);
  CHECK(StreamScheduler::window_room(window_of(10, 1), 9 * 1448 - kFrame) == kFrame);
  CHECK_FALSE(StreamScheduler::should_spill(window_of(10, 1), 9 * 1448 - kFrame, kFrame, kGeoBdp));
  CHECK(StreamScheduler::should_spill(window_of(10, 1), 9 * 1448 - kFrame + 1, kFrame, kGeoBdp));
  // Bytes the socket holds unsent count like our own pending output; so do segments in flight.
  CHECK(StreamScheduler::should_spill(window_of(10, 1, 9 * 1448), 0, kFrame, kGeoBdp));
  CHECK(StreamScheduler::should_spill(window_of(10, 10), 0, kFrame, kGeoBdp));
  CHECK(StreamScheduler::window_room(window_of(10, 12), 0) == 0);  // more in flight than the window (recovery)
  // A warm window covers the demand: nothing spills.
  CHECK_FALSE(StreamScheduler::should_spill(window_of(116, 0), 75 * 1448, kFrame, kGeoBdp));
  // A window that covers the path: a wait is the link's, not slow start's (a warm 1 MiB stream).
  CHECK_FALSE(StreamScheduler::should_spill(window_of(7300, 7300, 4u << 20), 0, 1u << 20, kGeoBdp));
  // On a 20 ms path at the stand-in rate the BDP is 387 KB: a window of 300 segments covers it.
  CHECK_FALSE(StreamScheduler::should_spill(window_of(300, 300), 0, kFrame, 155e6 / 8 * 0.020));
  CHECK(StreamScheduler::should_spill(window_of(200, 200), 0, kFrame, 155e6 / 8 * 0.020));
  // Without TCP_INFO nothing is judged.
  CHECK_FALSE(StreamScheduler::should_spill(StreamWindow{}, 0, kFrame, kGeoBdp));
}

TEST_CASE("spill target: the first spill stream whose window takes the frame whole, never a regular one") {
  StreamScheduler scheduler(2, kSmall);
  auto small = make_connection(0);
  auto large = make_connection(1);
  auto spill_a = make_connection(kFirstSpillStream);
  auto spill_b = make_connection(kFirstSpillStream + 1);
  scheduler.install(*small);
  scheduler.install(*large);
  std::map<const Connection*, StreamWindow> windows;
  const StreamScheduler::WindowLookup lookup = [&](const Connection& c) { return windows[&c]; };
  windows[small.get()] = window_of(10, 10);
  windows[large.get()] = window_of(10, 0);
  CHECK(scheduler.spill_target(*small, kFrame, kGeoBdp, lookup) == nullptr);  // no spill stream up

  scheduler.install(*spill_a);
  scheduler.install(*spill_b);
  CHECK(scheduler.spill_established() == 2);
  CHECK(scheduler.established() == 4);
  windows[spill_a.get()] = window_of(10, 10);  // full too
  windows[spill_b.get()] = window_of(10, 1);
  CHECK(scheduler.spill_target(*small, kFrame, kGeoBdp, lookup) == spill_b.get());
  fill_output(*spill_b, 9 * 1448 - kFrame + 1);  // encoded in this pump, not yet written
  CHECK(scheduler.spill_target(*small, kFrame, kGeoBdp, lookup) == nullptr);  // it waits for its stream
  windows[spill_a.get()] = window_of(20, 0);
  CHECK(scheduler.spill_target(*small, kFrame, kGeoBdp, lookup) == spill_a.get());
  spill_a->suspect = true;  // established before a silence: not trusted with new data
  CHECK(scheduler.spill_target(*small, kFrame, kGeoBdp, lookup) == nullptr);
  spill_a->suspect = false;

  // A frame larger than any spill stream's free window (and than an initial window) queues on the
  // one that sends it in the fewest windows: spill_a's 20 free segments, 2 windows, against 5 for its
  // own full window of 10 and spill_b's 4.9 (LONGPIPE_SPILL_LARGE; off, it waits: below).
  CHECK(scheduler.spill_target(*small, 40 * 1448, kGeoBdp, lookup) == spill_a.get());
  // The preferred stream with room keeps the frame.
  windows[small.get()] = window_of(40, 0);
  CHECK(scheduler.spill_target(*small, kFrame, kGeoBdp, lookup) == nullptr);

  // Spill streams never take DATA in turn, nor large messages by size.
  for (int i = 0; i < 8; ++i) {
    Connection* next = scheduler.next_with_room();
    REQUIRE(next != nullptr);
    CHECK_FALSE(StreamScheduler::is_spill_slot(next->stream));
    scheduler.sent_on(*next);
    CHECK(scheduler.by_size(64 * 1024) == large.get());
  }
  // Only when no regular stream is up does a spill stream carry.
  scheduler.remove(*small);
  scheduler.remove(*large);
  CHECK(StreamScheduler::is_spill_slot(scheduler.next_with_room()->stream));
}

TEST_CASE("spill target: a warm batch after idle spills only what the restarted windows send at once") {
  // The first warm batch at 50 ms one-way, 155 Mbit/s (lp-perf 1 KiB x 100, --pings 3): stream 0
  // kept busy by the pings at 20 segments; the 8 spill streams grew to 20 in the cold batch, then
  // idled 448 ms, past their RTO of 304 ms, so each one's next write restarts it at 10.
  StreamScheduler scheduler(2, kSmall);
  const auto connections = install_with_spill_streams(scheduler, 2);
  Connection& small = *connections[0];
  TcpWindowSample busy;  // TCP_INFO of stream 0: 20 segments, the last ping's answer in flight
  busy.cwnd_segments = 20;
  busy.mss = 1448;
  busy.last_data_sent_ms = 5;
  busy.rto_us = 304'000;
  TcpWindowSample idle = busy;  // TCP_INFO of a spill stream
  idle.last_data_sent_ms = 448;
  const StreamScheduler::WindowLookup lookup = [&](const Connection& c) {
    return window_for_next_write(StreamScheduler::is_spill_slot(c.stream) ? idle : busy, true);
  };

  // The pump's loop: each frame to stream 0 unless a spill stream takes it.
  constexpr std::size_t kBatch = 100;
  std::size_t waiting = 0;  // frames left in stream 0's output beyond its window: a round trip later
  for (std::size_t i = 0; i < kBatch; ++i) {
    Connection* target = scheduler.spill_target(small, kFrame, kGeoBdp, lookup);
    if (target == nullptr) {
      target = &small;
      if (StreamScheduler::window_room(lookup(small), small.pending_output()) < kFrame) ++waiting;
    }
    fill_output(*target, target->pending_output() + kFrame);
  }
  CHECK(waiting == 0);  // the whole batch leaves in this round trip
  // No spill stream holds more than the 10 segments its restarted window sends at once.
  for (std::size_t i = 2; i < connections.size(); ++i) CHECK(connections[i]->pending_output() <= 10 * 1448);
  CHECK(small.pending_output() == 26 * kFrame);  // stream 0 fills its own window first
}

TEST_CASE("spill decision: how many windows a stream needs for a frame, and the budget") {
  constexpr std::size_t kLarge = 64 * 1024 + 64;  // a 64 KiB message on the wire
  // A fresh window of 10 segments, the handshake's segment in flight: 1 + 45.3 segments' worth.
  CHECK(StreamScheduler::windows_to_send(window_of(10, 1), 0, kLarge) == Approx((1448.0 + kLarge) / 14480));
  CHECK(StreamScheduler::windows_to_send(window_of(10, 0, 1000), 500, kLarge) == Approx((1500.0 + kLarge) / 14480));
  CHECK(StreamScheduler::windows_to_send(StreamWindow{}, 0, kLarge) == std::numeric_limits<double>::infinity());
  CHECK(StreamScheduler::windows_to_send(window_of(0, 0), 0, kLarge) == std::numeric_limits<double>::infinity());
  // The budget: the spill streams' bytes plus the regular streams' flight within one BDP.
  const double bdp = 155e6 / 8 * 0.050;  // 25 ms one way: 969 KB, the emulator's queue too
  CHECK(StreamScheduler::within_spill_budget(0, 0, kLarge, bdp));
  CHECK(StreamScheduler::within_spill_budget(900'000, 0, 68'750, bdp));
  CHECK_FALSE(StreamScheduler::within_spill_budget(900'000, 0, 68'751, bdp));
  CHECK_FALSE(StreamScheduler::within_spill_budget(610'000, 300'000, kLarge, bdp));
}

namespace {

// A fresh session on `path_bdp` with every window `cwnd` segments (none in flight) and `frames`
// frames of `frame_bytes` offered as Session::pump offers them: each to stream 1 unless a spill
// stream takes it. Returns the bytes each connection holds (stream 0, stream 1, 8 spill streams).
std::vector<std::size_t> offer_large_batch(bool spill_large, std::size_t frames, std::size_t frame_bytes,
                                           double path_bdp, std::size_t cwnd = 10) {
  StreamScheduler scheduler(2, kSmall, spill_large);
  const auto connections = install_with_spill_streams(scheduler, 2);
  const StreamScheduler::WindowLookup lookup = [&](const Connection&) { return window_of(cwnd, 0); };
  Connection& large = *connections[1];
  for (std::size_t i = 0; i < frames; ++i) {
    Connection* target = scheduler.spill_target(large, frame_bytes, path_bdp, lookup);
    if (target == nullptr) target = &large;
    fill_output(*target, target->pending_output() + frame_bytes);
  }
  std::vector<std::size_t> held;
  for (auto& connection : connections) held.push_back(connection->pending_output());
  return held;
}

}  // namespace

TEST_CASE("spill target: a fresh session's large frames queue on the spill streams, spread over their windows") {
  // geo, 64 KiB x 100 (the PVM headline's first batch): no frame fits any initial window whole.
  constexpr std::size_t kLarge = 64 * 1024 + 64;
  const std::vector<std::size_t> held = offer_large_batch(true, 100, kLarge, kGeoBdp);
  CHECK(held[0] == 0);  // never on the small-message stream
  // Nine initial windows carry the batch: each of stream 1 and the 8 spill streams gets 11 or 12
  // frames, in turn, as the fewest windows to send it picks them.
  for (std::size_t i = 1; i < held.size(); ++i) {
    CHECK(held[i] >= 11 * kLarge);
    CHECK(held[i] <= 12 * kLarge);
  }
  // Off (LONGPIPE_SPILL_LARGE=off), as before: everything waits for stream 1's slow start.
  const std::vector<std::size_t> off = offer_large_batch(false, 100, kLarge, kGeoBdp);
  CHECK(off[1] == 100 * kLarge);
  // A 1 KiB frame never queues behind a spill stream's window: with every window full it stays.
  StreamScheduler scheduler(2, kSmall);
  auto small = make_connection(0);
  auto spill = make_connection(kFirstSpillStream);
  scheduler.install(*small);
  scheduler.install(*spill);
  const StreamScheduler::WindowLookup full = [&](const Connection& c) {
    return c.stream == 0 ? window_of(10, 10, 5 * 14480) : window_of(10, 10);
  };
  CHECK(scheduler.spill_target(*small, kFrame, kGeoBdp, full) == nullptr);
  CHECK(scheduler.spill_target(*small, kLarge, kGeoBdp, full) == spill.get());
}

TEST_CASE("spill target: the spill streams hold at most one BDP with the regular streams' flight") {
  // 25 ms one way, 155 Mbit/s: BDP and the emulator's queue 969 KB. 64 KiB x 100 at once: ten slow
  // starts side by side would put all 6.6 MB in the sockets; the spill streams take one BDP's worth.
  constexpr std::size_t kLarge = 64 * 1024 + 64;
  const double bdp = 155e6 / 8 * 0.050;
  const std::vector<std::size_t> held = offer_large_batch(true, 100, kLarge, bdp);
  std::size_t spilled = 0;
  for (std::size_t i = 2; i < held.size(); ++i) spilled += held[i];
  CHECK(spilled <= bdp);
  CHECK(spilled + kLarge > bdp);  // and fills it
  CHECK(held[1] == 100 * kLarge - spilled);

  // Small frames too: warm-ish spill streams with room for 1.16 MB take no more than the BDP less
  // what the regular streams have in flight (stream 0: 50 segments, all in flight).
  StreamScheduler scheduler(2, kSmall);
  const auto connections = install_with_spill_streams(scheduler, 1);
  const StreamScheduler::WindowLookup lookup = [&](const Connection& c) {
    return c.stream == 0 ? window_of(50, 50) : window_of(100, 0);
  };
  std::size_t small_spilled = 0;
  for (int i = 0; i < 1000; ++i) {
    Connection* target = scheduler.spill_target(*connections[0], kFrame, bdp, lookup);
    if (target == nullptr) break;
    fill_output(*target, target->pending_output() + kFrame);
    small_spilled += kFrame;
  }
  CHECK(small_spilled + 50 * 1448 <= bdp);
  CHECK(small_spilled + 50 * 1448 + kFrame > bdp);
}

TEST_CASE("spill target: after a pause, a paced (bbr) stream 0 keeps only what its pacing sends soon") {
  // lp-perf 1 KiB x 100 with a pause of 1 s before every batch: the idle fallback had switched
  // stream 0 to bbr, whose window showed room for 45 segments, so 45 KB went to it and left at its
  // pacing rate (the rate it measured from earlier 1 KiB batches: ~200 KB/s) over much of a round
  // trip, while spill streams, each good for an initial window at once, stayed unused.
  StreamScheduler scheduler(2, kSmall);
  const auto connections = install_with_spill_streams(scheduler, 2);
  Connection& small = *connections[0];
  TcpWindowSample paced;  // TCP_INFO of stream 0, on bbr (no idle restart)
  paced.cwnd_segments = 45;
  paced.mss = 1448;
  paced.last_data_sent_ms = 1600;
  paced.rto_us = 1'012'000;
  paced.paced = true;
  paced.pacing_rate = 200'000;
  paced.srtt_us = 540'000;
  TcpWindowSample idle = paced;  // a spill stream, cubic: restarted to 10 segments on its next write
  idle.cwnd_segments = 20;
  idle.paced = false;
  const StreamScheduler::WindowLookup lookup = [&](const Connection& c) {
    const bool spill = StreamScheduler::is_spill_slot(c.stream);
    return window_for_next_write(spill ? idle : paced, spill);
  };
  const double soon = 200'000 * 0.540 * kPacedRoomRttShare;  // what bbr sends in 1/32 round trip

  std::size_t waiting = 0;  // frames stream 0's pacing holds back past 1/16 of a round trip
  for (std::size_t i = 0; i < 100; ++i) {
    Connection* target = scheduler.spill_target(small, kFrame, kGeoBdp, lookup);
    if (target == nullptr) {
      target = &small;
      if (StreamScheduler::window_room(lookup(small), small.pending_output()) < kFrame) ++waiting;
    }
    fill_output(*target, target->pending_output() + kFrame);
  }
  CHECK(waiting == 0);
  CHECK(static_cast<double>(small.pending_output()) <= soon);
  for (std::size_t i = 2; i < connections.size(); ++i) CHECK(connections[i]->pending_output() <= 10 * 1448);
}

TEST_CASE("spill target: after the pings, large frames queue on paced spill streams for their whole window") {
  // geo, lp-perf 64 KiB x 100, the batch after the cold one (traced with ss): the idle fallback
  // had switched the spill streams to bbr, windows of 600 segments each kept from the cold batch;
  // counted as room only what pacing sends in 1/32 round trip (73 KB), each took a frame or two a
  // round trip while stream 1 (bbr, 441 segments) slow-started under the rest: 2.55x, then 1.6x.
  constexpr std::size_t kLarge = 64 * 1024 + 64;
  StreamScheduler scheduler(2, kSmall);
  const auto connections = install_with_spill_streams(scheduler, 2);
  Connection& large = *connections[1];
  TcpWindowSample spill;  // bbr, nothing in flight after the pause
  spill.cwnd_segments = 600;
  spill.mss = 1448;
  spill.paced = true;
  spill.srtt_us = 540'000;
  spill.pacing_rate = bbr_initial_pacing_rate(600, 1448, 540'000);
  TcpWindowSample regular = spill;  // stream 1: bbr by configuration, never capped by its pacing
  regular.cwnd_segments = 441;
  regular.paced = false;
  const StreamScheduler::WindowLookup lookup = [&](const Connection& c) {
    if (StreamScheduler::is_spill_slot(c.stream)) return window_for_next_write(spill, false);
    StreamWindow window = window_for_next_write(regular, false);
    window.window /= 2;  // a configured bbr stream counts half its window a round trip (tcp_carrier.cpp)
    window.round_trip_window /= 2;
    return window;
  };
  REQUIRE(lookup(*connections[2]).window < 2 * kLarge);  // the paced cap: room for a frame, not more

  for (std::size_t i = 0; i < 100; ++i) {
    Connection* target = scheduler.spill_target(large, kLarge, kGeoBdp, lookup);
    if (target == nullptr) target = &large;
    fill_output(*target, target->pending_output() + kLarge);
  }
  // Each spill stream's 869 KB window takes its share; stream 1's 319 KB a round trip keeps few.
  CHECK(large.pending_output() <= 6 * kLarge);
  for (std::size_t i = 2; i < connections.size(); ++i) CHECK(connections[i]->pending_output() >= 11 * kLarge);
}
