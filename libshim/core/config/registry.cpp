// The settings registry (settings_registry.h): the engine's settings table (settings.h) and the
// other parts' declarations (declarations.h) as one list; unknown names and their nearest known
// one; the values in effect from the environment and LONGPIPE_CONFIG's file.
#include "settings_registry.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>

#include "config.h"
#include "config/declarations.h"
#include "config/settings.h"

extern char** environ;

namespace lp {
namespace config_settings {

// KEY=VALUE lines; '#' starts a comment; keys with or without the LONGPIPE_ prefix.
std::map<std::string, std::string> read_config_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("CONFIG", path, "a readable file of KEY=VALUE lines");
  std::map<std::string, std::string> values;
  std::string line;
  int number = 0;
  auto trim = [](const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    const auto e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  };
  while (std::getline(in, line)) {
    ++number;
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    const auto equals = line.find('=');
    if (equals == std::string::npos) {
      fail("CONFIG", path, "KEY=VALUE lines (line " + std::to_string(number) + " has no '=')");
    }
    std::string key = trim(line.substr(0, equals));
    if (key.rfind(kPrefix, 0) != 0) key = kPrefix + key;
    values[key] = trim(line.substr(equals + 1));
  }
  return values;
}

}  // namespace config_settings

namespace settings {
namespace {

using config_settings::kPrefix;

// The engine's own setting, described from its table: the default is what it shows for a default
// Config, the accepted values what its parser says when it refuses an empty value.
Declaration from_engine_setting(const config_settings::Setting& setting) {
  Declaration declaration;
  declaration.name = std::string(kPrefix) + setting.name;
  declaration.part = Part::kCore;
  declaration.kind = config_settings::is_user_setting(setting.name) ? Kind::kUser : Kind::kTuning;
  declaration.meaning = setting.meaning;
  declaration.secret = declaration.name == std::string(kPrefix) + "KEY";
  const std::string fallback = setting.show(Config{});
  declaration.default_value = fallback.empty() ? "(none)" : fallback;
  declaration.accepted = "any text";
  try {
    Config scratch;
    setting.parse(scratch, "");
  } catch (const ConfigError& refusal) {
    const std::string text = refusal.what();
    const auto at = text.find("expected ");
    declaration.accepted = at == std::string::npos ? text : text.substr(at + 9);
  }
  auto parse = setting.parse;
  declaration.validate = [parse](const std::string& value) {
    Config scratch;
    parse(scratch, value);
  };
  return declaration;
}

bool read_by_engine_table(const std::string& name) {
  for (const auto& setting : config_settings::settings()) {
    if (name == std::string(kPrefix) + setting.name) return true;
  }
  return false;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const bool same = std::toupper(static_cast<unsigned char>(a[i - 1])) ==
                        std::toupper(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::map<std::string, std::string> file_variables(const std::map<std::string, std::string>& environment) {
  const auto file = environment.find(std::string(kPrefix) + "CONFIG");
  if (file == environment.end() || file->second.empty()) return {};
  return config_settings::read_config_file(file->second);
}

}  // namespace

std::map<std::string, std::string> variables_in_environment() {
  std::map<std::string, std::string> variables;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text(*entry);
    if (text.rfind(kPrefix, 0) != 0) continue;
    const auto equals = text.find('=');
    if (equals != std::string::npos) variables[text.substr(0, equals)] = text.substr(equals + 1);
  }
  return variables;
}

const char* part_name(Part part) {
  switch (part) {
    case Part::kCore: return "engine";
    case Part::kMpi: return "MPI front end";
    case Part::kTools: return "tools";
    case Part::kTests: return "tests";
  }
  return "?";
}

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kUser: return "user setting";
    case Kind::kTuning: return "tuning knob";
    case Kind::kTool: return "tool variable";
    case Kind::kTestHook: return "test hook";
  }
  return "?";
}

const std::vector<Declaration>& registry() {
  static const std::vector<Declaration> all = [] {
    std::vector<Declaration> list;
    for (const auto& setting : config_settings::settings()) list.push_back(from_engine_setting(setting));
    // A name the engine's table reads is described by it: the table is what parses the value.
    for (auto& declaration : config_settings::other_declarations()) {
      if (!read_by_engine_table(declaration.name)) list.push_back(std::move(declaration));
    }
    return list;
  }();
  return all;
}

const Declaration* find(std::string_view name) {
  for (const auto& declaration : registry()) {
    if (declaration.name == name) return &declaration;
  }
  return nullptr;
}

std::optional<std::string> nearest(std::string_view name) {
  const std::string_view bare = name.substr(std::min(name.size(), std::char_traits<char>::length(kPrefix)));
  // A typo changes a few letters: at most a third of the name, and at least two may differ.
  const std::size_t limit = std::max<std::size_t>(2, bare.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const auto& declaration : registry()) {
    const std::size_t distance = edit_distance(name, declaration.name);
    if (distance < best_distance) {
      best = declaration.name;
      best_distance = distance;
    }
  }
  return best;
}

void check(const std::map<std::string, std::string>& variables) {
  for (const auto& [name, value] : variables) {
    if (name.rfind(kPrefix, 0) != 0 || find(name) != nullptr) continue;
    std::string message = name + " is not a LongPipe setting";
    if (const auto suggestion = nearest(name)) message += "; did you mean " + *suggestion + "?";
    throw ConfigError(message + " (`longpipe config --all` lists them)");
  }
  for (const auto& [name, value] : variables) {
    if (read_by_engine_table(name)) continue;  // Config::from_variables parses those
    if (const Declaration* declaration = find(name)) declaration->validate(value);
  }
}

std::map<std::string, std::string> variables_in_effect() {
  const auto environment = variables_in_environment();
  auto variables = file_variables(environment);
  for (const auto& [name, value] : environment) variables[name] = value;  // the environment wins
  return variables;
}

std::string source_of(const std::string& name) {
  const auto environment = variables_in_environment();
  if (environment.count(name) != 0) return "environment";
  if (file_variables(environment).count(name) != 0) return "file";
  return "default";
}

std::optional<std::string> setting_value(std::string_view name) {
  if (find(name) == nullptr) {
    throw ConfigError(std::string(name) + " is read but not declared in the settings registry");
  }
  const std::string key(name);
  if (const char* value = std::getenv(key.c_str())) return std::string(value);
  const auto in_file = file_variables(variables_in_environment());
  if (const auto found = in_file.find(key); found != in_file.end()) return found->second;
  return std::nullopt;
}

}  // namespace settings
}  // namespace lp
