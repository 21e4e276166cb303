#include "thread_pinning.h"

#include <hwloc.h>

#include <memory>

namespace lp {

std::string pin_current_thread(const PinPolicy& policy, int application_cpu) {
  if (policy.mode == PinPolicy::Mode::kOff) return "not pinned (LONGPIPE_PIN=off)";
  hwloc_topology_t topology = nullptr;
  if (hwloc_topology_init(&topology) != 0) return "not pinned: hwloc_topology_init failed";
  std::unique_ptr<hwloc_topology, void (*)(hwloc_topology_t)> owner(topology, hwloc_topology_destroy);
  if (hwloc_topology_load(topology) != 0) return "not pinned: hwloc_topology_load failed";

  hwloc_obj_t target = nullptr;
  if (policy.mode == PinPolicy::Mode::kCore) {
    target = hwloc_get_pu_obj_by_os_index(topology, static_cast<unsigned>(policy.core));
    if (target == nullptr) return "not pinned: LONGPIPE_PIN=" + std::to_string(policy.core) + " is not a CPU here";
  } else {
    const int cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
    if (cores <= 1) return "not pinned: one core";
    // The last core that does not hold the application's CPU.
    for (int i = cores - 1; i >= 0 && target == nullptr; --i) {
      hwloc_obj_t core = hwloc_get_obj_by_type(topology, HWLOC_OBJ_CORE, static_cast<unsigned>(i));
      if (application_cpu < 0 || !hwloc_bitmap_isset(core->cpuset, static_cast<unsigned>(application_cpu))) {
        target = core;
      }
    }
    if (target == nullptr) return "not pinned: no core free of the application's";
  }
  if (hwloc_set_cpubind(topology, target->cpuset, HWLOC_CPUBIND_THREAD) != 0) {
    return "not pinned: hwloc_set_cpubind refused";
  }
  char* text = nullptr;
  hwloc_bitmap_list_asprintf(&text, target->cpuset);
  std::string where = std::string("pinned to CPU ") + (text ? text : "?") + " (application was on CPU " +
                      std::to_string(application_cpu) + ")";
  free(text);
  return where;
}

}  // namespace lp
