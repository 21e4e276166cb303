// The mailbox: the window-full policy as a pure function, and the application side's queues
// (send, failures, receive) without a progress thread.
#include <poll.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "arq/arq.h"
#include "driver/mailbox.h"

using namespace lp;
using namespace std::chrono_literals;

namespace {

std::deque<QueuedMessage> outbox_of(std::initializer_list<std::size_t> sizes, std::size_t& bytes) {
  std::deque<QueuedMessage> outbox;
  bytes = 0;
  for (std::size_t size : sizes) {
    outbox.push_back({std::vector<std::byte>(size), size});
    bytes += size;
  }
  return outbox;
}

QueuedMessage queued(std::size_t size) { return {std::vector<std::byte>(size + kMessageTrailerSize), size}; }

}  // namespace

TEST_CASE("window-full policy: room means queue, whatever the policy") {
  std::size_t bytes = 0;
  auto outbox = outbox_of({10, 10}, bytes);
  for (auto policy : {WindowFullPolicy::kBlock, WindowFullPolicy::kFail, WindowFullPolicy::kDropOldest,
                      WindowFullPolicy::kKeepLatest}) {
    CHECK(decide_window_full(policy, outbox, bytes, 10, {3, 100}).action == WindowFullAction::kQueue);
  }
  // An empty outbox always takes a message, even one larger than the byte window.
  std::deque<QueuedMessage> empty;
  CHECK(decide_window_full(WindowFullPolicy::kFail, empty, 0, 1000, {3, 100}).action == WindowFullAction::kQueue);
}

TEST_CASE("window-full policy: full by messages or by bytes") {
  std::size_t bytes = 0;
  auto outbox = outbox_of({10, 20, 30}, bytes);
  CHECK(outbox_full(outbox, bytes, 1, {3, 1000}));        // three messages queued, window 3
  CHECK(outbox_full(outbox, bytes, 41, {10, 100}));       // 60 + 41 bytes > 100
  CHECK_FALSE(outbox_full(outbox, bytes, 40, {10, 100}));
  CHECK(decide_window_full(WindowFullPolicy::kBlock, outbox, bytes, 1, {3, 1000}).action == WindowFullAction::kWait);
  CHECK(decide_window_full(WindowFullPolicy::kFail, outbox, bytes, 1, {3, 1000}).action == WindowFullAction::kRefuse);
}

TEST_CASE("window-full policy: drop-oldest drops the fewest oldest messages that make room, keep-latest all") {
  std::size_t bytes = 0;
  auto outbox = outbox_of({10, 20, 30}, bytes);
  auto by_count = decide_window_full(WindowFullPolicy::kDropOldest, outbox, bytes, 1, {3, 1000});
  CHECK(by_count.action == WindowFullAction::kDrop);
  CHECK(by_count.drop_oldest == 1);
  // 60 + 50 > 100: dropping 10 leaves 100 (fits), so one goes.
  CHECK(decide_window_full(WindowFullPolicy::kDropOldest, outbox, bytes, 50, {10, 100}).drop_oldest == 1);
  // 60 + 60 > 100: 10 goes (110 still), then 20 (90 fits).
  CHECK(decide_window_full(WindowFullPolicy::kDropOldest, outbox, bytes, 60, {10, 100}).drop_oldest == 2);
  // Even 30 + 75 > 100: all go, and the new message waits alone (an empty outbox takes anything).
  CHECK(decide_window_full(WindowFullPolicy::kDropOldest, outbox, bytes, 75, {10, 100}).drop_oldest == 3);
  // keep-latest: everything queued goes, however little room is missing.
  CHECK(decide_window_full(WindowFullPolicy::kKeepLatest, outbox, bytes, 1, {3, 1000}).drop_oldest == 3);
}

