// The LONGPIPE_* settings (settings.cpp): each one's name, meaning, parser and printer, read and
// described by config.cpp. Private to config/.
#pragma once

#include <functional>
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

}  // namespace lp::config_settings
