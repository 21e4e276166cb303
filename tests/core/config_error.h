// The message of the ConfigError that Config::from_variables throws for `variables`, or "" when it
// accepts them: the config tests compare messages, not exception types.
#pragma once

#include <map>
#include <string>

#include "config.h"

namespace lp::test {

inline std::string config_error_of(const std::map<std::string, std::string>& variables) {
  try {
    Config::from_variables(variables);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace lp::test
