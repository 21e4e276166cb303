// The registry's declarations of the LONGPIPE_* names that the engine's settings table does not
// read into Config: the engine's file names and its gateway, the MPI front end's, the tools' and
// the tests'. Data only: each part reads and interprets its own values; the validators here refuse
// what that part would refuse, so that a bad value stops the program at start-up.
#include "config/declarations.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "config.h"

namespace lp::config_settings {
namespace {

using settings::Declaration;
using settings::Kind;
using settings::Part;
using Validator = std::function<void(const std::string&)>;
// A kind of value: makes the validator of one name from the name and its accepted text.
using Rule = std::function<Validator(const std::string& name, const std::string& accepted)>;

// Engine settings that users are expected to set; the rest of settings() are tuning knobs.
constexpr std::string_view kUserSettings[] = {
    "CONFIG", "KEY", "KEY_FILE", "CARRIER", "BANDWIDTH", "RTT", "ENCRYPTION", "LISTEN", "GATEWAY",
    "STATS", "PATH_CACHE", "PIN", "WINDOW_FULL", "MAX_MESSAGE", "DEAD_PEER_MS", "SILENT_PATH_MS",
};

[[noreturn]] void refuse(const std::string& name, const std::string& value, const std::string& accepted) {
  throw ConfigError(name + "='" + value + "' is invalid: expected " + accepted);
}

// Each rule refuses a value with the declaration's accepted text.
Rule rule(std::function<bool(const std::string&)> good) {
  return [good](const std::string& name, const std::string& accepted) -> Validator {
    return [=](const std::string& value) {
      if (!good(value)) refuse(name, value, accepted);
    };
  };
}

Rule one_of(std::vector<std::string> choices) {
  return rule([choices](const std::string& value) {
    for (const auto& choice : choices) {
      if (value == choice) return true;
    }
    return false;
  });
}

Rule number_between(double min, double max) {
  return rule([=](const std::string& value) {
    errno = 0;
    char* end = nullptr;
    const double number = std::strtod(value.c_str(), &end);
    return !value.empty() && errno == 0 && *end == '\0' && std::isfinite(number) && number >= min && number <= max;
  });
}

Rule whole_number_between(long long min, long long max) {
  return rule([=](const std::string& value) {
    errno = 0;
    char* end = nullptr;
    const long long number = std::strtoll(value.c_str(), &end, 10);
    return !value.empty() && errno == 0 && *end == '\0' && number >= min && number <= max;
  });
}

// 'auto', or a comma list of site numbers (how many, and their range, depend on the job's size:
// the MPI front end checks those).
Rule site_list() {
  return rule([](const std::string& value) {
    if (value == "auto") return true;
    std::stringstream in(value);
    bool any = false;
    for (std::string item; std::getline(in, item, ',');) {
      if (item.empty() || item.size() > 9 || item.find_first_not_of("0123456789") != std::string::npos) return false;
      any = true;
    }
    return any && value.back() != ',';
  });
}

Rule non_empty() {
  return rule([](const std::string& value) { return !value.empty(); });
}

// A Unix domain socket's path: absolute, and short enough for sockaddr_un (108 bytes with the NUL).
Rule socket_path() {
  return rule([](const std::string& value) {
    return !value.empty() && value.front() == '/' && value.back() != '/' && value.size() <= 107;
  });
}

// LONGPIPE_SITE_ROUTES: SITE=A.B.C.D/N[@A.B.C.D] entries, separated by commas (libshim/dial).
Rule site_routes() {
  return rule([](const std::string& value) {
    static const std::regex entry(
        R"([^=,\s]+=(\d{1,3}\.){3}\d{1,3}/\d{1,2}(@(\d{1,3}\.){3}\d{1,3})?)");
    std::stringstream in(value);
    bool any = false;
    for (std::string item; std::getline(in, item, ',');) {
      if (!std::regex_match(item, entry)) return false;
      any = true;
    }
    return any && value.back() != ',';
  });
}

Rule any_text() {
  return rule([](const std::string&) { return true; });
}

// The front ends, tools and tests read an empty value as unset (their default), so it is accepted.
Declaration declare(const char* bare, Part part, Kind kind, const char* accepted, const char* fallback,
                    const char* meaning, const Rule& rule) {
  const std::string name = std::string("LONGPIPE_") + bare;
  Validator check = rule(name, accepted);
  if (part != Part::kCore) {
    check = [check](const std::string& value) {
      if (!value.empty()) check(value);
    };
  }
  return Declaration{name, part, kind, accepted, fallback, meaning, check};
}

}  // namespace

bool is_user_setting(std::string_view bare_name) {
  for (const auto user : kUserSettings) {
    if (user == bare_name) return true;
  }
  return false;
}

std::vector<Declaration> other_declarations() {
  return {
      // The engine's names that Config::from_variables handles itself (files), and its gateway.
      declare("CONFIG", Part::kCore, Kind::kUser, "a file of KEY=VALUE lines", "(none)",
              "settings file read before the environment (the environment wins; '#' starts a comment)", any_text()),
      declare("KEY_FILE", Part::kCore, Kind::kUser, "a private file (mode 0600) of at least 16 bytes", "(none)",
              "file holding the job's shared secret, instead of LONGPIPE_KEY", non_empty()),
      declare("GATEWAY", Part::kCore, Kind::kUser, "an absolute Unix socket path (at most 107 bytes)", "(none)",
              "the site gateway's socket; unset = direct sessions", socket_path()),
      // The MPI front end (libshim/mpi).
      declare("MPI_SITES", Part::kMpi, Kind::kUser,
              "auto, or a comma-separated list of site numbers, one per rank of MPI_COMM_WORLD (e.g. 0,0,1,1)",
              "auto", "the site of each MPI rank: auto groups hosts by measured round trip, a list forces them",
              site_list()),
      declare("MPI_SITE_RTT_MS", Part::kMpi, Kind::kUser, "a round trip in milliseconds from 0.01 to 100000", "5",
              "automatic sites: hosts closer than this round trip are one site", number_between(0.01, 100000)),
      declare("COLLECTIVES", Part::kMpi, Kind::kUser, "site or native", "site",
              "MPI collectives across sites: site = in two levels (one exchange per site pair over the long "
              "link), native = Open MPI's own algorithms",
              one_of({"site", "native"})),
      // The dial library (libshim/dial, liblongpipe-dial.so), in every process of a job whose
      // hosts are private; liblongpipe.so only checks its values.
      declare("SITE_ROUTES", Part::kTools, Kind::kUser,
              "comma-separated SITE=A.B.C.D/N[@GATEWAY] entries (e.g. S2=10.2.0.0/24@10.2.0.1)", "(none)",
              "the dial preload (liblongpipe-dial.so): each site's network; a TCP connect() to another "
              "site's network goes through LONGPIPE_GATEWAY, and @GATEWAY is the address the site gateway "
              "dials from",
              site_routes()),
      declare("DIAL_LOG", Part::kTools, Kind::kUser, "0 or 1", "0",
              "the dial preload (liblongpipe-dial.so): 1 = one line on stderr per connection it redirects or "
              "accepts",
              one_of({"0", "1"})),
      // The `longpipe` command, netem and the benchmarks.
      declare("BUILD_DIR", Part::kTools, Kind::kTool, "a directory", "build in the checkout",
              "the build tree that `longpipe`, netem/wan and the benchmarks use", any_text()),
      declare("WAN", Part::kTools, Kind::kTool, "the path of netem/wan", "netem/wan in the checkout",
              "the emulated link's command that mpi-sites, pvm-sites and the benchmarks call", any_text()),
      declare("DEMO_TIMES", Part::kTools, Kind::kTool, "a file name", "(none)",
              "file that the demos append each phase's duration to", any_text()),
      // LongPipe's own tests.
      declare("LIBRARY", Part::kTests, Kind::kTestHook, "the path of liblongpipe.so", "(none)",
              "the library that the PVM and MPI test scripts preload", any_text()),
      declare("MPI_FRONT_END", Part::kTests, Kind::kTestHook, "0 or 1", "0",
              "1: the library under test has the MPI front end (tests/mpi/transcripts.sh)", one_of({"0", "1"})),
      declare("APP_SECONDS", Part::kTests, Kind::kTestHook, "whole seconds from 1 to 86400", "150",
              "time limit of one MPI application test run (tests/mpi/apps/run_app.sh)", whole_number_between(1, 86400)),
      declare("TEST_SETTING", Part::kTests, Kind::kTestHook, "any text", "(none)",
              "a stand-in setting that tests pass through `longpipe run` and mpi-sites to see it arrive",
              any_text()),
  };
}

}  // namespace lp::config_settings
