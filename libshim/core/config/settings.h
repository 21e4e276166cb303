// The engine's LONGPIPE_* settings (settings.cpp): each one's name, meaning, parser and printer, read
// by config.cpp and described in the settings registry (registry.cpp). Private to config/.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "config.h"

namespace lp::config_settings {

inline constexpr const char* kPrefix = "LONGPIPE_";

// One LONGPIPE_* setting: how to read it into a Config and how to show it back.
struct Setting {
  const char* name;  // without the LONGPIPE_ prefix
  const char* meaning;
  std::function<void(Config&, const std::string&)> parse;
  std::function<std::string(const Config&)> show;
};

// Every setting, in the order `longpipe config` shows them.
const std::vector<Setting>& settings();

// Throws ConfigError naming the variable, the value and what it accepts.
[[noreturn]] void fail(const std::string& name, const std::string& value, const std::string& accepted);

// LONGPIPE_CONFIG's file: KEY=VALUE lines, keys with or without the prefix (registry.cpp). Throws
// ConfigError naming LONGPIPE_CONFIG for an unreadable file or a line without '='.
std::map<std::string, std::string> read_config_file(const std::string& path);

}  // namespace lp::config_settings
