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

#include <string>

#include "config.h"

namespace lp {

// Returns a description for the statistics ("pinned to CPU 1 ...", "not pinned: ...", ...).
// Never throws: placement is an optimisation.
std::string pin_current_thread(const PinPolicy& policy, int application_cpu);

// Switches the calling thread to SCHED_BATCH; returns a description for the statistics. Never
// throws: a refusal leaves the thread as it was.
std::string use_batch_scheduling_for_current_thread();

}  // namespace lp
