#include "driver/thread_pinning.h"

#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#include <sched.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace lp {
namespace {

// LONGPIPE_PIN=auto pins only on machines with at least this many cores. Pinning the progress
// thread away from the application helps when cores are to spare; on a small machine shared with
// the peer process, a link emulator or other jobs it mostly stops the scheduler from moving the
// thread to whichever core is free.
constexpr int kMinCoresForAutoPinning = 4;

}  // namespace

PinPlan plan_pinning(const PinPolicy& policy, int application_cpu) {
  if (policy.mode == PinPolicy::Mode::kOff) return {std::nullopt, "not pinned (LONGPIPE_PIN=off)"};
  hwloc_topology_t topology = nullptr;
  if (hwloc_topology_init(&topology) != 0) return {std::nullopt, "not pinned: hwloc_topology_init failed"};
  std::unique_ptr<hwloc_topology, void (*)(hwloc_topology_t)> owner(topology, hwloc_topology_destroy);
  if (hwloc_topology_load(topology) != 0) return {std::nullopt, "not pinned: hwloc_topology_load failed"};

  hwloc_obj_t target = nullptr;
  if (policy.mode == PinPolicy::Mode::kCore) {
    target = hwloc_get_pu_obj_by_os_index(topology, static_cast<unsigned>(policy.core));
    if (target == nullptr) {
      return {std::nullopt, "not pinned: LONGPIPE_PIN=" + std::to_string(policy.core) + " is not a CPU here"};
    }
  } else {
    const int cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
    if (cores < kMinCoresForAutoPinning) {
      return {std::nullopt, "not pinned: " + std::to_string(cores) + " core(s), fewer than " +
                                std::to_string(kMinCoresForAutoPinning) +
                                " (LONGPIPE_PIN=auto leaves small machines to the scheduler)"};
    }
    // The last core that does not hold the application's CPU.
    for (int i = cores - 1; i >= 0 && target == nullptr; --i) {
      hwloc_obj_t core = hwloc_get_obj_by_type(topology, HWLOC_OBJ_CORE, static_cast<unsigned>(i));
      if (application_cpu < 0 || !hwloc_bitmap_isset(core->cpuset, static_cast<unsigned>(application_cpu))) {
        target = core;
      }
    }
    if (target == nullptr) return {std::nullopt, "not pinned: no core free of the application's"};
  }
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (hwloc_cpuset_to_glibc_sched_affinity(topology, target->cpuset, &cpus, sizeof cpus) != 0) {
    return {std::nullopt, "not pinned: the CPU set does not fit cpu_set_t"};
  }
  char* text = nullptr;
  hwloc_bitmap_list_asprintf(&text, target->cpuset);
  std::string where = std::string("pinned to CPU ") + (text ? text : "?") + " (application was on CPU " +
                      std::to_string(application_cpu) + ")";
  free(text);
  return {cpus, std::move(where)};
}

std::string pin_current_thread(const PinPlan& plan) {
  if (!plan.cpus) return plan.description;
  if (::sched_setaffinity(0, sizeof *plan.cpus, &*plan.cpus) != 0) {
    return std::string("not pinned: sched_setaffinity refused (") + std::strerror(errno) + ")";
  }
  return plan.description;
}

std::string use_batch_scheduling_for_current_thread() {
  // SCHED_BATCH keeps the thread's share of the CPU but gives up wake-up preemption: woken while
  // another thread runs on its CPU, it waits for that thread to block or for the next tick. The
  // progress thread is woken for every send and every arriving segment; preempting the sender
  // each time makes it carry one message per wake-up, several times slower per message than
  // carrying them in batches.
  const sched_param parameters{};
  if (::sched_setscheduler(0, SCHED_BATCH, &parameters) != 0) {
    return std::string("default scheduling (SCHED_BATCH refused: ") + std::strerror(errno) + ")";
  }
  return "SCHED_BATCH";
}

}  // namespace lp
