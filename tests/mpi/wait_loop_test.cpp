// The front end's one wait loop (libshim/mpi/wait_loop.h) with fake rounds, a fake idle step and a
// fake clock: when it spins, yields or sleeps, that progress restarts the spinning, and that a
// deadline (MPI_Finalize's flush) ends it.
#include "wait_loop.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <vector>

using lp::mpi::IdleStep;
using lp::mpi::kSpinsBeforeYield;
using lp::mpi::run_wait_rounds;
using lp::mpi::WaitRound;
using Clock = std::chrono::steady_clock;

namespace {

struct Recorder {
  std::vector<IdleStep> steps;
  int count(IdleStep step) const {
    int n = 0;
    for (IdleStep s : steps) n += s == step;
    return n;
  }
};

}  // namespace

TEST_CASE("a round that is done at once never idles") {
  Recorder idle;
  int rounds = 0;
  run_wait_rounds([&] { return ++rounds, WaitRound::kDone; }, [&](IdleStep s) { idle.steps.push_back(s); });
  CHECK(rounds == 1);
  CHECK(idle.steps.empty());
}

TEST_CASE("waiting on LongPipe spins, then sleeps on the progress thread's signal") {
  Recorder idle;
  int rounds = 0;
  const int total = kSpinsBeforeYield + 10;
  run_wait_rounds([&] { return ++rounds == total ? WaitRound::kDone : WaitRound::kWaiting; },
                  [&](IdleStep s) { idle.steps.push_back(s); });
  REQUIRE(idle.steps.size() == static_cast<std::size_t>(total - 1));
  CHECK(idle.count(IdleStep::kSpin) == kSpinsBeforeYield - 1);
  CHECK(idle.count(IdleStep::kSleep) == total - kSpinsBeforeYield);
  CHECK(idle.count(IdleStep::kYield) == 0);
  CHECK(idle.steps.back() == IdleStep::kSleep);
}

TEST_CASE("waiting on Open MPI never sleeps: it yields") {
  Recorder idle;
  int rounds = 0;
  run_wait_rounds([&] { return ++rounds == 2 * kSpinsBeforeYield ? WaitRound::kDone : WaitRound::kWaitingOnOpenMpi; },
                  [&](IdleStep s) { idle.steps.push_back(s); });
  CHECK(idle.count(IdleStep::kSleep) == 0);
  CHECK(idle.count(IdleStep::kYield) == kSpinsBeforeYield);
}

TEST_CASE("progress restarts the spinning and does not idle") {
  Recorder idle;
  int rounds = 0;
  // Waiting until just before the sleep, one advance, then waiting again: no sleep until the
  // spins are used up afresh.
  run_wait_rounds(
      [&] {
        ++rounds;
        if (rounds == kSpinsBeforeYield) return WaitRound::kAdvanced;
        if (rounds == 2 * kSpinsBeforeYield) return WaitRound::kDone;
        return WaitRound::kWaiting;
      },
      [&](IdleStep s) { idle.steps.push_back(s); });
  CHECK(idle.steps.size() == static_cast<std::size_t>(2 * kSpinsBeforeYield - 2));
  CHECK(idle.count(IdleStep::kSleep) == 0);
}

TEST_CASE("a deadline ends the wait when the fake clock passes it, not before") {
  Clock::time_point now{};
  const Clock::time_point deadline = now + std::chrono::seconds(60);
  int rounds = 0;
  const bool done = run_wait_rounds([&] { return ++rounds, WaitRound::kWaiting; },
                                    [&](IdleStep) { now += std::chrono::seconds(1); }, deadline, [&] { return now; });
  CHECK_FALSE(done);
  CHECK(rounds == 61);  // rounds at 0 s .. 60 s; at 61 s the deadline has passed
}

TEST_CASE("a wait done before its deadline reports done") {
  Clock::time_point now{};
  int rounds = 0;
  const bool done = run_wait_rounds([&] { return ++rounds == 3 ? WaitRound::kDone : WaitRound::kWaiting; },
                                    [&](IdleStep) { now += std::chrono::milliseconds(1); },
                                    now + std::chrono::seconds(1), [&] { return now; });
  CHECK(done);
  CHECK(rounds == 3);
}
