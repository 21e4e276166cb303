// Placement and scheduling of the progress thread.
//
// Placement (LONGPIPE_PIN): `auto` pins it with hwloc to a core other than the one the application
// was running on when the engine started, but only on machines with enough cores to spare
// (kMinCoresForAutoPinning); on smaller ones it is left to the scheduler. `off` never pins, a
// number names a logical CPU.
//
// Scheduling: the progress thread runs as SCHED_BATCH, so that waking it (a send, an arriving
// segment) does not preempt the thread that is running: work piles up and is handled in batches.
#pragma once

#include <sched.h>

#include <optional>
#include <string>

#include "config.h"

namespace lp {

// Where the progress thread is to run, decided before the thread exists.
struct PinPlan {
  std::optional<cpu_set_t> cpus;  // none: leave the thread to the scheduler
  std::string description;        // for the statistics ("pinned to CPU 1 ...", "not pinned: ...")
};

// Decides the placement from the machine's topology. Call it on the thread that starts the
// progress thread, never on the progress thread: hwloc reads the environment (getenv) while it
// loads the topology, and a getenv racing with the application's setenv crashes (seen in CI: the
// progress thread inside hwloc's getenv while pvm_spawn's front end set PVM_EXPORT). Never throws:
// placement is an optimisation.
PinPlan plan_pinning(const PinPolicy& policy, int application_cpu);

// Applies a plan to the calling thread with one system call (no environment, no hwloc); returns
// the plan's description, or why the system refused it. Never throws.
std::string pin_current_thread(const PinPlan& plan);

// Switches the calling thread to SCHED_BATCH; returns a description for the statistics. Never
// throws: a refusal leaves the thread as it was.
std::string use_batch_scheduling_for_current_thread();

}  // namespace lp
