// The settings registry: every LONGPIPE_* name that any part of LongPipe reads (the engine, which
// the PVM front end uses as it is, the MPI front end, the tools and the tests), with its part, kind, accepted values, default and
// meaning. It is data: each part still reads and interprets its own values (the engine through
// Config, the front ends through setting_value()); the registry names them, checks them and
// describes them (`longpipe config`, docs/configuration.md).
//
// Config::from_environment checks every LONGPIPE_* variable against it: an unknown name is an
// error that suggests the nearest known one, and every declared value is validated, so a misspelt
// or bad setting stops the program at start-up instead of being silently ignored.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lp::settings {

// Who reads the setting.
enum class Part { kCore, kMpi, kTools, kTests };

// What it is for.
enum class Kind {
  kUser,      // a setting users are expected to set
  kTuning,    // a knob of the engine's internals: the default suits; documented apart
  kTool,      // read by LongPipe's scripts and tools (the `longpipe` command, netem, benchmarks)
  kTestHook,  // set only by LongPipe's own tests
};

struct Declaration {
  std::string name;           // with the LONGPIPE_ prefix
  Part part = Part::kCore;
  Kind kind = Kind::kTuning;
  std::string accepted;       // the values it takes, in words
  std::string default_value;  // in words; "(none)" when unset means "not used"
  std::string meaning;        // one line
  // Throws ConfigError ("LONGPIPE_X='v' is invalid: expected ...") for a value the part refuses.
  std::function<void(const std::string&)> validate;
  bool secret = false;  // its value is never shown (the job key)
};

const char* part_name(Part part);
const char* kind_name(Kind kind);

// Every declaration: the engine's in `longpipe config`'s order, then the other parts'.
const std::vector<Declaration>& registry();

// The declaration of `name` (with the prefix), or nullptr.
const Declaration* find(std::string_view name);

// The declared name nearest to `name` by edit distance, if one is near enough to be a likely typo.
std::optional<std::string> nearest(std::string_view name);

// Throws ConfigError for the first LONGPIPE_* name in `variables` that the registry does not
// declare (saying so, with the nearest declared name when one is near enough to be meant), then
// validates the value of every declared name that the engine's settings table does not parse
// itself (the files', the gateway's, the front ends', tools' and tests').
void check(const std::map<std::string, std::string>& variables);

// The LONGPIPE_* variables of the process environment.
std::map<std::string, std::string> variables_in_environment();

// The LONGPIPE_* variables of the process environment, merged over LONGPIPE_CONFIG's file (the
// environment wins). Throws ConfigError for an unreadable or malformed file.
std::map<std::string, std::string> variables_in_effect();

// Where the value in effect of `name` comes from: "environment", "file" or "default".
std::string source_of(const std::string& name);

// The value in effect of a declared setting (environment, else LONGPIPE_CONFIG's file), or nothing
// when it is unset. Throws ConfigError if `name` is not declared (every name read must be) or the
// file is bad. For front ends, read once at start-up.
std::optional<std::string> setting_value(std::string_view name);

}  // namespace lp::settings
