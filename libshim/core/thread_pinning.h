// Pins the calling thread (the progress thread) with hwloc: LONGPIPE_PIN=auto puts it on a core
// other than the one the application was running on when the engine started (so the two do not
// compete for one core), `off` leaves it to the scheduler, a number names a logical CPU.
#pragma once

#include <string>

#include "config.h"

namespace lp {

// Returns a description for the statistics ("core 1", "not pinned: one core", ...). Never throws:
// placement is an optimisation.
std::string pin_current_thread(const PinPolicy& policy, int application_cpu);

}  // namespace lp
