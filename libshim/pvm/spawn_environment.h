// What pvm_spawn passes on, so that spawned tasks run LongPipe too: libpvm3 sends the variables
// named in PVM_EXPORT (colon-separated) with every spawn request, and the pvmd that starts the
// task sets them. LongPipe adds LD_PRELOAD and the library's LONGPIPE_* variables to that list.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config.h"

namespace lp::pvm {

// Names from `environment` ("NAME=value" strings) that spawned tasks need: LD_PRELOAD and every
// LONGPIPE_* variable except LONGPIPE_STATS (one file per task) and the tools' own (netem/wan, build).
std::vector<std::string> names_to_export(const std::vector<std::string_view>& environment);

// `current` (a PVM_EXPORT value) with every name of `names` it lacks appended.
std::string merged_export_list(std::string_view current, const std::vector<std::string>& names);

// Applies both to this process's environment (setenv PVM_EXPORT), unless PVM_EXPORT has them already.
void export_longpipe_environment();

// The engine's configuration for this task (Config::from_environment). With neither LONGPIPE_KEY
// nor LONGPIPE_KEY_FILE set, this task is the first of its job: a random job key is made and set
// as LONGPIPE_KEY in this process's environment, so export_longpipe_environment passes it on to
// every task it spawns, and they to theirs. Tasks started otherwise make keys of their own.
Config job_config();

}  // namespace lp::pvm
