// The registry's data beyond the engine's own settings table (settings.h): which engine settings
// are user settings, and the declarations of the names the engine does not read into Config (the
// config file and key file, the front ends', tools' and tests'). Private to config/.
#pragma once

#include <string_view>
#include <vector>

#include "settings_registry.h"

namespace lp::config_settings {

// Whether an engine setting (name without the prefix) is one users are expected to set; the
// others are tuning knobs.
bool is_user_setting(std::string_view bare_name);

// Every declaration that settings() does not carry, in the order `longpipe config` shows them.
std::vector<settings::Declaration> other_declarations();

}  // namespace lp::config_settings
