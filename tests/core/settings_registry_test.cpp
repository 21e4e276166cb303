// The settings registry: every declaration complete, unknown names refused with the nearest known
// one, the other parts' values validated at start-up, and the accessor's sources.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>

#include "config.h"
#include "config_error.h"
#include "settings_registry.h"

using lp::Config;
using lp::ConfigError;
using lp::test::config_error_of;
namespace settings = lp::settings;

namespace {

std::string refusal(const std::string& name, const std::string& value) {
  const settings::Declaration* declaration = settings::find(name);
  REQUIRE(declaration != nullptr);
  try {
    declaration->validate(value);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// Sets an environment variable for one scope.
struct ScopedVariable {
  std::string name;
  ScopedVariable(std::string n, const std::string& value) : name(std::move(n)) { ::setenv(name.c_str(), value.c_str(), 1); }
  ~ScopedVariable() { ::unsetenv(name.c_str()); }
};

}  // namespace

TEST_CASE("every declaration has a name, part, kind, accepted values, a default and a meaning") {
  std::set<std::string> names;
  for (const auto& d : settings::registry()) {
    INFO(d.name);
    CHECK(d.name.rfind("LONGPIPE_", 0) == 0);
    CHECK(d.name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == std::string::npos);
    CHECK(names.insert(d.name).second);  // declared once
    CHECK_FALSE(d.meaning.empty());
    CHECK_FALSE(d.default_value.empty());
    CHECK_FALSE(d.accepted.empty());
    REQUIRE(d.validate);
    // A default that is a value (not a description such as "(none)") is one the setting accepts.
    if (d.default_value.front() != '(' && d.default_value.find(' ') == std::string::npos) {
      CHECK_NOTHROW(d.validate(d.default_value));
    }
    if (d.part != settings::Part::kCore) CHECK((d.kind != settings::Kind::kTuning));
  }
  for (const char* name : {"LONGPIPE_CARRIER", "LONGPIPE_KEY", "LONGPIPE_KEY_FILE", "LONGPIPE_CONFIG",
                           "LONGPIPE_GATEWAY", "LONGPIPE_MPI_SITES", "LONGPIPE_COLLECTIVES", "LONGPIPE_BUILD_DIR",
                           "LONGPIPE_TEST_SETTING"}) {
    CHECK(settings::find(name) != nullptr);
  }
  CHECK(settings::find("LONGPIPE_RTO_MIN_MS")->kind == settings::Kind::kTuning);
  CHECK(settings::find("LONGPIPE_CARRIER")->kind == settings::Kind::kUser);
  CHECK(settings::find("LONGPIPE_GATEWAY")->part == settings::Part::kCore);
  CHECK(settings::find("LONGPIPE_COLLECTIVES")->part == settings::Part::kMpi);
  CHECK(settings::find("LONGPIPE_LIBRARY")->kind == settings::Kind::kTestHook);
  CHECK(settings::find("LONGPIPE_KEY")->secret);
  // The engine's settings are described from its own table: its parser's words, its defaults.
  CHECK(settings::find("LONGPIPE_WINDOW_FULL")->accepted == "one of block, fail, drop-oldest, keep-latest");
  CHECK(settings::find("LONGPIPE_WINDOW_FULL")->default_value == "block");
  CHECK(settings::find("LONGPIPE_STATS")->default_value == "(none)");
}

TEST_CASE("an unknown LONGPIPE_ name is an error that suggests the nearest known one") {
  CHECK(config_error_of({{"LONGPIPE_WINDOW_BYTE", "5"}}).rfind(
            "LONGPIPE_WINDOW_BYTE is not a LongPipe setting; did you mean LONGPIPE_WINDOW_BYTES?", 0) == 0);
  CHECK(config_error_of({{"LONGPIPE_CARIER", "udp"}}).find("did you mean LONGPIPE_CARRIER?") != std::string::npos);
  CHECK(config_error_of({{"LONGPIPE_RTO_MINMS", "5"}}).find("did you mean LONGPIPE_RTO_MIN_MS?") != std::string::npos);
  CHECK(config_error_of({{"LONGPIPE_carrier", "udp"}}).find("did you mean LONGPIPE_CARRIER?") != std::string::npos);
  CHECK(config_error_of({{"LONGPIPE_MPI_SITE", "0,1"}}).find("did you mean LONGPIPE_MPI_SITES?") != std::string::npos);
  // Nothing near: no guess, but the list's command.
  const std::string far = config_error_of({{"LONGPIPE_PVM_SOMETHING", "5"}});
  CHECK(far.find("LONGPIPE_PVM_SOMETHING is not a LongPipe setting") == 0);
  CHECK(far.find("did you mean") == std::string::npos);
  CHECK(far.find("longpipe config --all") != std::string::npos);
  CHECK(settings::nearest("LONGPIPE_STREAM") == std::optional<std::string>("LONGPIPE_STREAMS"));
  CHECK_FALSE(settings::nearest("LONGPIPE_XYZZY_PLUGH"));
  // Other prefixes are not ours.
  CHECK(config_error_of({{"LONGPIPEX", "1"}, {"OTHER_VARIABLE", "1"}}).empty());
}

TEST_CASE("an unknown name in LONGPIPE_CONFIG's file is refused too") {
  const std::string path = "settings_registry_test.conf";
  std::ofstream(path) << "CARRIER=tcp\nWINDOW_MESAGES=10\n";
  CHECK(config_error_of({{"LONGPIPE_CONFIG", path}}).find("did you mean LONGPIPE_WINDOW_MESSAGES?") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("a bad value of a front-end, tool or test setting is refused at start-up, naming it") {
  CHECK(config_error_of({{"LONGPIPE_COLLECTIVES", "tree"}}) ==
        "LONGPIPE_COLLECTIVES='tree' is invalid: expected site or native");
  CHECK(config_error_of({{"LONGPIPE_MPI_SITES", "0,,1"}}).find("LONGPIPE_MPI_SITES='0,,1' is invalid") == 0);
  CHECK(config_error_of({{"LONGPIPE_MPI_SITES", "a,b"}}).find("LONGPIPE_MPI_SITES") == 0);
  CHECK(config_error_of({{"LONGPIPE_MPI_SITES", "0,1,"}}).find("LONGPIPE_MPI_SITES") == 0);
  CHECK(config_error_of({{"LONGPIPE_MPI_SITES", "-1,0"}}).find("LONGPIPE_MPI_SITES") == 0);
  CHECK(config_error_of({{"LONGPIPE_MPI_SITE_RTT_MS", "0"}}).find("from 0.01 to 100000") != std::string::npos);
  CHECK(config_error_of({{"LONGPIPE_MPI_SITE_RTT_MS", "fast"}}).find("LONGPIPE_MPI_SITE_RTT_MS='fast'") == 0);
  CHECK(config_error_of({{"LONGPIPE_GATEWAY", "relative/socket"}}).find("LONGPIPE_GATEWAY='relative/socket' is invalid") == 0);
  CHECK(config_error_of({{"LONGPIPE_GATEWAY", "/" + std::string(200, 'a')}}).find("at most 107 bytes") != std::string::npos);
  CHECK(config_error_of({{"LONGPIPE_APP_SECONDS", "soon"}}).find("LONGPIPE_APP_SECONDS") == 0);
  CHECK(config_error_of({{"LONGPIPE_MPI_FRONT_END", "yes"}}).find("0 or 1") != std::string::npos);
  // Good values, and an empty one (the front ends read it as unset), pass.
  CHECK(config_error_of({{"LONGPIPE_COLLECTIVES", "native"}, {"LONGPIPE_MPI_SITES", "0,0,1,1"},
                  {"LONGPIPE_MPI_SITE_RTT_MS", "0.5"}, {"LONGPIPE_GATEWAY", "/run/longpipe/gateway.sock"},
                  {"LONGPIPE_TEST_SETTING", "two words"}, {"LONGPIPE_BUILD_DIR", "/b"}})
            .empty());
  CHECK(config_error_of({{"LONGPIPE_MPI_SITES", "auto"}, {"LONGPIPE_COLLECTIVES", ""}}).empty());
  CHECK(refusal("LONGPIPE_COLLECTIVES", "site").empty());
  CHECK(refusal("LONGPIPE_WINDOW_FULL", "sometimes").find("LONGPIPE_WINDOW_FULL='sometimes'") == 0);
}

TEST_CASE("setting_value: the environment, else LONGPIPE_CONFIG's file; only declared names") {
  CHECK_THROWS_WITH(settings::setting_value("LONGPIPE_NOT_DECLARED"), Catch::Contains("not declared"));
  CHECK_FALSE(settings::setting_value("LONGPIPE_COLLECTIVES"));
  const std::string path = "settings_value_test.conf";
  std::ofstream(path) << "COLLECTIVES=native\nMPI_SITES=0,1\n";
  {
    ScopedVariable file("LONGPIPE_CONFIG", path);
    CHECK(settings::setting_value("LONGPIPE_COLLECTIVES") == std::optional<std::string>("native"));
    CHECK(settings::source_of("LONGPIPE_COLLECTIVES") == "file");
    ScopedVariable sites("LONGPIPE_MPI_SITES", "1,0");
    CHECK(settings::setting_value("LONGPIPE_MPI_SITES") == std::optional<std::string>("1,0"));
    CHECK(settings::source_of("LONGPIPE_MPI_SITES") == "environment");
    CHECK(settings::source_of("LONGPIPE_CARRIER") == "default");
    CHECK(settings::variables_in_effect().at("LONGPIPE_COLLECTIVES") == "native");
  }
  std::remove(path.c_str());
}