TEST_CASE("mailbox: send queues for the progress thread, which moves messages into the ARQ window") {
  Mailbox mailbox(WindowFullPolicy::kFail, {2, 1 << 20});
  mailbox.send("b:1", queued(100));
  mailbox.send("b:1", queued(100));
  CHECK_THROWS_AS(mailbox.send("b:1", queued(100)), WindowFull);
  auto requests = mailbox.take_requests();
  REQUIRE(requests.new_slots.size() == 1);
  CHECK(requests.new_slots[0]->peer == "b:1");
  CHECK(requests.new_slots[0] == mailbox.slot_for("b:1"));
  Arq arq;
  mailbox.move_outbox(*requests.new_slots[0], arq);
  CHECK(requests.new_slots[0]->outbox.empty());
  CHECK_FALSE(arq.all_acknowledged());
  mailbox.send("b:1", queued(100));  // room again
  CHECK(mailbox.take_requests().new_slots.empty());
}

namespace {

bool readable(int fd) {
  pollfd entry{fd, POLLIN, 0};
  return ::poll(&entry, 1, 0) == 1;
}

}  // namespace

TEST_CASE("mailbox: try_send refuses a full queue without waiting or packing; the room event says when it has room") {
  Mailbox mailbox(WindowFullPolicy::kBlock, {2, 1 << 20});  // block: try_send must not wait anyway
  int packed = 0;
  auto pack = [&] {
    ++packed;
    return queued(100);
  };
  CHECK(mailbox.try_send("b:1", 100, pack));
  CHECK(mailbox.try_send("b:1", 100, pack));
  CHECK_FALSE(readable(mailbox.room_event_fd()));
  CHECK_FALSE(mailbox.try_send("b:1", 100, pack));
  CHECK(packed == 2);  // the refused message was not packed
  CHECK_FALSE(readable(mailbox.room_event_fd()));
  Arq arq;
  mailbox.move_outbox(*mailbox.slot_for("b:1"), arq);
  CHECK(readable(mailbox.room_event_fd()));
  std::uint64_t count = 0;
  REQUIRE(::read(mailbox.room_event_fd(), &count, sizeof count) == sizeof count);
  CHECK(mailbox.try_send("b:1", 100, pack));
  CHECK(packed == 3);
  // A failed peer wakes a refused sender too, and then refuses with PeerFailed.
  CHECK(mailbox.try_send("b:1", 100, pack));
  CHECK_FALSE(mailbox.try_send("b:1", 100, pack));
  mailbox.fail(*mailbox.slot_for("b:1"), "gone", 0, SessionStatistics{});
  CHECK(readable(mailbox.room_event_fd()));
  CHECK_THROWS_AS(mailbox.try_send("b:1", 100, pack), PeerFailed);
}

TEST_CASE("mailbox: a failed peer reports its lost messages once and refuses more") {
  Mailbox mailbox(WindowFullPolicy::kBlock, {8, 1 << 20});
  mailbox.send("b:1", queued(10));
  mailbox.send("b:1", queued(10));
  auto slot = mailbox.slot_for("b:1");
  mailbox.fail(*slot, "no sign of life", 3, SessionStatistics{});
  auto failures = mailbox.take_peer_failures();
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].peer_endpoint == "b:1");
  CHECK(failures[0].messages_lost == 5);  // two queued + three unacknowledged
  CHECK(mailbox.take_peer_failures().empty());
  CHECK_THROWS_AS(mailbox.send("b:1", queued(10)), PeerFailed);
  CHECK(mailbox.flush(0ms));  // a failed peer does not hold up flush
}

TEST_CASE("mailbox: received messages wait in order; a full backlog pauses reading") {
  Mailbox mailbox(WindowFullPolicy::kBlock, {2, 1 << 20});
  CHECK_FALSE(mailbox.try_receive());
  CHECK_FALSE(mailbox.wait_receive(1ms));
  std::vector<Message> batch(3);
  for (int i = 0; i < 3; ++i) batch[i].tag = i;
  mailbox.deliver(batch);
  CHECK(batch.empty());
  CHECK(mailbox.wait_receive(0ms));
  CHECK(mailbox.take_requests().reading_paused);
  for (int i = 0; i < 3; ++i) {
    auto message = mailbox.try_receive();
    REQUIRE(message);
    CHECK(message->tag == i);
  }
  CHECK_FALSE(mailbox.take_requests().reading_paused);
}
