// MatchQueue + ReceivePattern: MPI's matching rule for LongPipe's unexpected messages.
#include "match_queue.h"

#include <catch2/catch.hpp>

#include <string>

using lp::mpi::Envelope;
using lp::mpi::kAnySource;
using lp::mpi::kAnyTag;
using lp::mpi::MatchQueue;
using lp::mpi::ReceivePattern;

TEST_CASE("patterns: context always, source and tag unless wildcards") {
  const Envelope message{7, 3, 42};
  CHECK(ReceivePattern{7, 3, 42}.matches(message));
  CHECK(ReceivePattern{7, kAnySource, 42}.matches(message));
  CHECK(ReceivePattern{7, 3, kAnyTag}.matches(message));
  CHECK(ReceivePattern{7, kAnySource, kAnyTag}.matches(message));
  CHECK_FALSE(ReceivePattern{8, kAnySource, kAnyTag}.matches(message));  // another communicator
  CHECK_FALSE(ReceivePattern{7, 2, kAnyTag}.matches(message));
  CHECK_FALSE(ReceivePattern{7, kAnySource, 41}.matches(message));
}

TEST_CASE("queue: the oldest match wins (non-overtaking), others keep their order") {
  MatchQueue<std::string> queue;
  queue.push({0, 1, 5}, "1:5 first");
  queue.push({0, 2, 5}, "2:5");
  queue.push({0, 1, 6}, "1:6");
  queue.push({0, 1, 5}, "1:5 second");
  queue.push({1, 1, 5}, "1:5 other communicator");

  CHECK(queue.find({0, 1, 5}) != nullptr);
  CHECK(*queue.find({0, 1, 5}) == "1:5 first");
  CHECK(queue.size() == 5);  // find leaves it there

  auto taken = queue.take({0, 1, 6});  // a selective receive skips older messages
  REQUIRE(taken);
  CHECK(taken->second == "1:6");
  CHECK(taken->first.tag == 6);
  CHECK(queue.take({0, kAnySource, kAnyTag})->second == "1:5 first");
  CHECK(queue.take({0, 1, kAnyTag})->second == "1:5 second");
  CHECK(queue.take({0, kAnySource, 5})->second == "2:5");
  CHECK_FALSE(queue.take({0, kAnySource, kAnyTag}));
  CHECK(queue.take({1, 1, 5})->second == "1:5 other communicator");
  CHECK(queue.empty());
}

TEST_CASE("queue: messages for a communicator not created yet wait for it") {
  MatchQueue<int> queue;
  queue.push({12, 0, 1}, 99);  // context 12 does not exist here yet
  CHECK_FALSE(queue.take({0, kAnySource, kAnyTag}));
  CHECK(queue.take({12, 0, 1})->second == 99);
}
