#include "spawn_environment.h"

#include <cstdlib>
#include <unistd.h>

#include <algorithm>

#include "job_key.h"
#include "settings_registry.h"

extern char** environ;

namespace lp::pvm {
namespace {

// LONGPIPE_* variables not passed on: those configuring the tools (netem/wan, the build) rather
// than the library, and LONGPIPE_STATS, a file every spawned task would overwrite (set it per task).
constexpr std::string_view kToolVariables[] = {"LONGPIPE_WAN", "LONGPIPE_BUILD_DIR", "LONGPIPE_STATS"};

std::vector<std::string> split_names(std::string_view list) {
  std::vector<std::string> names;
  while (!list.empty()) {
    const auto colon = list.find(':');
    const auto name = list.substr(0, colon);
    if (!name.empty()) names.emplace_back(name);
    if (colon == std::string_view::npos) break;
    list.remove_prefix(colon + 1);
  }
  return names;
}

}  // namespace

std::vector<std::string> names_to_export(const std::vector<std::string_view>& environment) {
  std::vector<std::string> names;
  for (const std::string_view variable : environment) {
    const auto equals = variable.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string_view name = variable.substr(0, equals);
    const bool wanted = name == "LD_PRELOAD" ||
                        (name.starts_with("LONGPIPE_") &&
                         std::find(std::begin(kToolVariables), std::end(kToolVariables), name) ==
                             std::end(kToolVariables));
    if (wanted) names.emplace_back(name);
  }
  return names;
}

std::string merged_export_list(std::string_view current, const std::vector<std::string>& names) {
  auto present = split_names(current);
  std::string merged(current);
  for (const std::string& name : names) {
    if (std::find(present.begin(), present.end(), name) != present.end()) continue;
    if (!merged.empty() && merged.back() != ':') merged += ':';
    merged += name;
    present.push_back(name);
  }
  return merged;
}

void export_longpipe_environment() {
  std::vector<std::string_view> environment;
  for (char** variable = environ; *variable != nullptr; ++variable) environment.emplace_back(*variable);
  const char* current = std::getenv("PVM_EXPORT");
  const std::string merged = merged_export_list(current ? current : "", names_to_export(environment));
  // Unchanged, it is left alone: a setenv while the engine's thread runs could race with a getenv
  // inside a library that thread calls (the environment is not thread-safe to change).
  if (!merged.empty() && (current == nullptr || merged != current)) ::setenv("PVM_EXPORT", merged.c_str(), 1);
}

Config job_config() {
  // A key in LONGPIPE_CONFIG's file counts: the job's tasks read the same file.
  if (!settings::setting_value("LONGPIPE_KEY") && !settings::setting_value("LONGPIPE_KEY_FILE")) {
    ::setenv("LONGPIPE_KEY", make_job_key().c_str(), 1);
  }
  // Exported now, before the engine's thread exists, so that pvm_spawn finds nothing to change.
  export_longpipe_environment();
  return Config::from_environment();
}

}  // namespace lp::pvm
