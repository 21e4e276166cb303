// The one wait loop of the MPI front end, MPI-free: every wait, test-until, probe, collective
// transfer and the flush at MPI_Finalize runs rounds of its own `round` (progress, then a look at
// what it waits for) through run_wait_rounds, which decides how to idle between them. The front
// end supplies the round and carries out the idle step (front_end_completion.cpp); the unit test
// drives both with fakes and a fake clock (tests/mpi/wait_loop_test.cpp).
#pragma once

#include <chrono>
#include <optional>

namespace lp::mpi {

// Rounds of a wait loop without progress before it starts giving the core away.
inline constexpr int kSpinsBeforeYield = 64;

// What one round found: kDone ends the wait; kAdvanced (something completed, more is waited for)
// restarts the spinning; kWaiting may sleep on the progress thread's signal (only LongPipe can
// complete what is waited for); kWaitingOnOpenMpi only yields (Open MPI must keep moving).
enum class WaitRound { kDone, kAdvanced, kWaiting, kWaitingOnOpenMpi };

inline WaitRound waiting(bool native_pending) {
  return native_pending ? WaitRound::kWaitingOnOpenMpi : WaitRound::kWaiting;
}

// How a round that found nothing idles: kSpin goes round again at once (yielding only to a thread
// that waits for the ApiLock), kYield gives the core away, kSleep waits a little on the progress
// thread's completion signal.
enum class IdleStep { kSpin, kYield, kSleep };

// The idle step after `*idle_rounds` rounds without progress (counted here).
inline IdleStep next_idle_step(int* idle_rounds, bool native_pending) {
  if (++*idle_rounds < kSpinsBeforeYield) return IdleStep::kSpin;
  return native_pending ? IdleStep::kYield : IdleStep::kSleep;
}

// Runs `round()` until it says kDone (true), or until `now()` has passed `deadline` before a round
// (false). Between rounds that found nothing it calls `idle(step)` with the step to take.
template <typename Round, typename Idle, typename Clock = std::chrono::steady_clock, typename Now>
bool run_wait_rounds(Round&& round, Idle&& idle, std::optional<typename Clock::time_point> deadline, Now&& now) {
  int idle_rounds = 0;
  for (;;) {
    if (deadline && now() > *deadline) return false;
    const WaitRound found = round();
    switch (found) {
      case WaitRound::kDone:
        return true;
      case WaitRound::kAdvanced:
        idle_rounds = 0;
        break;
      case WaitRound::kWaiting:
      case WaitRound::kWaitingOnOpenMpi:
        idle(next_idle_step(&idle_rounds, found == WaitRound::kWaitingOnOpenMpi));
        break;
    }
  }
}

// Without a deadline.
template <typename Round, typename Idle>
void run_wait_rounds(Round&& round, Idle&& idle) {
  run_wait_rounds(round, idle, std::nullopt, [] { return std::chrono::steady_clock::now(); });
}

}  // namespace lp::mpi
