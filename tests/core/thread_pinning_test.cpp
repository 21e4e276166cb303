// Placement and scheduling of the progress thread (thread_pinning.h), checked on the calling
// thread of a fresh std::thread so that the test runner's own thread is left alone.
#include <catch2/catch.hpp>

#include <hwloc.h>
#include <sched.h>

#include <memory>
#include <string>
#include <thread>

#include "driver/thread_pinning.h"

namespace {

int core_count() {
  hwloc_topology_t topology = nullptr;
  REQUIRE(hwloc_topology_init(&topology) == 0);
  std::unique_ptr<hwloc_topology, void (*)(hwloc_topology_t)> owner(topology, hwloc_topology_destroy);
  REQUIRE(hwloc_topology_load(topology) == 0);
  return hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
}

struct Outcome {
  std::string description;
  cpu_set_t before{}, after{};
  int policy = -1;
};

// Runs `action` on a new thread; returns what it said and the thread's CPU set before and after.
template <typename Action>
Outcome on_new_thread(Action action) {
  Outcome outcome;
  std::thread([&] {
    sched_getaffinity(0, sizeof outcome.before, &outcome.before);
    outcome.description = action();
    sched_getaffinity(0, sizeof outcome.after, &outcome.after);
    outcome.policy = sched_getscheduler(0);
  }).join();
  return outcome;
}

}  // namespace

TEST_CASE("LONGPIPE_PIN=off leaves the thread where it was") {
  const lp::PinPlan off = lp::plan_pinning({lp::PinPolicy::Mode::kOff, -1}, 0);
  CHECK_FALSE(off.cpus.has_value());
  const Outcome outcome = on_new_thread([&] { return lp::pin_current_thread(off); });
  CHECK(outcome.description == "not pinned (LONGPIPE_PIN=off)");
  CHECK(CPU_EQUAL(&outcome.before, &outcome.after));
}

TEST_CASE("LONGPIPE_PIN=<cpu> binds the thread to that CPU") {
  const lp::PinPlan cpu0 = lp::plan_pinning({lp::PinPolicy::Mode::kCore, 0}, 0);
  const Outcome outcome = on_new_thread([&] { return lp::pin_current_thread(cpu0); });
  INFO(outcome.description);
  CHECK(outcome.description.rfind("pinned to CPU 0", 0) == 0);
  CHECK(CPU_COUNT(&outcome.after) == 1);
  CHECK(CPU_ISSET(0, &outcome.after));
}

TEST_CASE("LONGPIPE_PIN=auto pins away from the application only on machines with cores to spare") {
  const int cores = core_count();
  const lp::PinPlan automatic = lp::plan_pinning({lp::PinPolicy::Mode::kAuto, -1}, 0);
  const Outcome outcome = on_new_thread([&] { return lp::pin_current_thread(automatic); });
  INFO(cores << " core(s): " << outcome.description);
  if (cores < 4) {
    CHECK(outcome.description.rfind("not pinned: ", 0) == 0);
    CHECK(CPU_EQUAL(&outcome.before, &outcome.after));
  } else {
    CHECK(outcome.description.rfind("pinned to CPU", 0) == 0);
    CHECK_FALSE(CPU_ISSET(0, &outcome.after));
  }
}

TEST_CASE("a CPU that does not exist is named, and the thread is left alone") {
  const lp::PinPlan missing = lp::plan_pinning({lp::PinPolicy::Mode::kCore, 4095}, 0);
  CHECK_FALSE(missing.cpus.has_value());
  CHECK(missing.description == "not pinned: LONGPIPE_PIN=4095 is not a CPU here");
  const Outcome outcome = on_new_thread([&] { return lp::pin_current_thread(missing); });
  CHECK(CPU_EQUAL(&outcome.before, &outcome.after));
}

TEST_CASE("the progress thread's scheduling is SCHED_BATCH") {
  const Outcome outcome = on_new_thread([] { return lp::use_batch_scheduling_for_current_thread(); });
  CHECK(outcome.description == "SCHED_BATCH");
  CHECK(outcome.policy == SCHED_BATCH);
}
